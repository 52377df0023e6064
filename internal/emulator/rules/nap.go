package rules

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/machines"
)

// Node auto-provisioning (NAP) for TPUs: what node pool GKE's NAP makes of a Pod's TPU request,
// what that pool counts against the cluster's resource limits, and how Cluster.autoscaling is
// validated. The loop that watches Pods and creates the pools is package nodeagent's.
//
// Sources:
//   - NAP reads "Pending Pods' node affinities and label selectors" (GKE docs, "About node
//     auto-provisioning"); the only public code that turns a TPU Pod into a node pool,
//     ai-on-gke's tpu-provisioner (GoogleCloudPlatform/ai-on-gke@ec7178cf:
//     tpu-provisioner/internal/cloud/gke.go, nodePoolForPod, tpuMachineType, sumTPURequests),
//     takes the accelerator and topology from the node selector, the machine type from the
//     Pod's summed google.com/tpu request (ct6e-standard-%vt) and places a multi-host slice
//     COMPACT with its tpuTopology. So a v6e 2x4 asked for with 4 chips per Pod is two
//     ct6e-standard-4t hosts, with 8 one ct6e-standard-8t. The host count is the topology's chips
//     over the chips per VM (gketpu).
//   - ResourceLimit.resource_type is "cpu", "memory" or an accelerator (containerpb); xpk sets
//     the TPU limit in chips under the accelerator label (AI-Hypercomputer/xpk src/xpk/core/nap.py,
//     resourceType: {gke_accelerator}). NAP creates a pool only while the chips of all the
//     cluster's pools of that accelerator, not only the auto-provisioned ones, stay within that
//     maximum (no limit for the accelerator: none): "Any auto-provisioning limits that you define
//     are enforced based on the total CPU and memory resources used across all node pools, not
//     just auto-provisioned pools" (GKE "About node auto-provisioning", resource limits), and the
//     cluster autoscaler totals custom resources such as accelerators over every node alike
//     (kubernetes/autoscaler cluster-autoscaler/core/scaleup/resource/manager.go).
//   - Pool names: "nap-" + the machine type cropped to 14 characters + "-" + 8 random characters
//     (GoogleCloudPlatform/cluster-autoscaler@b37dc8a6:pkg/cloudprovider/gke/
//     gke_cloud_provider_impl.go, generateNewNodeGroupName, cropMachineType,
//     maxMachineTypeLength = 14), e.g. nap-ct6e-standa-4t-k2v9x0qa; autoscaling.autoprovisioned
//     true (containerpb NodePoolAutoscaling.autoprovisioned).
//   - Minimum versions: "1.27.6 and later ... for Cloud TPU v4 and v5e", "1.28.7-gke.1020000 or
//     later and 1.29.2-gke.1035000 or later for Cloud TPU v5p", "1.31.1-gke.1146000 or later for
//     Cloud TPU Trillium" (GKE docs, "Use node auto-provisioning",
//     cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning). None is published
//     for tpu7x; its node pool minimum applies.
//   - A multi-host tpu7x slice needs a workload policy (gketpu), which NAP cannot create: NAP
//     skips those Pods.
//
// INFERRED: the zone is the first of autoprovisioningLocations, else the cluster's first node
// zone.

// napMaxNodes is the maximum node count of a single-host auto-provisioned pool
// (cluster-autoscaler's napMaxNodes = 1000).
const napMaxNodes = 1000

// NAPMinVersion is the lowest cluster version at which NAP provisions a generation's TPUs, and
// whether version is at least that.
func NAPMinVersion(generation, version string) (string, bool) {
	switch generation {
	case "v4", "v5e":
		return "1.27.6", !VersionLess(version, "1.27.6")
	case "v5p":
		if VersionLess(version, "1.29") {
			return "1.28.7-gke.1020000", !VersionLess(version, "1.28.7-gke.1020000")
		}
		return "1.29.2-gke.1035000", !VersionLess(version, "1.29.2-gke.1035000")
	case "v6e":
		return "1.31.1-gke.1146000", !VersionLess(version, "1.31.1-gke.1146000")
	}
	return "", true
}

