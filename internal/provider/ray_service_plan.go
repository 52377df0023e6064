package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ValidateConfig checks what the configuration alone decides (validateRayConfig); serve_config_v2
// has its own validator.
func (r *rayServiceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m rayServiceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateRayConfig(ctx, m.rayConfigModel, &resp.Diagnostics)
}

// rayClusterConfigPaths are the attributes that the RayService's rayClusterConfig is made of.
var rayClusterConfigPaths = []path.Path{
	path.Root("ray_version"), path.Root("python_version"), path.Root("image"), path.Root("head"), path.Root("worker_groups"),
}

// clusterConfigReplacement: KubeRay upgrades a RayService whose rayClusterConfig changes by bringing
// up a whole second RayCluster beside the first and moving traffic to it once it serves
// (ray-operator v1.5.0 controllers/ray/rayservice_controller.go, shouldPrepareNewCluster): on TPU
// slices that the first one holds, the second waits for ever. raytpu_ray_service replaces the
// RayService instead, which ends the first RayCluster before the second starts.
var clusterConfigReplacement = PlanReplacement{
	Attributes: rayClusterConfigPaths,
	When: "on any change of what the RayCluster is made of (its Ray version, image, head or worker groups): KubeRay would bring up " +
		"a second RayCluster beside the first for it, which the slices the first one holds leave no room for, so the RayService " +
		"is replaced, with the downtime between the two",
}

// reshapedSliceReplacement: a slice replaced under its id by one of another shape changes the
// worker group's numOfHosts, selector or chips, so the rayClusterConfig.
var reshapedSliceReplacement = PlanReplacement{
	Attributes: []path.Path{path.Root("worker_groups")},
	When:       "when a slice of a worker group is replaced by one of another shape (the same `raytpu_slice` id, a new node pool)",
}

func (r *rayServiceResource) PlanReplacements() []PlanReplacement {
	return []PlanReplacement{clusterConfigReplacement, reshapedSliceReplacement}
}

// ModifyPlan fills what the plan can know (planRayConfig, the Services' names and addresses);
// replaces the RayService when what its RayCluster is made of changes (clusterConfigReplacement,
// reshapedSliceReplacement), so that an update only ever changes the Serve config or brings the
// RayService and its slices' claims in line; and plans that update when the RayService was changed
// outside Terraform or a slice lost its claim.
func (r *rayServiceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var plan rayServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.setAddresses()
	var (
		state *rayServiceModel
		prior *rayPlanState
	)
	if !req.State.Raw.IsNull() {
		state = &rayServiceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		prior = &rayPlanState{config: state.rayConfigModel, settings: state.GroupSettings}
	} else {
		plan.InSync = types.BoolValue(true)
	}
	change := r.planRayConfig(ctx, req.Config, &plan.rayConfigModel, &plan.rayOutputsModel, prior, rayServiceKind, &resp.Diagnostics)
	if state == nil || resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	replace := clusterConfigChanges(plan.rayConfigModel, state.rayConfigModel)
	if change == slicesReshaped {
		replace = append(replace, path.Root("worker_groups"))
	}
	switch {
	case len(replace) > 0:
		resp.RequiresReplace.Append(replace...)
	case !state.InSync.IsNull() && !state.InSync.ValueBool(), change == slicesUnclaimed:
		// Not what the configuration and the slices ask for: an apply brings the RayService and its
		// slices' claims in line; KubeRay may serve from another RayCluster by then.
		planReapply(&plan.rayOutputsModel)
		plan.RayClusterName, plan.Applications = types.StringUnknown(), types.MapUnknown(types.StringType)
	case !plan.ServeConfigV2.Equal(state.ServeConfigV2):
		// The new Serve config goes to the RayCluster that serves, which stays.
		plan.RayClusterName, plan.GroupSettings, plan.InSync = state.RayClusterName, state.GroupSettings, types.BoolValue(true)
		plan.Status, plan.Healthy, plan.Applications = types.StringUnknown(), types.BoolUnknown(), types.MapUnknown(types.StringType)
		plan.Placement = types.MapUnknown(placementType.ElemType)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// clusterConfigChanges are the attributes of rayClusterConfigPaths whose planned value is not the
// state's (an unknown one, such as the id of a slice being replaced, is a change).
func clusterConfigChanges(plan, state rayConfigModel) []path.Path {
	values := func(m rayConfigModel) []attr.Value {
		return []attr.Value{m.RayVersion, m.PythonVersion, m.Image, m.Head, m.WorkerGroups}
	}
	planned, was := values(plan), values(state)
	var out []path.Path
	for i, p := range rayClusterConfigPaths {
		if !planned[i].Equal(was[i]) {
			out = append(out, p)
		}
	}
	return out
}
