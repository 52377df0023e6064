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
	path.Root("history_server"),
}

// clusterConfigReplacement: with upgrade_strategy Recreate, a change of the rayClusterConfig
// replaces the RayService (ray_service_upgrade.go says what NewCluster does instead).
var clusterConfigReplacement = PlanReplacement{
	Attributes: rayClusterConfigPaths,
	When: "with `upgrade_strategy = \"Recreate\"`, on any change of what the RayCluster is made of (its Ray version, image, head, " +
		"worker groups or history server), with downtime between the two RayClusters; with `NewCluster` (the default) such a change is an update " +
		"that brings up a second RayCluster on free slices",
}

// reshapedSliceReplacement: a slice replaced under its id by one of another shape changes the
// worker group's numOfHosts, selector or chips, so the rayClusterConfig, while the RayCluster that
// serves has lost the slice.
var reshapedSliceReplacement = PlanReplacement{
	Attributes: []path.Path{path.Root("worker_groups")},
	When:       "when a slice of a worker group is replaced by one of another shape (the same `raytpu_slice` id, a new node pool)",
}

func (r *rayServiceResource) PlanReplacements() []PlanReplacement {
	return []PlanReplacement{clusterConfigReplacement, reshapedSliceReplacement}
}

// ModifyPlan fills what the plan can know (planRayOutputs, the Services' names and addresses) and
// checks the slices (checkRaySlices). An update then does one of:
//   - a change of what the RayCluster is made of: with upgrade_strategy NewCluster an upgrade,
//     which the plan refuses when the slices it needs are not free (planUpgrade); with Recreate, or
//     for a slice replaced by one of another shape, a replacement;
//   - the RayService or its slices' claims are not what the configuration asks for (in_sync
//     false): an apply that brings them in line, KubeRay perhaps serving from another RayCluster;
//   - anything else (the Serve config, timeouts, upgrade_strategy): an update in place, on the
//     RayCluster that serves.
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
	planRayOutputs(ctx, req.Config, &plan.rayConfigModel, &plan.rayOutputsModel, &resp.Diagnostics)
	if req.State.Raw.IsNull() {
		plan.InSync = types.BoolValue(true)
		r.checkRaySlices(ctx, plan.rayConfigModel, nil, rayServiceKind, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	var state rayServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	changes := clusterConfigChanges(plan.rayConfigModel, state.rayConfigModel)
	upgrade := len(changes) > 0 && plan.UpgradeStrategy.ValueString() != upgradeRecreate
	prior := &rayPlanState{config: state.rayConfigModel, settings: state.GroupSettings, secondCluster: upgrade}
	change := r.checkRaySlices(ctx, plan.rayConfigModel, prior, rayServiceKind, &resp.Diagnostics)
	switch {
	case change == slicesReshaped:
		resp.RequiresReplace.Append(append(changes, path.Root("worker_groups"))...)
	case len(changes) > 0 && !upgrade:
		resp.RequiresReplace.Append(changes...)
	case upgrade:
		planUpgrade(ctx, &plan, state, changes, &resp.Diagnostics)
	case !state.InSync.IsNull() && !state.InSync.ValueBool(), change == slicesUnclaimed:
		// Not what the configuration and the slices ask for: an apply brings the RayService and its
		// slices' claims in line; KubeRay may serve from another RayCluster by then.
		planReapply(&plan.rayOutputsModel)
		plan.RayClusterName, plan.Applications = types.StringUnknown(), types.MapUnknown(types.StringType)
	case !plan.ServeConfigV2.Equal(state.ServeConfigV2) || !plan.Timeouts.Equal(state.Timeouts) || !plan.UpgradeStrategy.Equal(state.UpgradeStrategy):
		// In place: the RayCluster that serves stays.
		plan.RayClusterName, plan.GroupSettings, plan.InSync = state.RayClusterName, state.GroupSettings, types.BoolValue(true)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// clusterConfigChanges are the attributes of rayClusterConfigPaths whose planned value is not the
// state's (an unknown one, such as the id of a slice being replaced, is a change).
func clusterConfigChanges(plan, state rayConfigModel) []path.Path {
	values := func(m rayConfigModel) []attr.Value {
		return []attr.Value{m.RayVersion, m.PythonVersion, m.Image, m.Head, m.WorkerGroups, m.HistoryServer}
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
