package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// readInto refreshes state from the RayService rs as it is: whether it is what its configuration
// and its slices ask for (in_sync, with a warning saying why not), the RayCluster it serves from
// and that cluster's Pods, and the applications' statuses.
func (r *rayServiceResource) readInto(ctx context.Context, client *gke.Client, k *kube.Client, rs *rayv1.RayService, state *rayServiceModel,
	action string, diags *diag.Diagnostics) {
	var resolving diag.Diagnostics
	spec, groups := resolveRayConfig(ctx, client, state.rayConfigModel, kube.RayServiceClaimer(state.Name.ValueString()), &resolving)
	cluster := rs.Status.ActiveServiceStatus.RayClusterName
	if cluster == "" {
		cluster = rs.Status.PendingServiceStatus.RayClusterName
	}
	state.RayClusterName = types.StringValue(cluster)
	if !resolving.HasError() {
		state.GroupSettings = groupSettings(groups, cluster, state.RayVersion.ValueString())
	}
	ok, why := rayServiceInSync(ctx, k, rs, kube.RayServiceSpec{RayClusterSpec: spec, ServeConfigV2: state.ServeConfigV2.ValueString(),
		DeletionDelaySeconds: int32(state.DeletionDelay.ValueInt64())}, groups, resolving)
	if !ok {
		diags.AddWarning("RayService Not As Configured", fmt.Sprintf("%s: %s. The next apply brings the RayService in line with the "+
			"configuration and the slices.", action, why))
	}
	state.InSync = types.BoolValue(ok)
	podsHealthy := false
	state.Placement = flattenPlacement(nil)
	state.GroupSlices = groupSliceRoles(ctx, nil, nil, nil)
	if cluster != "" {
		// The RayCluster KubeRay made from the rayClusterConfig, as it stands.
		rc, err := k.GetRayCluster(ctx, rs.Namespace, cluster)
		if err == nil {
			podsHealthy = observeRayPods(ctx, k, nil, rc, &state.rayOutputsModel, action, diags) && state.Healthy.ValueBool()
		} else {
			diags.AddWarning("RayCluster Pods Unknown", fmt.Sprintf("%s: %s", action, err))
		}
	}
	state.setServeStatus(rs, podsHealthy)
}

// rayServiceInSync tells whether the live RayService is what the state's configuration and the
// slices as GKE holds them now ask for: the claims on the slices, the spec that applying it would
// store (a server-side dry run), and no second RayCluster coming up beside the one that serves.
// want and groups are what the configuration resolves to now, with the diagnostics of resolving it.
func rayServiceInSync(ctx context.Context, k *kube.Client, rs *rayv1.RayService, want kube.RayServiceSpec, groups []resolvedGroup, diags diag.Diagnostics) (bool, string) {
	if ok, why := resolvedInSync(groups, diags); !ok {
		return false, why
	}
	obj, err := kube.RayServiceObject(want)
	if err != nil {
		return false, err.Error()
	}
	stored, err := k.DryRunApplyRayService(ctx, obj)
	if err != nil {
		return false, err.Error()
	}
	if specHash(stored.Spec) != specHash(rs.Spec) {
		return false, "the RayService differs from what its configuration and slices ask for (changed outside Terraform)"
	}
	if ok, why := historyAccountInSync(ctx, k, want.RayClusterSpec, kube.RayServiceClaimer(want.Name)); !ok {
		return false, why
	}
	if pending := rs.Status.PendingServiceStatus.RayClusterName; pending != "" && rs.Status.ActiveServiceStatus.RayClusterName != "" {
		return false, fmt.Sprintf("KubeRay is bringing up a second RayCluster, %s, beside %s", pending, rs.Status.ActiveServiceStatus.RayClusterName)
	}
	return true, ""
}
