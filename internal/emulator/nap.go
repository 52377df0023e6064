package emulator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/machines"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook"
)

// Node auto-provisioning (NAP) for TPUs: a cluster whose Cluster.autoscaling enables node
// auto-provisioning gets, for Pods the scheduler found no room for, node pools of the TPU slice
// they ask for, within the chips its resource limits allow.
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
//   - Events on the Pods as the cluster autoscaler records them: TriggeredScaleUp "pod triggered
//     scale-up: [...]" and NotTriggerScaleUp "pod didn't trigger scale-up: ..."
//     (kubernetes/autoscaler@16c271a3: cluster-autoscaler/processors/status/
//     eventing_scale_up_processor.go), with its reason "max cluster X limit reached" (X the
//     resources whose limits a new pool would pass, sorted, joined by ", ")
//     (cluster-autoscaler/core/scaleup/orchestrator/skippedreasons.go) and "in backoff after
//     failed scale-up"; other reasons are the emulator's words.
//
// INFERRED: the zone is the first of autoprovisioningLocations, else the cluster's first node
// zone; after a failed creation the shape backs off for napBackoff (the cluster autoscaler's
// default initial node group backoff); idle auto-provisioned pools are never deleted.

// napBackoff is how long NAP leaves a slice shape alone after a pool of it failed to come up.
const napBackoff = 5 * time.Minute

// napMaxNodes is the maximum node count of a single-host auto-provisioned pool
// (cluster-autoscaler's napMaxNodes = 1000).
const napMaxNodes = 1000

// napMinVersion is the lowest cluster version at which NAP provisions a generation's TPUs.
func napMinVersion(generation, version string) (string, bool) {
	switch generation {
	case "v4", "v5e":
		return "1.27.6", !rules.VersionLess(version, "1.27.6")
	case "v5p":
		if rules.VersionLess(version, "1.29") {
			return "1.28.7-gke.1020000", !rules.VersionLess(version, "1.28.7-gke.1020000")
		}
		return "1.29.2-gke.1035000", !rules.VersionLess(version, "1.29.2-gke.1035000")
	case "v6e":
		return "1.31.1-gke.1146000", !rules.VersionLess(version, "1.31.1-gke.1146000")
	}
	return "", true
}

// napUsage is what nodes of a machine type count against a cluster's resource limits: their
// vCPUs ("cpu", in cores), memory ("memory", in MiB) and TPU chips (under the accelerator, for a
// TPU pool). Every node of the cluster counts, whatever pool it is in: "Any auto-provisioning
// limits that you define are enforced based on the total CPU and memory resources used across all
// node pools, not just auto-provisioned pools" (GKE "About node auto-provisioning"), and the
// cluster autoscaler adds the nodes of groups it does not autoscale to the total
// (kubernetes/autoscaler@16c271a3 cluster-autoscaler/core/scaleup/resource/manager.go,
// coresMemoryTotal and nodesFromNotAutoscaledGroups). A TPU VM is a large machine: one
// ct6e-standard-4t host counts 180 cores and 720 GiB.
func napUsage(machineType, accelerator string, chipsPerNode, nodes int) map[string]int64 {
	m, _ := machines.Lookup(machineType)
	u := map[string]int64{"cpu": int64(m.VCPUs * nodes), "memory": m.MemoryMiB * int64(nodes)}
	if accelerator != "" {
		u[accelerator] = int64(chipsPerNode * nodes)
	}
	return u
}

func addUsage(total, u map[string]int64) {
	for k, v := range u {
		total[k] += v
	}
}

