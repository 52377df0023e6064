package emulator

import (
	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

// policyLookup finds a node pool's placementPolicy.policyName among the ready resource policies
// of the cluster's project and region: pb is nil when there is none, key is "" when the name
// points at another project or region.
type policyLookup func(name string) (pb *compute.ResourcePolicy, key string)

// policyLookupLocked is the lookup for a cluster's node pools. It reads a copy of the policies, so
// that validation may run without the lock.
func (e *Emulator) policyLookupLocked(project, location string) policyLookup {
	region := zoneRegion(location)
	ready := map[string]*compute.ResourcePolicy{}
	for k, p := range e.st.policies {
		if p.Ready && p.Project == project && p.Region == region {
			ready[k] = p.view()
		}
	}
	return func(name string) (*compute.ResourcePolicy, string) {
		key, ok := policyKey(name, project, region)
		if !ok {
			return nil, ""
		}
		return ready[key], key
	}
}

// checkPlacementPolicy applies GKE's rules on placementPolicy.policyName.
// The policy "must be in the same project and region as the node pool. If not found,
// InvalidArgument" (containerpb NodePool.PlacementPolicy.policy_name). For a generation placed by
// a workload policy (tpu7x), the policy "replaces the --tpu-topology flag" (GKE "About Ironwood
// (TPU7x)"): a pool without tpuTopology takes the policy's acceleratorTopology, as gcloud sizes the
// pool from it (google-cloud-sdk api_adapter.py); a policy without one is refused with GKE's text
// "does not support TPU topology with group placement policy and workload policy at the same
// time", and a tpuTopology that differs from it is refused (capacity-facts.md §5). machine is nil
// for a CPU pool.
func checkPlacementPolicy(cf clusterFacts, np *containerpb.NodePool, machine *gketpu.MachineType) *apiError {
	pp := np.GetPlacementPolicy()
	name := pp.GetPolicyName()
	if name == "" || cf.policies == nil {
		return nil
	}
	pb, key := cf.policies(name)
	switch {
	case key == "":
		return errInvalid("Node pool %q: placement policy %q is not in the node pool's project and region %q; the resource policy "+
			"must be in the same project and region as the node pool.", np.Name, name, zoneRegion(cf.location))
	case pb == nil:
		return errInvalid("Node pool %q: resource policy %q (%s) was not found; placementPolicy.policyName must name a resource "+
			"policy in the same project and region as the node pool.", np.Name, name, key)
	}
	if machine == nil || !machine.Generation.MultiHostWorkloadPolicy {
		return nil
	}
	wp := pb.WorkloadPolicy
	switch {
	case wp == nil:
		return errInvalid("Node pool %q: resource policy %q is not a workload policy; %s TPU slices are placed by a HIGH_THROUGHPUT "+
			"workload policy with an accelerator topology.", np.Name, name, machine.Generation.Name)
	case wp.AcceleratorTopology == "":
		return errInvalid("Node pool %q: workload policy %q has no acceleratorTopology: does not support TPU topology with group "+
			"placement policy and workload policy at the same time.", np.Name, name)
	case pp.GetTpuTopology() == "":
		np.PlacementPolicy.TpuTopology = wp.AcceleratorTopology
	case pp.GetTpuTopology() != wp.AcceleratorTopology:
		return errInvalid("Node pool %q: TPU topology %s differs from the accelerator topology %s of workload policy %q.",
			np.Name, pp.GetTpuTopology(), wp.AcceleratorTopology, name)
	}
	return nil
}
