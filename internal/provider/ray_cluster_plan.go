package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ValidateConfig checks what the configuration alone decides (validateRayConfig).
func (r *rayClusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m rayClusterModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateRayConfig(ctx, m.rayConfigModel, &resp.Diagnostics)
}

// ModifyPlan fills what the plan can know (planRayConfig), warns what an update restarts, and plans
// a new apply when the RayCluster was changed outside Terraform or a slice replaced under its id.
func (r *rayClusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var plan rayClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *rayClusterModel
	if !req.State.Raw.IsNull() {
		state = &rayClusterModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		plannedRestarts(ctx, state.rayConfigModel, plan.rayConfigModel).warn(&resp.Diagnostics)
		if !state.InSync.IsNull() && !state.InSync.ValueBool() {
			// Not what the configuration and the slices ask for (inSync): plan an apply that brings
			// the RayCluster, its Pods and its slices' claims in line.
			planReapply(&plan.rayOutputsModel)
		}
	} else {
		plan.InSync = types.BoolValue(true)
	}
	var prior *rayPlanState
	if state != nil {
		prior = &rayPlanState{config: state.rayConfigModel, settings: state.GroupSettings}
	}
	reapply := r.planRayConfig(ctx, req.Config, &plan.rayConfigModel, &plan.rayOutputsModel, prior, rayClusterKind, &resp.Diagnostics) != slicesSame ||
		imageDefaulted(ctx, req.Plan, plan.rayConfigModel)
	if reapply {
		// A slice replaced keeps its id, so without this the plan would be empty, and at apply
		// Terraform would skip the update planned while the id was unknown. An image defaulted
		// again restarts the Pods.
		planReapply(&plan.rayOutputsModel)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if !reapply && state != nil && state.InSync.ValueBool() && quantityTextEdit(ctx, resp.Plan, req.State) {
		resp.Diagnostics.Append(keepComputed(ctx, &resp.Plan, req.State)...)
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
