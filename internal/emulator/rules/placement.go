package rules

import (
	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

// ResourcePolicy is what node pool validation reads of a Compute Engine resource policy.
type ResourcePolicy struct {
	// WorkloadPolicy is whether the policy is a workload policy (it has a workloadPolicy).
	WorkloadPolicy bool
	// AcceleratorTopology is the workload policy's acceleratorTopology.
	AcceleratorTopology string
}

// PolicyLookup finds a node pool's placementPolicy.policyName among the ready resource policies
// of the cluster's project and region: p is nil when there is none, key is "" when the name
// points at another project or region.
type PolicyLookup func(name string) (p *ResourcePolicy, key string)

// checkPlacementPolicy applies GKE's rules on placementPolicy.policyName.
// The policy "must be in the same project and region as the node pool. If not found,
// InvalidArgument" (containerpb NodePool.PlacementPolicy.policy_name). For a generation placed by
// a workload policy (tpu7x), the policy "replaces the --tpu-topology flag" (GKE "About Ironwood
// (TPU7x)"): a pool without tpuTopology takes the policy's acceleratorTopology, as gcloud sizes the
// pool from it (google-cloud-sdk api_adapter.py); a policy without one is refused with GKE's text
// "does not support TPU topology with group placement policy and workload policy at the same
// time", and a tpuTopology that differs from it is refused (capacity-facts.md §5). machine is nil
// for a CPU pool.
func checkPlacementPolicy(cf ClusterFacts, np *containerpb.NodePool, machine *gketpu.MachineType) *apierr.Error {
	pp := np.GetPlacementPolicy()
	name := pp.GetPolicyName()
	if name == "" || cf.Policies == nil {
		return nil
	}
	pb, key := cf.Policies(name)
	switch {
	case key == "":
		return apierr.Invalid("Node pool %q: placement policy %q is not in the node pool's project and region %q; the resource policy "+
			"must be in the same project and region as the node pool.", np.Name, name, ZoneRegion(cf.Location))
	case pb == nil:
		return apierr.Invalid("Node pool %q: resource policy %q (%s) was not found; placementPolicy.policyName must name a resource "+
			"policy in the same project and region as the node pool.", np.Name, name, key)
	}
	if machine == nil || !machine.Generation.MultiHostWorkloadPolicy {
		return nil
	}
	switch {
	case !pb.WorkloadPolicy:
		return apierr.Invalid("Node pool %q: resource policy %q is not a workload policy; %s TPU slices are placed by a HIGH_THROUGHPUT "+
			"workload policy with an accelerator topology.", np.Name, name, machine.Generation.Name)
	case pb.AcceleratorTopology == "":
		return apierr.Invalid("Node pool %q: workload policy %q has no acceleratorTopology: does not support TPU topology with group "+
			"placement policy and workload policy at the same time.", np.Name, name)
	case pp.GetTpuTopology() == "":
		np.PlacementPolicy.TpuTopology = pb.AcceleratorTopology
	case pp.GetTpuTopology() != pb.AcceleratorTopology:
		return apierr.Invalid("Node pool %q: TPU topology %s differs from the accelerator topology %s of workload policy %q.",
			np.Name, pp.GetTpuTopology(), pb.AcceleratorTopology, name)
	}
	return nil
}
