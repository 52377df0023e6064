package rules

import (
	"slices"
	"sort"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

// What GKE adds to a node pool beyond what it was sent: the resource labels it reserves, the
// OAuth scopes of nodes created without any, and the node configuration and pod range it reports
// of every pool it creates. Each is in the catalogue of GKE's own answers in
// doc.go.

// reservedLabelPrefix starts the resource labels GKE sets itself. "Do not edit or delete reserved
// labels. Any changes made to reserved labels are reconciled automatically." (GKE "Automatically
// applied labels", kubernetes-engine/docs/how-to/creating-managing-labels).
const reservedLabelPrefix = "goog-gke-"

// The reserved node pool labels GKE sets (same page): goog-gke-node-pool-provisioning-model on
// every pool; goog-gke-accelerator-type and goog-gke-tpu-node-pool-type on accelerator pools.
const (
	labelProvisioningModel = "goog-gke-node-pool-provisioning-model"
	labelAcceleratorType   = "goog-gke-accelerator-type"
	labelTPUNodePoolType   = "goog-gke-tpu-node-pool-type"
)

// provisioningModel is the value of goog-gke-node-pool-provisioning-model:
//   - "on-demand" for standard VMs, queued provisioning without flex-start included: GKE's answer
//     recorded in k8s-config-connector@cdb85ecf (testdata/basic/container/v1beta1/
//     containernodepool/_http.log and containernodepool-queuedprovisioning/_http.log);
//     crossplane-contrib/provider-upjet-gcp#742 ("an auto-generated label introduced by Google");
//   - "spot" for Spot VMs (a Pulumi import of a live Spot pool; users report it for preemptible
//     pools too);
//   - "flex-start" for flex-start VMs (a GKE read-back of a tpu7x flex-start pool quoted in users'
//     setup notes).
//
// INFERRED: pools that consume a reservation report "on-demand"; no source gives another value.
func provisioningModel(cfg *containerpb.NodeConfig) string {
	switch {
	case cfg.GetFlexStart():
		return "flex-start"
	case cfg.GetSpot() || cfg.GetPreemptible():
		return "spot"
	}
	return "on-demand"
}

// reservedNodePoolLabels are the resource labels GKE puts on pool p. A TPU pool's
// goog-gke-accelerator-type is its accelerator (the read-back above: "tpu7x" on a tpu7x pool;
// the value for other generations, their cloud.google.com/gke-tpu-accelerator label, is INFERRED),
// and a multi-host slice's goog-gke-tpu-node-pool-type is "multi-host" (the same read-back, and a
// design note read from the live API: "multi-host" on a multi-host pool, empty on a ct6e-standard-1t
// pool, which the emulator leaves out).
func reservedNodePoolLabels(p *NodePool) map[string]string {
	labels := map[string]string{labelProvisioningModel: provisioningModel(p.PB.GetConfig())}
	if p.Accelerator != "" {
		labels[labelAcceleratorType] = p.Accelerator
		if p.MultiHost {
			labels[labelTPUNodePoolType] = "multi-host"
		}
	}
	return labels
}

// SetReservedLabels gives p's configuration GKE's reserved labels and drops any other label in
// their namespace: a client cannot set, change or remove them, GKE reconciles them.
func SetReservedLabels(p *NodePool) {
	cfg := p.PB.Config
	labels := map[string]string{}
	for k, v := range cfg.ResourceLabels {
		if !strings.HasPrefix(k, reservedLabelPrefix) {
			labels[k] = v
		}
	}
	for k, v := range reservedNodePoolLabels(p) {
		labels[k] = v
	}
	cfg.ResourceLabels = labels
}

// DefaultOAuthScopes are the scopes of nodes created without any, GKE's "gke-default" set: sent as
// no oauthScopes, read back as these six (k8s-config-connector@cdb85ecf containernodepool/
// _http.log); terraform-provider-google sends the same list itself ("Matches gke-default scope",
// node_config.go defaultOauthScopes). Reported in alphabetical order, as in every recorded GKE
// answer (the order itself is INFERRED).
var DefaultOAuthScopes = []string{
	"https://www.googleapis.com/auth/devstorage.read_only",
	"https://www.googleapis.com/auth/logging.write",
	"https://www.googleapis.com/auth/monitoring",
	"https://www.googleapis.com/auth/service.management.readonly",
	"https://www.googleapis.com/auth/servicecontrol",
	"https://www.googleapis.com/auth/trace.append",
}

// nodeOAuthScopes is what GKE reports for scopes sent: the defaults for none, else the scopes in
// alphabetical order (INFERRED, as above).
func nodeOAuthScopes(sent []string) []string {
	if len(sent) == 0 {
		return append([]string(nil), DefaultOAuthScopes...)
	}
	out := append([]string(nil), sent...)
	sort.Strings(out)
	return out
}

// MonitoringScope is the scope GKE adds to auto-provisioned node pools' defaults that lack one:
// sent [devstorage.read_only, logging.write], read back with .../auth/monitoring added
// (k8s-config-connector@cdb85ecf containercluster-autoscaling-basic/_http.log).
// terraform-provider-google suppresses the difference as "unremovable default scope values from
// GCP" (resource_container_cluster.go containerClusterAddedScopesSuppress, which names
// monitoring.write, the scope of older answers).
const MonitoringScope = "https://www.googleapis.com/auth/monitoring"

// autoprovisioningOAuthScopes is what GKE reports for the scopes of auto-provisioning defaults:
// the defaults for none; else the scopes sent, with the monitoring scope added unless they hold a
// monitoring scope or cloud-platform (which includes it), in alphabetical order.
func autoprovisioningOAuthScopes(sent []string) []string {
	out := nodeOAuthScopes(sent)
	if len(sent) == 0 {
		return out
	}
	for _, s := range out {
		switch s {
		case MonitoringScope, MonitoringScope + ".write", "https://www.googleapis.com/auth/cloud-platform":
			return out
		}
	}
	return nodeOAuthScopes(append(out, MonitoringScope))
}

// ReportedClusterAutoscaling is Cluster.autoscaling as GKE reports what was sent (nil for nothing):
// autoscalingProfile BALANCED and the auto-provisioning defaults filled in, node auto-provisioning
// on or off (k8s-config-connector@cdb85ecf: containernodepool/_http.log, a cluster sent
// {"enableNodeAutoprovisioning": false}, read back with autoprovisioningNodePoolDefaults {imageType
// COS_CONTAINERD, management, oauthScopes (the six defaults), serviceAccount default} and
// autoscalingProfile BALANCED; containercluster-autoscaling-basic/_http.log, with it on: diskSizeGb
// 100 and upgradeSettings strategy SURGE too, and the monitoring scope added).
func ReportedClusterAutoscaling(sent *containerpb.ClusterAutoscaling) *containerpb.ClusterAutoscaling {
	a := &containerpb.ClusterAutoscaling{}
	if sent != nil {
		a = proto.CloneOf(sent)
	}
	if a.AutoscalingProfile == containerpb.ClusterAutoscaling_PROFILE_UNSPECIFIED {
		a.AutoscalingProfile = containerpb.ClusterAutoscaling_BALANCED
	}
	if a.AutoprovisioningNodePoolDefaults == nil {
		a.AutoprovisioningNodePoolDefaults = &containerpb.AutoprovisioningNodePoolDefaults{}
	}
	d := a.AutoprovisioningNodePoolDefaults
	d.OauthScopes = autoprovisioningOAuthScopes(d.OauthScopes)
	if d.ServiceAccount == "" {
		d.ServiceAccount = "default"
	}
	if d.ImageType == "" {
		d.ImageType = "COS_CONTAINERD"
	}
	if d.Management == nil {
		d.Management = &containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: true}
	}
	if a.EnableNodeAutoprovisioning {
		if d.DiskSizeGb == 0 {
			d.DiskSizeGb = 100
		}
		if d.UpgradeSettings == nil {
			d.UpgradeSettings = &containerpb.NodePool_UpgradeSettings{}
		}
		if d.UpgradeSettings.Strategy == nil {
			d.UpgradeSettings.Strategy = containerpb.NodePoolUpdateStrategy_SURGE.Enum()
		}
	}
	return a
}

