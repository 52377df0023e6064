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
	// The claims of the generation its groups select (kube.RayServiceGenerationClaimer).
	spec, groups := resolveRayConfig(ctx, client, state.rayConfigModel, kube.RayServiceClaimerOf(rs), &resolving)
	cluster := rs.Status.ActiveServiceStatus.RayClusterName
	if cluster == "" {
		cluster = rs.Status.PendingServiceStatus.RayClusterName
	}
	state.RayClusterName = types.StringValue(cluster)
	if !resolving.HasError() {
		state.GroupSettings = groupSettings(groups, cluster, state.RayVersion.ValueString())
	}
	// The RayCluster KubeRay made from the rayClusterConfig, as it stands.
	var (
		rc      *rayv1.RayCluster
		rcErr   error
		pods    []kube.RayPod
		podsErr error
	)
	if cluster != "" {
		rc, rcErr = k.GetRayCluster(ctx, rs.Namespace, cluster)
	}
	if rc != nil && rcErr == nil {
		// Listed once, for both what the RayCluster runs (rayClusterServes) and the outputs.
		pods, podsErr = k.RayClusterPods(ctx, rs.Namespace, cluster)
	}
	ok, why := rayServiceInSync(ctx, k, rs, kube.RayServiceSpec{RayClusterSpec: spec, ServeConfigV2: state.ServeConfigV2.ValueString(),
		DeletionDelaySeconds: int32(state.DeletionDelay.ValueInt64())}, groups, resolving)
	switch {
	case !ok || cluster == "":
	case rcErr != nil:
		ok, why = false, rcErr.Error()
	case podsErr != nil:
		ok, why = false, podsErr.Error()
	default:
		ok, why = rayClusterServes(ctx, k, rs, rc, pods, groups)
	}
	if !ok {
		diags.AddWarning("RayService Not As Configured", fmt.Sprintf("%s: %s. The next apply brings the RayService in line with the "+
			"configuration and the slices.", action, why))
	}
	state.InSync = types.BoolValue(ok)
	podsHealthy := false
	state.Placement = flattenPlacement(nil)
	state.GroupSlices = groupSliceRoles(ctx, nil, nil, nil)
	switch {
	case cluster == "":
	case rcErr != nil:
		diags.AddWarning("RayCluster Pods Unknown", fmt.Sprintf("%s: %s", action, rcErr))
	default:
		podsHealthy = observedRayPods(ctx, k, false, pods, podsErr, rc, &state.rayOutputsModel, action, diags) && state.Healthy.ValueBool()
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

// rayClusterServes tells whether rc, the RayCluster that serves, is what the RayService asks for, as
// its Pods (pods) show it: made from the RayService's rayClusterConfig (KubeRay's hash on it), each group
// with its replicas, none of them on a slice its group no longer has, and no RayCluster of the
// RayService left beside it (one an upgrade replaced, which holds its slices until it is gone).
func rayClusterServes(ctx context.Context, k *kube.Client, rs *rayv1.RayService, rc *rayv1.RayCluster, pods []kube.RayPod, groups []resolvedGroup) (bool, string) {
	cluster := rc.Name
	if rs.Status.PendingServiceStatus.RayClusterName == "" {
		if change, err := kube.ClassifyAgainstCluster(rc, rs.Spec.RayClusterSpec); err != nil || change != kube.ConfigSame {
			return false, fmt.Sprintf("RayCluster %s was not made from the RayService's rayClusterConfig, and KubeRay leaves it as it is", cluster)
		}
	}
	for i, g := range groups {
		if i >= len(rc.Spec.WorkerGroupSpecs) {
			return false, fmt.Sprintf("RayCluster %s has no worker group %q", cluster, g.Name)
		}
		if have := rc.Spec.WorkerGroupSpecs[i].Replicas; have == nil || int(*have) != g.Replicas {
			return false, fmt.Sprintf("worker group %q of RayCluster %s is not set to %d replicas", g.Name, cluster, g.Replicas)
		}
	}
	if leaving := leavingReplicas(pods, groups); len(leaving) > 0 {
		return false, fmt.Sprintf("Pod %s of worker group %q runs on node pool %s, which is not one of the group's slices", leaving[0].Name,
			leaving[0].Group, leaving[0].NodePool)
	}
	names, err := k.RayServiceClusters(ctx, rs.Namespace, rs.Name)
	if err != nil {
		return false, err.Error()
	}
	for _, name := range names {
		if name != cluster && name != rs.Status.PendingServiceStatus.RayClusterName {
			return false, fmt.Sprintf("RayCluster %s of the RayService, which %s replaced, still exists and holds its slices", name, cluster)
		}
	}
	return true, ""
}
