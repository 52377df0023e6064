package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// apply brings the RayService to what m says, and fills m's outputs:
//  1. claims the slices of m's groups for the RayService (ray_cluster_slices.go), whose RayClusters
//     select them;
//  2. applies the RayService, its rayClusterConfig built as raytpu_ray_cluster builds a RayCluster;
//  3. waits until KubeRay names its RayCluster, every Pod of it runs on whole slices, KubeRay
//     reports the RayService ready and every application RUNNING (observe). A failure that waiting
//     cannot mend, such as an application that failed to deploy, ends the wait at once.
//
// prior is the state before an update, which is classified against the RayCluster that serves
// as KubeRay meets it (runningChange, ray_service_change.go): one KubeRay leaves alone is carried
// out by raytpu on that RayCluster (scaleInPlace) before the RayService is applied whole, whose
// appended groups KubeRay then adds in place; one KubeRay brings up a new RayCluster for is an
// upgrade (ray_service_upgrade.go) on the slices the plan found free, and finishUpgrade ends it.
// The RayCluster that serves must stay the one it was, unless the state already found it not in
// sync (a RayCluster deleted outside Terraform, which KubeRay makes again).
//
// It returns false when it failed before the RayService was applied.
func (r *rayServiceResource) apply(ctx context.Context, m, prior *rayServiceModel, verb string, diags *diag.Diagnostics) bool {
	action := verb + " raytpu_ray_service (" + m.ID.ValueString() + ")"
	client, k, spec, groups, ok := r.prepareRayApply(ctx, m.rayConfigModel, prior == nil, rayServiceKind, func(client *gke.Client, k *kube.Client) string {
		return serviceGeneration(ctx, client, k, m, prior)
	}, action, diags)
	if !ok {
		return false
	}
	defer k.Close()
	rest := kube.RayServiceSpec{RayClusterSpec: spec, ServeConfigV2: m.ServeConfigV2.ValueString(), DeletionDelaySeconds: int32(m.DeletionDelay.ValueInt64())}
	w := k.WatchRayService(ctx, spec.Namespace, spec.Name)
	defer w.Close()
	upgrade := false
	if prior != nil {
		running, change, ok := runningChange(ctx, k, prior, rest, action, diags)
		if !ok {
			return false
		}
		upgrade = change == kube.ConfigNewCluster
		if planned := m.RayClusterName; upgrade && !planned.IsUnknown() && planned.ValueString() != "" {
			diags.AddError("RayCluster Not As Planned", fmt.Sprintf("%s: the plan expected RayCluster %s to keep serving, but KubeRay would "+
				"bring up a new RayCluster for this change: the RayCluster's hash of its rayClusterConfig is not the state's (changed "+
				"outside Terraform). The RayService was left as it was; refresh and apply again, which plans the upgrade.", action, planned.ValueString()))
			return false
		}
		if !upgrade {
			// raytpu's part first: the groups the RayCluster has, scaled and moved on it; then the
			// RayService whole, whose appended groups KubeRay adds in place.
			kept := rest
			kept.Groups = kept.Groups[:len(running.Spec.WorkerGroupSpecs)]
			if !r.scaleInPlace(ctx, client, k, kept, groups[:len(kept.Groups)], running, m, prior, action, diags) {
				return true
			}
		}
	}
	upgrading := rest
	upgrading.Upgrade = upgrade
	obj, err := kube.RayServiceObject(upgrading)
	if err != nil {
		diags.AddError("Invalid RayService", fmt.Sprintf("%s: %s.", action, err))
		return false
	}
	applied, err := k.ApplyRayService(ctx, obj)
	if err != nil {
		diags.AddError("Error Applying RayService", fmt.Sprintf("%s: %s", action, err))
		return false
	}
	want := kube.ServeWant{Generation: applied.Generation, Applications: serveApplicationNames(m.ServeConfigV2.ValueString())}
	if prior != nil {
		// The reconcile that sends a changed config writes the statuses of the one before.
		want.Settle = kube.ServeSettle
		if !upgrade && prior.InSync.ValueBool() && prior.RayClusterName.ValueString() != "" {
			want.Cluster = prior.RayClusterName.ValueString()
		}
	}
	m.InSync = types.BoolValue(true)
	if r.observe(ctx, k, w, m, applied, groups, want, action, diags) && upgrade {
		r.finishUpgrade(ctx, k, &rest, m, prior, action, diags)
	}
	if !diags.HasError() {
		releaseHistoryAccounts(ctx, k, m.rayConfigModel, rayServiceKind, true, action, diags)
	}
	return true
}

