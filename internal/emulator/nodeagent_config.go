package emulator

import (
	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/nodeagent"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook"
)

// nodeAgentConfig is what the node agent of cluster c (package nodeagent) is built from: its
// client, and the emulator's side as functions that take e.mu themselves and release it before
// they return.
func (e *Emulator) nodeAgentConfig(c *cluster, kube kubernetes.Interface) nodeagent.Config {
	e.mu.Lock()
	n := resourceName{Project: c.Project, Location: c.Location, Cluster: c.PB.Name}
	cidr := c.PB.ClusterIpv4Cidr
	e.mu.Unlock()
	return nodeagent.Config{
		Name: c.Key, Kube: kube, PodCIDR: cidr, Logf: e.logf,
		Cluster: func() (nodeagent.ClusterSnapshot, bool) { return e.napSnapshot(c) },
		CreateNodePool: func(np *containerpb.NodePool) (*containerpb.Operation, *apierr.Error) {
			return e.startCreateNodePool(n, np)
		},
		TPUChips:   tpuwebhook.ChipsRequested,
		ReplicaKey: replicaKey,
	}
}

// napSnapshot is what node auto-provisioning needs to know of the cluster, copied under e.mu;
// false while the cluster is gone or neither RUNNING nor RECONCILING.
func (e *Emulator) napSnapshot(c *cluster) (nodeagent.ClusterSnapshot, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.clusters[c.Key] != c || (c.PB.Status != containerpb.Cluster_RUNNING && c.PB.Status != containerpb.Cluster_RECONCILING) {
		return nodeagent.ClusterSnapshot{}, false
	}
	a := c.PB.GetAutoscaling()
	s := nodeagent.ClusterSnapshot{
		NAP:     a.GetEnableNodeAutoprovisioning(),
		Limits:  map[string]int64{},
		Version: c.PB.CurrentMasterVersion,
		Zone:    rules.NAPZone(a, c.Location, c.PB.Locations),
	}
	if a.GetAutoprovisioningNodePoolDefaults() != nil {
		s.Defaults = cloneMsg(a.AutoprovisioningNodePoolDefaults)
	}
	for _, l := range a.GetResourceLimits() {
		s.Limits[l.ResourceType] = l.Maximum
	}
	for _, p := range c.Pools {
		np := nodeagent.PoolSnapshot{Name: p.PB.Name, Status: p.PB.Status, Autoprovisioned: p.PB.GetAutoscaling().GetAutoprovisioned(),
			Usage: rules.NAPUsage(p.PB.GetConfig().GetMachineType(), p.Accelerator, p.ChipsPerNode, p.TotalNodes())}
		if m, ok := gketpu.LookupMachineType(p.PB.GetConfig().GetMachineType()); ok {
			np.Shape = rules.NAPShapeKey(p.Accelerator, p.Topology, m.Name)
			if class := p.PB.GetConfig().GetLabels()[rules.LabelComputeClass]; class != "" {
				np.Shape = nodeagent.ClassShapeKey(np.Shape, class)
			}
		}
		s.Pools = append(s.Pools, np)
	}
	return s, true
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
