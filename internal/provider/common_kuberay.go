package provider

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// kubeRayAttrTypes are the attributes of the kuberay object of raytpu_cluster and raytpu_ray_operator.
var kubeRayAttrTypes = map[string]attr.Type{"ready": types.BoolType, "crds": types.ListType{ElemType: types.StringType}}

// kubePollInterval spaces the reads of a cluster's Kubernetes API while waiting for KubeRay: they
// cost no GKE quota, and a short interval ends the wait sooner. (A slice's hosts are watched.)
const kubePollInterval = 250 * time.Millisecond

// planKubeRayWait plans kuberay as unknown while it is not ready and the resource waits for it,
// so that the next apply runs an update that waits again instead of reporting success.
func planKubeRayWait(state types.Object, wait types.Bool) types.Object {
	if !wait.ValueBool() || state.IsNull() || state.IsUnknown() {
		return state
	}
	if ready, ok := state.Attributes()["ready"].(types.Bool); ok && !ready.ValueBool() {
		return types.ObjectUnknown(kubeRayAttrTypes)
	}
	return state
}

// kubeRayState reads, or with wait waits for, the KubeRay CRDs of a cluster whose API server
// serves: RUNNING, and RECONCILING or DEGRADED too (GKE keeps the control plane serving while it
// reconciles a cluster or reports it degraded), so that an upgrade in progress is not taken for
// KubeRay gone. Failing to reach them is an error while waiting; otherwise a warning, with kuberay
// unknown (null), so that a refresh never fails for it and no plan waits again for it.
func kubeRayState(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, wait bool, poll time.Duration, what string) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	status := kube.KubeRayStatus{}
	if wait && !cluster.GetAddonsConfig().GetRayOperatorConfig().GetEnabled() {
		// GKE installs the CRDs with the add-on: without it they never come.
		diags.AddError("KubeRay Not Installed", fmt.Sprintf("waiting for KubeRay in %s: the cluster's Ray Operator add-on is "+
			"disabled, so GKE does not install KubeRay. Enable it (raytpu_cluster's next apply does), then apply again.", what))
		return types.ObjectNull(kubeRayAttrTypes), diags
	}
	switch cluster.GetStatus() {
	case containerpb.Cluster_RUNNING, containerpb.Cluster_RECONCILING, containerpb.Cluster_DEGRADED:
		var err error
		status, err = kubeRayStatus(ctx, client, cluster, wait, poll)
		switch {
		case err != nil && wait:
			diags.AddError("KubeRay Not Ready", fmt.Sprintf("waiting for KubeRay in %s: %s. GKE reports the Ray "+
				"Operator add-on enabled before its CRDs serve. The next apply waits again, or raise the timeouts. After a "+
				"create, Terraform marks the resource tainted and would replace it: run terraform untaint on it first to keep it.", what, err))
		case err != nil:
			diags.AddWarning("KubeRay Status Unknown", fmt.Sprintf("reading the KubeRay CRDs of %s: %s", what, err))
			return types.ObjectNull(kubeRayAttrTypes), diags
		}
	}
	kubeRay, d := flattenKubeRay(ctx, status)
	diags.Append(d...)
	return kubeRay, diags
}

func flattenKubeRay(ctx context.Context, status kube.KubeRayStatus) (types.Object, diag.Diagnostics) {
	crds, diags := types.ListValueFrom(ctx, types.StringType, status.Established)
	obj, d := types.ObjectValue(kubeRayAttrTypes, map[string]attr.Value{"ready": types.BoolValue(status.Ready), "crds": crds})
	diags.Append(d...)
	return obj, diags
}

// kubeRayStatus reads, or waits for, the KubeRay CRDs in the cluster's own API server.
func kubeRayStatus(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, wait bool, poll time.Duration) (kube.KubeRayStatus, error) {
	k, err := kubeClient(client, accessOf(cluster))
	if err != nil {
		return kube.KubeRayStatus{}, err
	}
	defer k.Close()
	if wait {
		return k.WaitForKubeRay(ctx, poll)
	}
	return k.KubeRayStatus(ctx)
}

// kubeFor returns a client for the cluster's API server, with KubeRay serving (for
// raytpu_ray_cluster and raytpu_ray_service). gone is true when
// the cluster does not exist. With wait it waits a while for KubeRay's CRDs (GKE reports the
// add-on enabled before they serve); otherwise it does not check them.
func (b *resourceBase) kubeFor(ctx context.Context, client *gke.Client, clusterID string, wait bool, action string, diags *diag.Diagnostics) (k *kube.Client, gone bool) {
	k, cluster, gone := clusterKube(ctx, client, clusterID, action, diags)
	if k == nil || !wait {
		return k, gone
	}
	if !cluster.GetAddonsConfig().GetRayOperatorConfig().GetEnabled() {
		k.Close()
		diags.AddAttributeError(pathClusterID, "KubeRay Not Ready", fmt.Sprintf("%s: cluster %s does not have the Ray Operator add-on, so "+
			"its API server serves no RayClusters. Create the cluster with raytpu_cluster, or enable the add-on with raytpu_ray_operator.", action, clusterID))
		return nil, false
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := k.WaitForKubeRay(wctx, kubePollInterval); err != nil {
		k.Close()
		diags.AddAttributeError(pathClusterID, "KubeRay Not Ready", fmt.Sprintf("%s: %s. The Ray Operator add-on of %s installs the "+
			"KubeRay CRDs shortly after it is enabled; apply again once raytpu_cluster or raytpu_ray_operator reports kuberay.ready.", action, err, clusterID))
		return nil, false
	}
	return k, false
}
