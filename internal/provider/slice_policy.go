package provider

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// GKE places a multi-host tpu7x slice only with a Compute Engine workload policy: "You create a
// workload policy and then apply it by using the --placement-policy flag. This policy replaces the
// --tpu-topology flag" (GKE "About Ironwood (TPU7x)"), HIGH_THROUGHPUT with the slice's accelerator
// topology, in the node pool's project and region (containerpb NodePool.PlacementPolicy.policy_name:
// "If not found, InvalidArgument"). raytpu makes one per slice unless placement_policy_name names
// one, and deletes its own with the slice.

// workloadPolicyName is the name of the workload policy raytpu makes for a slice: the node pool's
// name and a hash of its full id, since a pool's name is unique only within its cluster, and at
// most 49 characters, within Compute Engine's 63. A policy of that name is the slice's own.
func workloadPolicyName(id gke.NodePoolID) string {
	sum := sha256.Sum256([]byte(id.String()))
	return fmt.Sprintf("%s-%x", id.Name, sum[:4])
}

// placeSlice readies the workload policy of a multi-host tpu7x slice before its node pool is
// requested: its own is created, one named by placement_policy_name is checked. own reports a
// policy made for this slice.
func (r *sliceResource) placeSlice(ctx context.Context, client *gke.Client, plan *sliceResourceModel, s *tpu.Slice, id gke.NodePoolID) (own bool, diags diag.Diagnostics) {
	if s.Placement != tpu.PlacementWorkloadPolicy {
		return false, diags
	}
	project, region, topology := id.Cluster.Project, gke.Region(id.Cluster.Location), s.Topology.String()
	name := plan.PlacementPolicyName.ValueString()
	if plan.PlacementPolicyName.IsUnknown() || name == "" {
		name = workloadPolicyName(id)
		plan.PlacementPolicyName = types.StringValue(name)
	}
	if name == workloadPolicyName(id) {
		if err := client.CreateWorkloadPolicy(ctx, project, region, name, topology); err != nil {
			diags.AddError("Error Creating Slice", fmt.Sprintf("creating raytpu_slice (%s): creating its workload policy %s in %s: %s",
				id, name, region, gke.WithAdvice(err)))
			return false, diags
		}
		return true, diags
	}
	p, err := client.GetWorkloadPolicy(ctx, project, region, name)
	switch {
	case gke.IsNotFound(err):
		diags.AddAttributeError(path.Root("placement_policy_name"), "Workload Policy Not Found",
			fmt.Sprintf("project %s has no resource policy %s in %s, the region of %s. Create it (workload policy type %s, "+
				"accelerator topology %s) or leave placement_policy_name unset for raytpu to make one for this slice.",
				project, name, region, id.Cluster, gke.WorkloadPolicyType, topology))
	case err != nil:
		diags.AddAttributeError(path.Root("placement_policy_name"), "Workload Policy Unreadable",
			fmt.Sprintf("reading resource policy %s in %s: %s", name, region, gke.WithAdvice(err)))
	case p.Type != gke.WorkloadPolicyType || p.AcceleratorTopology != topology:
		diags.AddAttributeError(path.Root("placement_policy_name"), "Workload Policy Does Not Fit the Slice",
			fmt.Sprintf("resource policy %s is a workload policy of type %q with accelerator topology %q; a %s %s slice needs "+
				"type %s with accelerator topology %s. Use a policy that has them, or leave placement_policy_name unset for "+
				"raytpu to make one.", name, p.Type, p.AcceleratorTopology, s.Generation.Name, topology, gke.WorkloadPolicyType, topology))
	}
	return false, diags
}

// deleteOwnWorkloadPolicy deletes the workload policy raytpu made for slice id, once no node pool
// uses it; one of another name is not the slice's and stays.
func deleteOwnWorkloadPolicy(ctx context.Context, client *gke.Client, id gke.NodePoolID, name string) diag.Diagnostics {
	var diags diag.Diagnostics
	if name == "" || name != workloadPolicyName(id) {
		return diags
	}
	if err := client.DeleteWorkloadPolicy(ctx, id.Cluster.Project, gke.Region(id.Cluster.Location), name); err != nil {
		diags.AddWarning("Workload Policy Left Behind", fmt.Sprintf("deleting workload policy %s, made for raytpu_slice (%s): %s. "+
			"Delete it by hand when no node pool uses it.", name, id, gke.WithAdvice(err)))
	}
	return diags
}