// legacyEndpointsKey is the instance metadata entry GKE adds to every node pool's configuration:
// the legacy Compute Engine metadata APIs are disabled on nodes of GKE 1.12 and later (GKE
// "Protect cluster metadata", #disable-legacy-apis; "For GKE versions 1.12 and newer, the legacy
// GCE metadata endpoint is disabled by default", CIS GKE Benchmark 5.4.1), which node pools read
// back as metadata disable-legacy-endpoints "true" when sent none (a GKE answer recorded in a
// client's test fixture: cluster istio of project wlhe-cr, its nodeConfig and its pools);
// terraform-provider-google keeps node_config.metadata Computed for it.
const legacyEndpointsKey = "disable-legacy-endpoints"

// addNodeConfigAnswers fills in the node configuration of pool p what GKE reports of every pool
// it creates, on top of what it was sent: a client that reads the pool and sends its answer back in
// a new create (as a repair that copies the pool would) sends these too.
//   - Metadata disable-legacy-endpoints=true (legacyEndpointsKey above), unless sent.
//   - effectiveCgroupMode: "Output only. effective_cgroup_mode is the cgroup mode actually used by
//     the node pool. It is determined by the cgroup mode specified in the LinuxNodeConfig or the
//     default cgroup mode based on the cluster creation version" (containerpb NodeConfig), cgroupv2
//     by default for clusters created at GKE 1.26 and later (GKE "Migrate nodes to Linux
//     cgroupv2"), which every version the emulator offers is.
//   - bootDisk, the boot disk's type and size: "The boot disk configuration for the node pool",
//     whose size_gb "Replaces NodeConfig.disk_size_gb" (containerpb NodeConfig.boot_disk, BootDisk);
//     terraform-provider-google keeps node_config.boot_disk Computed. INFERRED: GKE reports the
//     disk diskType and diskSizeGb describe there, and a bootDisk sent sets them when they are not.
//   - The TPU taint on TPU pools, google.com/tpu=present:NoSchedule, which GKE puts on TPU nodes
//     (GKE "About TPUs in GKE"; gketpu.TaintValue): terraform-provider-google reads it into
//     node_config.effective_taints ("the complete set of taints returned from GKE") and keeps
//     node_config.taint to the keys its configuration holds (flattenTaints: "the set of taints
//     already present in state"). INFERRED: that GKE's answer lists the TPU taint among them.
func addNodeConfigAnswers(p *NodePool) {
	cfg := p.PB.Config
	if _, sent := cfg.Metadata[legacyEndpointsKey]; !sent {
		if cfg.Metadata == nil {
			cfg.Metadata = map[string]string{}
		}
		cfg.Metadata[legacyEndpointsKey] = "true"
	}
	if cfg.GetLinuxNodeConfig().GetCgroupMode() == containerpb.LinuxNodeConfig_CGROUP_MODE_V1 {
		cfg.EffectiveCgroupMode = containerpb.NodeConfig_EFFECTIVE_CGROUP_MODE_V1
	} else {
		cfg.EffectiveCgroupMode = containerpb.NodeConfig_EFFECTIVE_CGROUP_MODE_V2
	}
	boot := proto.CloneOf(cfg.BootDisk)
	if boot == nil {
		boot = &containerpb.BootDisk{}
	}
	boot.DiskType, boot.SizeGb = cfg.DiskType, int64(cfg.DiskSizeGb)
	cfg.BootDisk = boot
	if p.ChipsPerNode > 0 && !slices.ContainsFunc(cfg.Taints, func(t *containerpb.NodeTaint) bool { return t.Key == gketpu.ResourceName }) {
		cfg.Taints = append(cfg.Taints, &containerpb.NodeTaint{Key: gketpu.ResourceName, Value: gketpu.TaintValue, Effect: containerpb.NodeTaint_NO_SCHEDULE})
	}
}

