package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ resource.ResourceWithMoveState = (*rayOperatorResource)(nil)

// googleClusterType is the google provider's cluster resource, whose Ray Operator add-on moves into
// raytpu_ray_operator.
const googleClusterType = "google_container_cluster"

// MoveState takes over the Ray Operator add-on of a cluster recorded by google_container_cluster:
//
//	moved {
//	  from = google_container_cluster.ray
//	  to   = raytpu_ray_operator.ray
//	}
//
// The cluster itself leaves Terraform's management with it: raytpu_ray_operator manages the
// add-on only, and destroying it disables the add-on, never the cluster. It writes what an import
// writes, so the refresh that follows reads the add-on from GKE; a cluster whose add-on is off is
// then planned to have it enabled.
func (r *rayOperatorResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: r.moveFromGoogle}}
}

func (r *rayOperatorResource) moveFromGoogle(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if !movedFromGoogle(req, resp, googleClusterType, "raytpu_ray_operator") {
		return
	}
	var source googleClusterState
	if err := decodeGoogleState(req.SourceRawState.JSON, googleClusterType, &source); err != nil {
		resp.Diagnostics.AddError("Invalid Moved Source State", err.Error()+".")
		return
	}
	id, err := source.clusterID()
	if err != nil {
		resp.Diagnostics.AddError("Invalid Moved Source State", fmt.Sprintf("The %s to move into raytpu_ray_operator: %s.", googleClusterType, err))
		return
	}
	enabled, logging, monitoring := source.rayOperator()
	if !enabled {
		resp.Diagnostics.AddWarning("Ray Operator Add-on Not Enabled",
			fmt.Sprintf("%s %s did not enable the Ray Operator add-on (addons_config.ray_operator_config.enabled): unless it was "+
				"enabled since, the plan enables it.", googleClusterType, id))
	}
	attributes := rayOperatorAdoptedAttributes(id)
	attributes["logging"], attributes["monitoring"] = logging, monitoring
	resp.Diagnostics.Append(setAttributes(ctx, &resp.TargetState, attributes)...)
}

// rayOperatorAdoptedAttributes is what an import or a move knows of the add-on before Read.
func rayOperatorAdoptedAttributes(id gke.ClusterID) map[string]any {
	return map[string]any{"id": id.String(), "cluster": id.String(), "wait_for_kuberay": true, "disable_on_destroy": true}
}
