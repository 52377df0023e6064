package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
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
	When: "with `upgrade_strategy = \"Recreate\"`, on a change that KubeRay would bring up a second RayCluster for (the table of " +
		"changes above: its Ray version, image, head, history server, a worker group removed or its Pods' settings), with downtime " +
		"between the two RayClusters; with `NewCluster` (the default) such a change is an update that brings up a second RayCluster " +
		"on free slices",
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
// checks the slices (checkRaySlices) and the deletion delay. An update then does one of, as
// KubeRay meets the change (ray_service_change.go):
//   - a change of the rayClusterConfig that KubeRay makes a new RayCluster for: with
//     upgrade_strategy NewCluster an upgrade, which the plan refuses when the slices it needs are
//     not free (planUpgrade); with Recreate, or for a slice replaced by one of another shape, a
//     replacement;
//   - the RayService or its slices' claims are not what the configuration asks for (in_sync
//     false): an apply that brings them in line, KubeRay perhaps serving from another RayCluster;
//   - a change KubeRay leaves to raytpu (replicas, slices moved, spares) or applies in place
//     (groups appended): an update of the RayCluster that serves, which the plan's warning details;
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
	defaulted := imageDefaulted(ctx, req.Plan, plan.rayConfigModel)
	if defaulted {
		// As the framework plans any other change: what KubeRay makes of it is known after.
		planReapply(&plan.rayOutputsModel)
		plan.RayClusterName, plan.Applications = types.StringUnknown(), types.MapUnknown(types.StringType)
	}
	if req.State.Raw.IsNull() {
		checkDeletionDelay(ctx, plan, &resp.Diagnostics)
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
	checkDeletionDelay(ctx, plan, &resp.Diagnostics)
	changes := clusterConfigChanges(plan.rayConfigModel, state.rayConfigModel)
	change := kube.ConfigSame
	if len(changes) > 0 {
		change, _ = classifyServiceChange(ctx, r.planClient(ctx, "planning raytpu_ray_service", &resp.Diagnostics), plan.rayConfigModel, state.rayConfigModel)
	}
	newCluster := change == kube.ConfigNewCluster
	upgrade := newCluster && plan.UpgradeStrategy.ValueString() != upgradeRecreate
	prior := &rayPlanState{config: state.rayConfigModel, settings: state.GroupSettings, secondCluster: upgrade}
	slices := r.checkRaySlices(ctx, plan.rayConfigModel, prior, rayServiceKind, &resp.Diagnostics)
	switch {
	case slices == slicesReshaped:
		resp.RequiresReplace.Append(append(changes, path.Root("worker_groups"))...)
	case newCluster && !upgrade:
		resp.RequiresReplace.Append(changes...)
	case upgrade:
		checkHeadServiceUpgrade(ctx, plan.rayConfigModel, state.rayConfigModel, &resp.Diagnostics)
		planUpgrade(ctx, &plan, state, changes, &resp.Diagnostics)
	case !state.InSync.IsNull() && !state.InSync.ValueBool(), slices == slicesUnclaimed:
		// Not what the configuration and the slices ask for: an apply brings the RayService and its
		// slices' claims in line; KubeRay may serve from another RayCluster by then.
		planReapply(&plan.rayOutputsModel)
		plan.RayClusterName, plan.Applications = types.StringUnknown(), types.MapUnknown(types.StringType)
	case len(changes) > 0:
		// On the RayCluster that serves: by raytpu (the same hash) or by KubeRay (groups appended).
		plan.RayClusterName, plan.InSync = state.RayClusterName, types.BoolValue(true)
		planReapply(&plan.rayOutputsModel)
		resp.Diagnostics.AddWarning("RayService Changed On The RayCluster That Serves", fmt.Sprintf("Changing %s of raytpu_ray_service "+
			"%s keeps %s: %s.", attributeNames(changes), state.ID.ValueString(), orThe(state.RayClusterName.ValueString()),
			describeInPlace(ctx, plan.rayConfigModel, state.rayConfigModel, change)))
	case !plan.ServeConfigV2.Equal(state.ServeConfigV2) || !plan.Timeouts.Equal(state.Timeouts) || !plan.UpgradeStrategy.Equal(state.UpgradeStrategy) ||
		!plan.DeletionDelay.Equal(state.DeletionDelay):
		// In place: the RayCluster that serves stays.
		plan.RayClusterName, plan.GroupSettings, plan.InSync = state.RayClusterName, state.GroupSettings, types.BoolValue(true)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if !defaulted && slices == slicesSame && state.InSync.ValueBool() && quantityTextEdit(ctx, resp.Plan, req.State) {
		resp.Diagnostics.Append(keepComputed(ctx, &resp.Plan, req.State)...)
	}
}

// clusterConfigChanges are the attributes of rayClusterConfigPaths whose planned value is not the
// state's (an unknown one, such as the id of a slice being replaced, is a change), quantities
// compared as quantities.
func clusterConfigChanges(plan, state rayConfigModel) []path.Path {
	values := func(m rayConfigModel) []attr.Value {
		return []attr.Value{m.RayVersion, m.PythonVersion, m.Image, m.Head, m.WorkerGroups, m.HistoryServer}
	}
	planned, was := values(plan), values(state)
	var out []path.Path
	for i, p := range rayClusterConfigPaths {
		if !equalQuantityAware(planned[i], was[i]) {
			out = append(out, p)
		}
	}
	return out
}

// checkDeletionDelay refuses an old_cluster_deletion_delay that an upgrade's apply could not wait
// out: the apply waits until KubeRay has deleted the RayCluster that served before, and its slices
// are released only then, within timeouts.update.
func checkDeletionDelay(ctx context.Context, plan rayServiceModel, diags *diag.Diagnostics) {
	if plan.DeletionDelay.IsUnknown() || plan.DeletionDelay.IsNull() || plan.Timeouts.IsUnknown() {
		return
	}
	update, d := plan.Timeouts.Update(ctx, rayServiceTimeouts.Update)
	if d.HasError() {
		return
	}
	delay := time.Duration(plan.DeletionDelay.ValueInt64()) * time.Second
	if delay >= update {
		diags.AddAttributeError(path.Root("old_cluster_deletion_delay"), "Deletion Delay Outlasts The Update Timeout",
			fmt.Sprintf("old_cluster_deletion_delay is %d seconds, but an upgrade's apply waits for KubeRay to delete the RayCluster that "+
				"served before, and releases its slices, within timeouts.update (%s). Set old_cluster_deletion_delay below %d seconds, "+
				"leaving time for the new RayCluster to come up, or raise timeouts.update above %s.",
				plan.DeletionDelay.ValueInt64(), update, int64(update/time.Second), delay))
	}
}