// napExceeded lists, sorted, the resources whose limit adding delta to used would pass, as the
// cluster autoscaler's CheckDeltaWithinLimits does (the manager.go above: a resource without a
// limit counts as exceeded). Memory limits are in GB (gcloud --max-memory), compared with the
// machine types' GiB as GiB (INFERRED: Compute Engine's "GB" of memory are GiB).
func napExceeded(limits, used, delta map[string]int64) []string {
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

// validateClusterAutoscaling applies GKE's rules to Cluster.autoscaling, in a create or in
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
func validateClusterAutoscaling(a *containerpb.ClusterAutoscaling) *apierr.Error {
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

// napShape is the node pool NAP builds for a Pod's TPU request.
type napShape struct {
	accelerator string
	topology    string
	chips       int // google.com/tpu per Pod, one Pod per host
	machine     *gketpu.MachineType
	slice       gketpu.Slice
}

func (s napShape) key() string { return s.accelerator + "/" + s.topology + "/" + s.machine.Name }

// napShapeFor resolves a Pod's node selector and TPU request to a slice, or says why NAP cannot
// build one (the emulator's words).
func napShapeFor(accelerator, topology string, chips int) (napShape, string) {
	s := napShape{accelerator: accelerator, topology: topology, chips: chips}
	g, err := gketpu.LookupGeneration(accelerator)
	if err != nil || g.Accelerator != accelerator {
		return s, fmt.Sprintf("no TPU accelerator %q", accelerator)
	}
	for _, m := range g.MachineTypes {
		if m.ChipsPerVM == chips {
			s.machine = m
		}
	}
	if s.machine == nil {
		return s, fmt.Sprintf("no %s machine type has %d TPU chips per VM", accelerator, chips)
	}
	topo := topology
	if topo == s.machine.SingleHost {
		topo = ""
	}
	sl, err := s.machine.Slice(topo)
	if err != nil {
		return s, fmt.Sprintf("%s cannot form a %s slice: %v", s.machine.Name, topology, err)
	}
	s.slice = sl
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

// napPool is what NAP needs to know of one node pool, copied under e.mu.
type napPool struct {
	name, status    string
	autoprovisioned bool
	shape           string // napShape.key() for TPU pools
	accelerator     string
	// usage is what the pool's nodes count against the cluster's limits (napUsage).
	usage map[string]int64
}

// napCluster is what NAP needs to know of the cluster, copied under e.mu.
type napCluster struct {
	n        resourceName
	enabled  bool
	limits   map[string]int64 // maximum by resource type
	version  string
	zone     string
	defaults *containerpb.AutoprovisioningNodePoolDefaults
	pools    []napPool
}

func (e *Emulator) napClusterSnapshot(c *cluster) (napCluster, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.clusters[c.Key] != c || (c.PB.Status != containerpb.Cluster_RUNNING && c.PB.Status != containerpb.Cluster_RECONCILING) {
		return napCluster{}, false
	}
	a := c.PB.GetAutoscaling()
	s := napCluster{
		n:       resourceName{Project: c.Project, Location: c.Location, Cluster: c.PB.Name},
		enabled: a.GetEnableNodeAutoprovisioning(),
		limits:  map[string]int64{},
		version: c.PB.CurrentMasterVersion,
	}
	if a.GetAutoprovisioningNodePoolDefaults() != nil {
		s.defaults = cloneMsg(a.AutoprovisioningNodePoolDefaults)
	}
	for _, l := range a.GetResourceLimits() {
		s.limits[l.ResourceType] = l.Maximum
	}
	for _, z := range a.GetAutoprovisioningLocations() {
		if rules.IsZone(z) && rules.ZoneRegion(z) == rules.ZoneRegion(c.Location) {
			s.zone = z
			break
		}
	}
	if s.zone == "" && len(c.PB.Locations) > 0 {
		s.zone = c.PB.Locations[0]
	}
	for _, p := range c.Pools {
		np := napPool{name: p.PB.Name, status: p.PB.Status.String(), autoprovisioned: p.PB.GetAutoscaling().GetAutoprovisioned(),
			accelerator: p.Accelerator, usage: napUsage(p.PB.GetConfig().GetMachineType(), p.Accelerator, p.ChipsPerNode, p.TotalNodes())}
		if m, ok := gketpu.LookupMachineType(p.PB.GetConfig().GetMachineType()); ok {
			np.shape = p.Accelerator + "/" + p.Topology + "/" + m.Name
		}
		s.pools = append(s.pools, np)
	}
	return s, true
}

// napDemand is one slice's worth of Pods waiting for room: the Pods of one replica of a
// multi-host worker group, or one Pod of a single-host slice.
type napDemand struct {
	shape napShape
	pods  []*corev1.Pod
}

// napPass runs one round of node auto-provisioning over the Pods the scheduler marked
// unschedulable. It reports whether Pods are still waiting, so that the caller comes back.
func (a *nodeAgent) napPass(ctx context.Context) bool {
	var pending []*corev1.Pod
	placed := map[string]bool{} // replica keys with a Pod on a node
	for _, obj := range a.pods.GetStore().List() {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName != "" {
			if k := replicaKey(p); k != "" {
				placed[k] = true
			}
			continue
		}
		if podUnschedulable(p) && p.Spec.NodeSelector[gketpu.LabelAccelerator] != "" && p.Spec.NodeSelector[gketpu.LabelTopology] != "" {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		return false
	}
	cl, ok := a.e.napClusterSnapshot(a.c)
	if !ok || !cl.enabled {
		return true
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].CreationTimestamp.Before(&pending[j].CreationTimestamp) })

	// Group the Pods into slices.
	var demands []*napDemand
	byReplica := map[string]*napDemand{}
	loose := map[string]*napDemand{}
	for _, p := range pending {
		shape, why := napShapeFor(p.Spec.NodeSelector[gketpu.LabelAccelerator], p.Spec.NodeSelector[gketpu.LabelTopology], int(tpuwebhook.ChipsRequested(p.Spec.Containers...)))
		if why != "" {
			a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: "+why)
			continue
		}
		if v, ok := napMinVersion(shape.machine.Generation.Name, cl.version); !ok {
			a.napEvent(ctx, p, "NotTriggerScaleUp", fmt.Sprintf("pod didn't trigger scale-up: node auto-provisioning of TPU %s needs GKE %s or later, the cluster runs %s",
				shape.machine.Generation.Name, v, cl.version))
			continue
		}
		if pinnedToNodePools(p) {
			// A new pool's name is NAP's own, so a Pod held to named pools never fits one: the
			// cluster autoscaler's check of the Pod on the new group's template node fails with
			// the scheduler's NodeAffinity reason.
			a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector")
			continue
		}
		k := replicaKey(p)
		if k != "" && placed[k] {
			// The rest of its replica is on a node pool already; the Pod's affinity keeps it
			// there, so no new pool can take it.
			a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: the rest of its slice is on an existing node pool")
			continue
		}
		if k != "" && shape.slice.MultiHost {
			d := byReplica[k]
			if d == nil {
				d = &napDemand{shape: shape}
				byReplica[k] = d
				demands = append(demands, d)
			}
			d.pods = append(d.pods, p)
			continue
		}
		// Pods without a replica: as many slices as they fill.
		d := loose[shape.key()]
		if d == nil || len(d.pods) >= shape.slice.Hosts {
			d = &napDemand{shape: shape}
			loose[shape.key()] = d
			demands = append(demands, d)
		}
		d.pods = append(d.pods, p)
	}

	// Auto-provisioned pools still free (coming up, or up with no Pod on any node) serve demands
	// first: the scheduler will place Pods there.
	free := a.freeNAPPools(cl)
	used := map[string]int64{}
	for _, p := range cl.pools {
		if p.status != containerpb.NodePool_ERROR.String() {
			addUsage(used, p.usage)
		}
	}
	for _, d := range demands {
		key := d.shape.key()
		if free[key] > 0 {
			free[key]--
			continue
		}
		if until, ok := a.napBackoff[key]; ok && time.Now().Before(until) {
			a.napEvents(ctx, d.pods, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 in backoff after failed scale-up")
			continue
		}
		delta := napUsage(d.shape.machine.Name, d.shape.accelerator, d.shape.machine.ChipsPerVM, d.shape.slice.Hosts)
		if exceeded := napExceeded(cl.limits, used, delta); len(exceeded) > 0 {
			a.napEvents(ctx, d.pods, "NotTriggerScaleUp", fmt.Sprintf("pod didn't trigger scale-up: 1 max cluster %s limit reached", strings.Join(exceeded, ", ")))
			continue
		}
		np := napNodePool(d.shape, cl)
		op, err := a.e.startCreateNodePool(cl.n, np)
		if err != nil {
			// Another operation holds the cluster or the pool quota (GKE's concurrency rules):
			// the next round tries again.
			a.e.logf("cluster %s: node auto-provisioning of %s: %s", a.c.Key, np.Name, err.Message)
			continue
		}
		addUsage(used, delta)
		a.napCreated[np.Name] = key
		a.e.logf("cluster %s: node auto-provisioning creates node pool %s (%s, %s, %d nodes): operation %s",
			a.c.Key, np.Name, d.shape.machine.Name, d.shape.topology, d.shape.slice.Hosts, op.Name)
		a.napEvents(ctx, d.pods, "TriggeredScaleUp", fmt.Sprintf("pod triggered scale-up: [{%s 0->%d (max: %d)}]",
			np.Name, d.shape.slice.Hosts, np.Autoscaling.MaxNodeCount))
	}
	return true
}

// freeNAPPools counts, by shape, the auto-provisioned pools NAP can still count on: coming up,
// or up with no Pod on any of their nodes. A pool of NAP's that failed puts its shape in backoff.
func (a *nodeAgent) freeNAPPools(cl napCluster) map[string]int {
	free := map[string]int{}
	for _, p := range cl.pools {
		if !p.autoprovisioned || p.shape == "" {
			continue
		}
		switch p.status {
		case containerpb.NodePool_PROVISIONING.String():
			free[p.shape]++
		case containerpb.NodePool_RUNNING.String():
			if !a.poolOccupied(p.name) {
				free[p.shape]++
			}
		case containerpb.NodePool_ERROR.String():
			if shape, ok := a.napCreated[p.name]; ok {
				delete(a.napCreated, p.name)
				a.napBackoff[shape] = time.Now().Add(napBackoff)
			}
		}
	}
	return free
}

// poolOccupied says whether a Pod sits on a node of the pool.
func (a *nodeAgent) poolOccupied(pool string) bool {
	for _, obj := range a.nodes.GetStore().List() {
		n, ok := obj.(*corev1.Node)
		if !ok || n.Labels[gketpu.LabelNodePool] != pool {
			continue
		}
		pods, _ := a.pods.GetIndexer().ByIndex(podsByNode, n.Name)
		for _, o := range pods {
			if p, ok := o.(*corev1.Pod); ok && p.DeletionTimestamp == nil && !podTerminal(p) {
				return true
			}
		}
	}
	return false
}

// napNodePool is the node pool NAP asks for: the slice in one zone, autoscaled and marked
// auto-provisioned, a multi-host slice COMPACT with its topology, with the cluster's
// auto-provisioning defaults for service account, scopes and management.
func napNodePool(s napShape, cl napCluster) *containerpb.NodePool {
	np := &containerpb.NodePool{
		Name:             napPoolName(s.machine.Name),
		InitialNodeCount: int32(s.slice.Hosts),
		Locations:        []string{cl.zone},
		Config:           &containerpb.NodeConfig{MachineType: s.machine.Name},
		Autoscaling:      &containerpb.NodePoolAutoscaling{Enabled: true, Autoprovisioned: true, MaxNodeCount: napMaxNodes},
	}
	if s.slice.MultiHost {
		np.Autoscaling.MaxNodeCount = int32(s.slice.Hosts)
		np.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: s.topology}
	}
	if d := cl.defaults; d != nil {
		np.Config.ServiceAccount = d.ServiceAccount
		np.Config.OauthScopes = append([]string(nil), d.OauthScopes...)
		if d.Management != nil {
			np.Management = cloneMsg(d.Management)
		}
	}
	return np
}

// replicaKey names the slice replica a Pod belongs to: KubeRay's replica name, else the webhook's
// replicaIndex label; "" for a Pod of neither.
func replicaKey(p *corev1.Pod) string {
	if v := p.Labels[tpuwebhook.ReplicaNameLabel]; v != "" {
		return p.Namespace + "/" + p.Labels[tpuwebhook.ClusterLabel] + "/" + v
	}
	if v := p.Labels[tpuwebhook.LegacyReplicaLabel]; v != "" {
		return p.Namespace + "/" + p.Labels[tpuwebhook.ClusterLabel] + "/" + p.Labels[tpuwebhook.GroupLabel] + "/" + v
	}
	return ""
}

// podUnschedulable: the scheduler set PodScheduled=False with reason Unschedulable, which is what
// the cluster autoscaler looks for.
func podUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

func (a *nodeAgent) napEvents(ctx context.Context, pods []*corev1.Pod, reason, message string) {
	for _, p := range pods {
		a.napEvent(ctx, p, reason, message)
	}
}

// napEvent records an event on a Pod as the cluster autoscaler does, once per Pod and message.
func (a *nodeAgent) napEvent(ctx context.Context, p *corev1.Pod, reason, message string) {
	key := string(p.UID) + "\x00" + reason + "\x00" + message
	if a.napSeen[key] {
		return
	}
	a.napSeen[key] = true
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano()), Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID,
			APIVersion: "v1", ResourceVersion: p.ResourceVersion},
		Reason: reason, Message: message, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "cluster-autoscaler"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := a.kube.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
		a.e.logf("cluster %s: event %s on Pod %s/%s: %v", a.c.Key, reason, p.Namespace, p.Name, err)
	}
}

// pinnedToNodePools reports whether the Pod may only run on named node pools: by node selector,
// or by a required node affinity each of whose terms (they are ORed) names pools with In on
// cloud.google.com/gke-nodepool.
func pinnedToNodePools(p *corev1.Pod) bool {
	if p.Spec.NodeSelector[gketpu.LabelNodePool] != "" {
		return true
	}
	if p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil || p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		named := false
		for _, e := range term.MatchExpressions {
			named = named || (e.Key == gketpu.LabelNodePool && e.Operator == corev1.NodeSelectorOpIn)
		}
		if !named {
			return false
		}
	}
	return len(terms) > 0
}