// NAPUsage is what nodes of a machine type count against a cluster's resource limits: their
// vCPUs ("cpu", in cores), memory ("memory", in MiB) and TPU chips (under the accelerator, for a
// TPU pool). Every node of the cluster counts, whatever pool it is in: "Any auto-provisioning
// limits that you define are enforced based on the total CPU and memory resources used across all
// node pools, not just auto-provisioned pools" (GKE "About node auto-provisioning"), and the
// cluster autoscaler adds the nodes of groups it does not autoscale to the total
// (kubernetes/autoscaler@16c271a3 cluster-autoscaler/core/scaleup/resource/manager.go,
// coresMemoryTotal and nodesFromNotAutoscaledGroups). A TPU VM is a large machine: one
// ct6e-standard-4t host counts 180 cores and 720 GiB.
func NAPUsage(machineType, accelerator string, chipsPerNode, nodes int) map[string]int64 {
	m, _ := machines.Lookup(machineType)
	u := map[string]int64{"cpu": int64(m.VCPUs * nodes), "memory": m.MemoryMiB * int64(nodes)}
	if accelerator != "" {
		u[accelerator] = int64(chipsPerNode * nodes)
	}
	return u
}

// AddUsage adds usage u to total.
func AddUsage(total, u map[string]int64) {
	for k, v := range u {
		total[k] += v
	}
}