// observe follows the RayService until it serves as want says, from the RayCluster KubeRay names
// for it, and fills m's outputs from what it saw, also when the wait fails (Terraform then taints a
// new RayService; an update stays as it was). It reports whether the RayService serves.
func (r *rayServiceResource) observe(ctx context.Context, k *kube.Client, w *kube.RayServiceWatch, m *rayServiceModel, applied *rayv1.RayService,
	groups []resolvedGroup, want kube.ServeWant, action string, diags *diag.Diagnostics) bool {
	m.RayClusterName, m.Healthy, m.Placement = types.StringValue(want.Cluster), types.BoolValue(false), flattenPlacement(nil)
	m.GroupSlices = groupSliceRoles(ctx, nil, nil, nil)
	m.GroupSettings = groupSettings(groups, want.Cluster, m.RayVersion.ValueString())
	defer func() { m.setServeStatus(w.RayService(), m.Healthy.ValueBool()) }()
	cw, err := w.FollowRayCluster(ctx, want)
	if err != nil {
		serveFailure(diags, action, "RayService Not Started", err)
		return false
	}
	if want.Cluster == "" {
		// The one that is to serve; another may serve until it does (an upgrade).
		want.Cluster = cw.Name()
	}
	m.RayClusterName = types.StringValue(cw.Name())
	m.GroupSettings = groupSettings(groups, cw.Name(), m.RayVersion.ValueString())
	// KubeRay makes the RayCluster from the rayClusterConfig as it is, with the RayService's
	// annotations (rayservice_controller.go, constructRayClusterForRayService): what its Pods are
	// expected to be is known before KubeRay has made it.
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: applied.Namespace, Name: cw.Name(), Annotations: applied.Annotations},
		Spec:       applied.Spec.RayClusterSpec,
	}
	if !observeRayPods(ctx, k, cw, rc, &m.rayOutputsModel, action, diags) {
		return false
	}
	if _, err := w.WaitForServing(ctx, want); err != nil {
		m.Healthy = types.BoolValue(false)
		serveFailure(diags, action, "RayService Not Serving", err)
		return false
	}
	return true
}

// serveFailure reports a wait on a RayService that ended in err: a failure of the RayService under
// its own summary, anything else under summary.
func serveFailure(diags *diag.Diagnostics, action, summary string, err error) {
	if errors.Is(err, kube.ErrServeFailed) {
		diags.AddError("RayService Failed", fmt.Sprintf("%s: %s. Fix the Serve config (or the code and image it imports from) and "+
			"apply again.", action, err))
		return
	}
	diags.AddError(summary, fmt.Sprintf("%s: %s. KubeRay sends the Serve config once the RayCluster's head is ready and reports "+
		"the RayService ready once every application is RUNNING; check its events with kubectl describe rayservice. %s", action, err,
		nextApply(action)))
}

// setServeStatus fills status and applications from rs (nil: not seen), and healthy, which the Pods
// decided (podsHealthy), with whether it serves.
func (m *rayServiceModel) setServeStatus(rs *rayv1.RayService, podsHealthy bool) {
	apps := map[string]string{}
	status := ""
	serving := false
	if rs != nil {
		// status is documented as KubeRay's status.serviceStatus, which KubeRay still sets.
		apps, status = kube.ActiveApplications(rs), string(rs.Status.ServiceStatus) //nolint:staticcheck // see above
		serving, _ = kube.ServeProgress(rs, kube.ServeWant{Generation: rs.Generation, Applications: serveApplicationNames(m.ServeConfigV2.ValueString()),
			Cluster: m.RayClusterName.ValueString()}, 0)
	}
	m.Status = types.StringValue(status)
	values := make(map[string]attr.Value, len(apps))
	for name, status := range apps {
		values[name] = types.StringValue(status)
	}
	m.Applications = types.MapValueMust(types.StringType, values)
	m.Healthy = types.BoolValue(podsHealthy && serving)
}
