package provider

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ resource.ResourceWithMoveState = (*sliceResource)(nil)

// googleNodePoolType is the google provider's node pool resource, which moves into raytpu_slice.
const googleNodePoolType = "google_container_node_pool"

// MoveState takes over a TPU node pool from google_container_node_pool without recreating it:
//
//	moved {
//	  from = google_container_node_pool.tpu
//	  to   = raytpu_slice.tpu
//	}
//
// It writes what an import writes, so the refresh that follows reads the pool from GKE exactly as
// after `terraform import`; the plan then shows nothing, or in-place changes for settings the
// configuration chose differently. A pool that no raytpu_slice can describe fails here, at plan,
// rather than as a replacement later.
func (r *sliceResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: r.moveFromGoogle}}
}

func (r *sliceResource) moveFromGoogle(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if !movedFromGoogle(req, resp, googleNodePoolType, "raytpu_slice") {
		return
	}
	var source googleNodePoolState
	if err := decodeGoogleState(req.SourceRawState.JSON, googleNodePoolType, &source); err != nil {
		resp.Diagnostics.AddError("Invalid Moved Source State", err.Error()+".")
		return
	}
	id, err := source.poolID()
	if err != nil {
		resp.Diagnostics.AddError("Invalid Moved Source State", fmt.Sprintf("The %s to move into raytpu_slice: %s.", googleNodePoolType, err))
		return
	}
	if why := unmappableNodePool(source); why != "" {
		resp.Diagnostics.AddError("Node Pool Is No raytpu_slice",
			fmt.Sprintf("%s %s cannot move into raytpu_slice: %s. A raytpu_slice is one TPU slice: one TPU machine type in one zone, "+
				"with exactly the hosts its topology needs (or none while queued or autoscaled). Keep this pool in %s and remove the "+
				"moved block.", googleNodePoolType, id, why, googleNodePoolType))
		return
	}
	resp.Diagnostics.Append(setAttributes(ctx, &resp.TargetState, sliceAdoptedAttributes(id))...)
}

// sliceAdoptedAttributes is what an import or a move knows of a slice before Read: its id and the
// defaults of the settings that live only in Terraform.
func sliceAdoptedAttributes(id gke.NodePoolID) map[string]any {
	return map[string]any{
		"id": id.String(), "cluster": id.Cluster.String(), "name": id.Name,
		"wait_for_hosts": true, "host_wait_timeout": "10m", "replace_unhealthy": false,
	}
}

// adoptedSliceModel is the slice of node pool id as an import holds it before Read: its schema's
// nulls, typed, with sliceAdoptedAttributes set.
func adoptedSliceModel(ctx context.Context, id gke.NodePoolID) (sliceResourceModel, diag.Diagnostics) {
	var schemaResp resource.SchemaResponse
	(&sliceResource{}).Schema(ctx, resource.SchemaRequest{}, &schemaResp)
	diags := schemaResp.Diagnostics
	state := tfsdk.State{Schema: schemaResp.Schema, Raw: tftypes.NewValue(schemaResp.Schema.Type().TerraformType(ctx), nil)}
	diags.Append(setAttributes(ctx, &state, sliceAdoptedAttributes(id))...)
	var m sliceResourceModel
	if !diags.HasError() {
		diags.Append(state.Get(ctx, &m)...)
	}
	return m, diags
}

// unmappableNodePool says why the pool the google provider recorded is no slice raytpu_slice
// can express; "" when it is one. It derives the slice as reading an imported pool does
// (nodePoolSlice), and adds what an import tolerates but a slice cannot hold: a pool in several
// zones, or a node count other than the slice's hosts.
func unmappableNodePool(s googleNodePoolState) string {
	pool := &containerpb.NodePool{Name: s.Name, Config: &containerpb.NodeConfig{}, PlacementPolicy: &containerpb.NodePool_PlacementPolicy{}}
	for _, c := range s.NodeConfig {
		pool.Config.MachineType = c.MachineType
	}
	for _, p := range s.PlacementPolicy {
		pool.PlacementPolicy.TpuTopology, pool.PlacementPolicy.PolicyName = p.TPUTopology, p.PolicyName
	}
	count := s.NodeCount
	if count == nil {
		count = s.InitialNodeCount
	}
	if count != nil {
		pool.InitialNodeCount = int32(*count)
	}
	if pool.Config.MachineType == "" {
		return "its state records no node_config.machine_type (refresh it with the google provider first)"
	}
	slice, err := nodePoolSlice(pool, nil)
	if err != nil {
		return fmt.Sprintf("it is not a TPU slice raytpu can describe (%s)", err)
	}
	if len(s.NodeLocations) > 1 {
		return fmt.Sprintf("it spans the zones %v, while a TPU slice lives in one zone", s.NodeLocations)
	}
	scaled := len(s.Autoscaling) > 0
	queued := len(s.QueuedProvisioning) > 0 && s.QueuedProvisioning[0].Enabled
	waiting := (scaled || queued) && count != nil && *count == 0
	if count != nil && int(*count) != slice.Hosts && !waiting {
		return fmt.Sprintf("node_count is %d, while topology %s on %s is %d hosts", *count, slice.Topology, slice.MachineType.Name, slice.Hosts)
	}
	if scaled && !autoscalesAsSlice(s, slice.Hosts) {
		return fmt.Sprintf("it autoscales between other bounds than 0 and %d nodes, while a slice scales as one unit", slice.Hosts)
	}
	return ""
}

// autoscalesAsSlice reports whether the pool's autoscaling bounds are those of one slice: between
// no hosts and all of them.
func autoscalesAsSlice(s googleNodePoolState, hosts int) bool {
	a := s.Autoscaling[0]
	bound := func(v *int64, want ...int64) bool {
		if v == nil {
			return true
		}
		for _, w := range want {
			if *v == w {
				return true
			}
		}
		return false
	}
	return bound(a.MinNodeCount, 0) && bound(a.TotalMinNodeCount, 0) &&
		bound(a.MaxNodeCount, 0, int64(hosts)) && bound(a.TotalMaxNodeCount, 0, int64(hosts))
}