// bootDiskSettings takes the boot disk's type and size from a bootDisk sent without diskType or
// diskSizeGb (BootDisk.size_gb "Replaces NodeConfig.disk_size_gb", containerpb), before GKE's
// defaults fill them in.
func bootDiskSettings(cfg *containerpb.NodeConfig) {
	if cfg.DiskSizeGb == 0 {
		cfg.DiskSizeGb = int32(cfg.GetBootDisk().GetSizeGb())
	}
	if cfg.DiskType == "" {
		cfg.DiskType = cfg.GetBootDisk().GetDiskType()
	}
}

// SetPodRange gives pool np of cluster the pod range GKE reports on the pools of a VPC-native
// cluster that name none: the cluster's, its name and block ("networkConfig": {"podRange":
// "gke-istio-pods-290b29a3", "podIpv4CidrBlock": "10.48.128.0/17"} in the GKE answer cited at
// legacyEndpointsKey; the same shape in a second recorded answer, of a regional cluster's pool);
// terraform-provider-google keeps network_config Computed. A pool sent a range of its own keeps it.
func SetPodRange(np *containerpb.NodePool, cluster *containerpb.Cluster) {
	ip := cluster.GetIpAllocationPolicy()
	if !ip.GetUseIpAliases() {
		return
	}
	if np.NetworkConfig == nil {
		np.NetworkConfig = &containerpb.NodeNetworkConfig{}
	}
	if nc := np.NetworkConfig; nc.PodRange == "" && !nc.CreatePodRange {
		nc.PodRange, nc.PodIpv4CidrBlock = ip.ClusterSecondaryRangeName, ip.ClusterIpv4CidrBlock
	}
}

// clusterPodRangeName is the name of the secondary range GKE makes for a VPC-native cluster's
// Pods when it is given none: gke-CLUSTER-pods-HASH (gke-istio-pods-290b29a3 for cluster istio,
// above). INFERRED: the hash, eight hex digits, as the cluster's id begins.
func clusterPodRangeName(cluster *containerpb.Cluster) string {
	return "gke-" + cluster.Name + "-pods-" + cluster.Id[:min(8, len(cluster.Id))]
}