// NAPExceeded lists, sorted, the resources whose limit adding delta to used would pass, as the
// cluster autoscaler's CheckDeltaWithinLimits does (the manager.go above: a resource without a
// limit counts as exceeded). Memory limits are in GB (gcloud --max-memory), compared with the
// machine types' GiB as GiB (INFERRED: Compute Engine's "GB" of memory are GiB).
func NAPExceeded(limits, used, delta map[string]int64) []string {
	var out []string
	for r, d := range delta {
		limit, ok := limits[r]
		if r == "memory" {
			limit <<= 10
		}
		if d > 0 && (!ok || used[r]+d > limit) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// ValidateClusterAutoscaling applies GKE's rules to Cluster.autoscaling, in a create or in
// UpdateCluster's desiredClusterAutoscaling:
//   - "Resource limits are supported only with node autoprovisioning." (GKE's answer,
//     aptos-labs/aptos-core#5645);
//   - "Resource limits for cpu, memory must be specified when enabling node autoprovisioning."
//     (terraform-provider-google#24232; TPG's docs: "Configuring the cpu and memory types is
//     required if node auto-provisioning is enabled");
//   - "Invalid resource: accelerator." for a type that is neither cpu, memory nor an accelerator
//     (terraform-provider-google#11589); accelerators are the TPU labels of gketpu and GPU types
//     (nvidia-*, INFERRED, unchecked);
//   - "Resource_limit.maximum must be greater than 0." (google/caliban#65).
//
// A minimum above its maximum and a type given twice are refused in the emulator's words.
func ValidateClusterAutoscaling(a *containerpb.ClusterAutoscaling) *apierr.Error {
	if a == nil {
		return nil
	}
	if !a.EnableNodeAutoprovisioning {
		if len(a.ResourceLimits) > 0 {
			return apierr.Invalid("Resource limits are supported only with node autoprovisioning.")
		}
		return nil
	}
	seen := map[string]bool{}
	for _, l := range a.ResourceLimits {
		t := l.GetResourceType()
		if t != "cpu" && t != "memory" && !strings.HasPrefix(t, "nvidia-") && !isTPUAccelerator(t) {
			return apierr.Invalid("Invalid resource: %s.", t)
		}
		if seen[t] {
			return apierr.Invalid("Resource limit for %s is given more than once.", t)
		}
		seen[t] = true
		if l.Maximum <= 0 {
			return apierr.Invalid("Resource_limit.maximum must be greater than 0.")
		}
		if l.Minimum < 0 || l.Minimum > l.Maximum {
			return apierr.Invalid("Resource limit for %s: minimum %d must be between 0 and maximum %d.", t, l.Minimum, l.Maximum)
		}
	}
	var missing []string
	for _, t := range []string{"cpu", "memory"} {
		if !seen[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return apierr.Invalid("Resource limits for %s must be specified when enabling node autoprovisioning.", strings.Join(missing, ", "))
	}
	return nil
}

// isTPUAccelerator says whether s is a TPU accelerator label (not another name of a generation).
func isTPUAccelerator(s string) bool {
	for _, g := range gketpu.Generations() {
		if g.Accelerator == s {
			return true
		}
	}
	return false
}

// NAPZone is the zone NAP creates pools in: the first of the cluster's autoprovisioningLocations
// in its region, else the first of its node locations (INFERRED, above).
func NAPZone(a *containerpb.ClusterAutoscaling, location string, locations []string) string {
	for _, z := range a.GetAutoprovisioningLocations() {
		if IsZone(z) && ZoneRegion(z) == ZoneRegion(location) {
			return z
		}
	}
	if len(locations) > 0 {
		return locations[0]
	}
	return ""
}

// NAPShape is the node pool NAP builds for a Pod's TPU request.
type NAPShape struct {
	Accelerator string
	Topology    string
	Chips       int // google.com/tpu per Pod, one Pod per host
	Machine     *gketpu.MachineType
	Slice       gketpu.Slice
}

// Key names the shape: pools of one key serve the same Pods.
func (s NAPShape) Key() string { return NAPShapeKey(s.Accelerator, s.Topology, s.Machine.Name) }

// NAPShapeKey is the key of the shape of a pool of the accelerator, topology and machine type.
func NAPShapeKey(accelerator, topology, machineType string) string {
	return accelerator + "/" + topology + "/" + machineType
}

// NAPShapeFor resolves a Pod's node selector and TPU request to a slice, or says why NAP cannot
// build one (the emulator's words).
func NAPShapeFor(accelerator, topology string, chips int) (NAPShape, string) {
	s := NAPShape{Accelerator: accelerator, Topology: topology, Chips: chips}
	g, err := gketpu.LookupGeneration(accelerator)
	if err != nil || g.Accelerator != accelerator {
		return s, fmt.Sprintf("no TPU accelerator %q", accelerator)
	}
	for _, m := range g.MachineTypes {
		if m.ChipsPerVM == chips {
			s.Machine = m
		}
	}
	if s.Machine == nil {
		return s, fmt.Sprintf("no %s machine type has %d TPU chips per VM", accelerator, chips)
	}
	topo := topology
	if topo == s.Machine.SingleHost {
		topo = ""
	}
	sl, err := s.Machine.Slice(topo)
	if err != nil {
		return s, fmt.Sprintf("%s cannot form a %s slice: %v", s.Machine.Name, topology, err)
	}
	s.Slice = sl
	if sl.MultiHost && g.MultiHostWorkloadPolicy {
		return s, fmt.Sprintf("a multi-host %s slice needs a workload policy, which node auto-provisioning does not create", g.Name)
	}
	return s, ""
}

// napPoolName is generateNewNodeGroupName of GKE's cluster autoscaler for a TPU pool (no Spot, no
// GPU): "nap-" + cropMachineType(machineType) + "-" + 8 random lowercase letters and digits.
func napPoolName(machineType string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return "nap-" + cropMachineType(machineType) + "-" + string(b)
}

// cropMachineType is the cluster autoscaler's: at most 14 characters, cut from the middle part
// of a three-part name (ct6e-standard-4t → ct6e-standa-4t), else from the start.
func cropMachineType(machineType string) string {
	const maxLen = 14
	if len(machineType) <= maxLen {
		return machineType
	}
	parts := strings.Split(machineType, "-")
	excess := len(machineType) - maxLen
	if len(parts) == 3 && len(parts[1]) > excess {
		parts[1] = parts[1][:len(parts[1])-excess]
		return strings.Join(parts, "-")
	}
	return machineType[excess:]
}

// NAPNodePool is the node pool NAP asks for: the slice in one zone, autoscaled and marked
// auto-provisioned, a multi-host slice COMPACT with its topology, with the cluster's
// auto-provisioning defaults for service account, scopes and management.
func NAPNodePool(s NAPShape, zone string, defaults *containerpb.AutoprovisioningNodePoolDefaults) *containerpb.NodePool {
	np := &containerpb.NodePool{
		Name:             napPoolName(s.Machine.Name),
		InitialNodeCount: int32(s.Slice.Hosts),
		Locations:        []string{zone},
		Config:           &containerpb.NodeConfig{MachineType: s.Machine.Name},
		Autoscaling:      &containerpb.NodePoolAutoscaling{Enabled: true, Autoprovisioned: true, MaxNodeCount: napMaxNodes},
	}
	if s.Slice.MultiHost {
		np.Autoscaling.MaxNodeCount = int32(s.Slice.Hosts)
		np.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: s.Topology}
	}
	if d := defaults; d != nil {
		np.Config.ServiceAccount = d.ServiceAccount
		np.Config.OauthScopes = append([]string(nil), d.OauthScopes...)
		if d.Management != nil {
			np.Management, _ = proto.Clone(d.Management).(*containerpb.NodeManagement)
		}
	}
	return np
}
