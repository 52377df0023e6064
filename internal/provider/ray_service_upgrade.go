package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// An upgrade (upgrade_strategy NewCluster): KubeRay brings up a second RayCluster from the new
// rayClusterConfig beside the one that serves, sends it the Serve config, points the Services at it
// once every application runs there, and deletes the first RayCluster after its deletion delay
// (ray-operator v1.5.0 controllers/ray/rayservice_controller.go: shouldPrepareNewCluster,
// reconcilePromotionAndServingStatus, cleanUpRayClusterInstance, RayClusterDeletionDelayDuration
// 60 s). The second RayCluster's workers need slices of their own while the first one's still run:
// on TPUs, where a slice runs one replica, a worker group that keeps the slices of the one that
// serves would wait for ever (kuberay #4239, #1476). So the plan refuses such an upgrade and says
// what works, and the apply lets KubeRay bring up the second RayCluster only for the upgrade
// (kube.RayServiceSpec.Upgrade), waits until it serves and the first is gone, and releases the
// slices no group has any more.

// planUpgrade checks that every worker group of plan asks for slices that the RayCluster serving
// now (of state) does not hold, refusing the upgrade with the options when one does, and saying in
// the plan which slices it brings up otherwise. What the new RayCluster reports is known after.
func planUpgrade(ctx context.Context, plan *rayServiceModel, state rayServiceModel, changes []path.Path, diags *diag.Diagnostics) {
	plan.RayClusterName, plan.InSync = types.StringUnknown(), types.BoolValue(true)
	plan.GroupSettings = types.MapUnknown(types.ObjectType{AttrTypes: groupSettingsAttrTypes})
	serving := state.RayClusterName.ValueString()
	held := map[gke.NodePoolID]bool{}
	for _, id := range modelSlices(ctx, state.rayConfigModel) {
		held[id] = true
	}
	what := attributeNames(changes)
	var groups []rayWorkerGroupModel
	if plan.WorkerGroups.IsUnknown() || plan.WorkerGroups.ElementsAs(ctx, &groups, false).HasError() {
		return // known at apply only: nothing to check
	}
	var needs, leaving []string
	for i, g := range groups {
		p := path.Root("worker_groups").AtListIndex(i)
		name := g.Name.ValueString()
		if g.Slices.IsNull() {
			needs = append(needs, fmt.Sprintf("worker group %q: %d %s %s node pool(s) from node auto-provisioning", name,
				groupReplicas(g), g.Generation.ValueString(), g.Topology.ValueString()))
			continue
		}
		if g.Slices.IsUnknown() {
			needs = append(needs, fmt.Sprintf("worker group %q: slices known after the apply", name))
			continue
		}
		var free, busy []string
		for _, e := range g.Slices.Elements() {
			s, _ := e.(types.String)
			id, err := gke.ParseNodePoolID(s.ValueString())
			switch {
			case s.IsUnknown():
				free = append(free, "a slice this apply creates")
			case err != nil:
				// ValidateConfig's to report.
			case held[id]:
				busy = append(busy, id.Name)
			default:
				free = append(free, id.Name)
			}
		}
		if len(busy) > 0 {
			diags.AddAttributeError(p.AtName("slices"), "Upgrade Needs Free Slices", fmt.Sprintf("changing %s makes KubeRay bring up a "+
				"second RayCluster beside %s, which serves until every application runs on the new one; worker group %q of the new one "+
				"asks for %s, which %s holds, so its workers would wait for ever. Either: change only serve_config_v2 for now, which "+
				"is applied in place on %s; or give worker group %q free slices (raytpu_slice ids this RayService does not use, "+
				"created in the same apply if need be), and the slices it leaves are released once the upgrade ends; or set "+
				"upgrade_strategy = %q, which replaces the RayService on the same slices, with downtime between the two RayClusters.",
				what, orThe(serving), name, strings.Join(busy, ", "), orThe(serving), orThe(serving), name, upgradeRecreate))
			continue
		}
		needs = append(needs, fmt.Sprintf("worker group %q: %s", name, strings.Join(free, ", ")))
	}
	for _, id := range leftSlices(ctx, state.rayConfigModel, plan.rayConfigModel) {
		leaving = append(leaving, id.Name)
	}
	if diags.HasError() {
		return
	}
	diags.AddWarning("RayService Upgrade Brings Up A Second RayCluster", fmt.Sprintf("Changing %s of raytpu_ray_service %s makes KubeRay "+
		"bring up a second RayCluster beside %s, on %s. %s serves until every application runs on the new one; then KubeRay "+
		"deletes it, and the apply waits until it is gone and releases the slices no worker group has any more (%s).",
		what, state.ID.ValueString(), orThe(serving), strings.Join(needs, "; "), orThe(serving), orNone(leaving)))
}

// finishUpgrade ends an upgrade once the new RayCluster serves: the RayService at rest again (no
// second RayCluster for a change made outside Terraform) and the RayCluster that served before
// gone. The update then releases the slices no worker group has any more (releaseLeftSlices).
func (r *rayServiceResource) finishUpgrade(ctx context.Context, k *kube.Client, rest *kube.RayServiceSpec, m, prior *rayServiceModel,
	action string, diags *diag.Diagnostics) {
	obj, err := kube.RayServiceObject(*rest)
	if err == nil {
		_, err = k.ApplyRayService(ctx, obj)
	}
	if err != nil {
		diags.AddError("Error Applying RayService", fmt.Sprintf("%s: the upgrade is done, but setting the RayService's upgrade strategy "+
			"back to None failed: %s", action, err))
		return
	}
	if old := prior.RayClusterName.ValueString(); old != "" && old != m.RayClusterName.ValueString() {
		w := k.WatchRayCluster(ctx, m.Namespace.ValueString(), old)
		err := w.WaitForGone(ctx)
		w.Close()
		if err != nil {
			diags.AddError("RayCluster Not Deleted", fmt.Sprintf("%s: %s now serves, but KubeRay has not deleted RayCluster %s, which "+
				"served before, within the update's timeout: %s. Its slices stay claimed until the next apply.", action,
				m.RayClusterName.ValueString(), old, err))
			return
		}
	}
}

// attributeNames are the paths' names, for a message: "ray_version and worker_groups".
func attributeNames(paths []path.Path) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p.String()
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

// orThe is the RayCluster's name, or what stands for it while none is known.
func orThe(cluster string) string {
	if cluster == "" {
		return "the RayCluster that serves"
	}
	return "RayCluster " + cluster
}
