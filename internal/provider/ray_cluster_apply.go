package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// apply brings the RayCluster and its Pods to what m says, and fills m's outputs:
//  1. claims the slices of m's groups (ray_cluster_slices.go);
//  2. releases the slices of prior (the state before an update) that no group has any more:
//     KubeRay makes a group's replicas again as soon as it has deleted those on them, and the
//     scheduler could place one there while the slice still carries the group's claim;
//  3. applies the RayCluster, naming as workersToDelete the replicas on slices their group no
//     longer has, so that KubeRay takes those and not others, and waits until they are gone;
//  4. replaces the Pods KubeRay keeps from an older template (ray_cluster_rollout.go): KubeRay v1.5
//     does not roll a template change out; and the head Service, which it never changes;
//  5. waits until every Pod runs on whole slices;
//  6. deletes the service accounts of a history_server no Pod runs as any more (common_ray_history.go).
//
// It returns false when it failed before the RayCluster was applied.
func (r *rayClusterResource) apply(ctx context.Context, m, prior *rayClusterModel, verb string, diags *diag.Diagnostics) bool {
	action := verb + " raytpu_ray_cluster (" + m.ID.ValueString() + ")"
	client, k, spec, groups, ok := r.prepareRayApply(ctx, m.rayConfigModel, prior == nil, rayClusterKind, func(*gke.Client, *kube.Client) string { return m.Name.ValueString() },
		action, diags)
	if !ok {
		return false
	}
	defer k.Close()
	m.GroupSettings = groupSettings(groups, spec.Name, spec.RayVersion)
	w := k.WatchRayCluster(ctx, spec.Namespace, spec.Name)
	defer w.Close()
	var leaving []kube.RayPod
	if prior != nil {
		pods, err := k.RayClusterPods(ctx, spec.Namespace, spec.Name)
		if err != nil {
			diags.AddError("Error Reading RayCluster", fmt.Sprintf("%s: %s", action, err))
			return false
		}
		leaving = leavingReplicas(pods, groups)
		for i := range spec.Groups {
			spec.Groups[i].WorkersToDelete = podNames(leaving, spec.Groups[i].Name)
		}
		if err := releaseSlices(ctx, client, m.Namespace.ValueString(), m.Name.ValueString(), releasedSlices(ctx, prior.rayConfigModel, m.rayConfigModel, leaving)); err != nil {
			diags.AddError("Error Releasing Slices", fmt.Sprintf("%s: %s. Until their raytpu.dev/ray-* labels go, the RayCluster's "+
				"replicas could run on them.", action, err))
			return false
		}
	}
	applied, ok := r.applySpec(ctx, k, spec, action, diags)
	if !ok {
		return false
	}
	if len(leaving) > 0 {
		// The replicas on slices their group no longer has are gone when no Pod of theirs is left;
		// then the spec is applied again without them.
		if !waitLeavingGone(ctx, w, leaving, action, diags) {
			return true
		}
		for i := range spec.Groups {
			spec.Groups[i].WorkersToDelete = nil
		}
		if applied, ok = r.applySpec(ctx, k, spec, action, diags); !ok {
			return true
		}
	}
	var restart restartPlan
	if prior != nil {
		restart = plannedRestarts(ctx, prior.rayConfigModel, m.rayConfigModel)
	}
	if err := restartStale(ctx, k, w, applied, restart); err != nil {
		diags.AddError("Error Restarting Ray Pods", fmt.Sprintf("%s: %s", action, err))
		return true
	}
	sctx, cancel := context.WithTimeout(ctx, rayStateWait)
	err := k.RefreshHeadService(sctx, applied, time.Second)
	cancel()
	if err != nil {
		diags.AddError("Error Replacing The Head Service", fmt.Sprintf("%s: KubeRay keeps the head Service it made, so raytpu makes it "+
			"again for the head's new service settings: %s", action, err))
		return true
	}
	m.InSync = types.BoolValue(true)
	r.observe(ctx, k, w, m, applied, action, diags)
	if !diags.HasError() {
		releaseHistoryAccounts(ctx, k, m.rayConfigModel, rayClusterKind, true, action, diags)
	}
	return true
}

func (r *rayClusterResource) applySpec(ctx context.Context, k *kube.Client, spec kube.RayClusterSpec, action string, diags *diag.Diagnostics) (*rayv1.RayCluster, bool) {
	obj, err := kube.RayClusterObject(spec)
	if err != nil {
		diags.AddError("Invalid RayCluster", fmt.Sprintf("%s: %s.", action, err))
		return nil, false
	}
	applied, err := k.ApplyRayCluster(ctx, obj)
	if err != nil {
		diags.AddError("Error Applying RayCluster", fmt.Sprintf("%s: %s", action, err))
		return nil, false
	}
	return applied, true
}

// observe fills the outputs from the RayCluster's Pods (observeRayPods) and KubeRay's state: once
// the Pods run on whole slices, it waits a moment for KubeRay to report the RayCluster ready, which
// keeps the next refresh from finding a status the apply did not report.
func (r *rayClusterResource) observe(ctx context.Context, k *kube.Client, w *kube.RayClusterWatch, m *rayClusterModel, rc *rayv1.RayCluster, action string, diags *diag.Diagnostics) {
	if observeRayPods(ctx, k, w, rc, &m.rayOutputsModel, action, diags) && w != nil {
		sctx, cancel := context.WithTimeout(ctx, rayStateWait)
		if latest, err := w.WaitForState(sctx, rayv1.Ready); latest != nil && err == nil {
			rc = latest
		}
		cancel()
	} else if latest, err := k.GetRayCluster(ctx, rc.Namespace, rc.Name); err == nil {
		rc = latest
	}
	// State (ready, suspended) is deprecated for Conditions but still set by KubeRay v1.5, and it is
	// the one word users know.
	m.Status = types.StringValue(string(rc.Status.State)) //nolint:staticcheck // see above
}

// checkServiceAccounts requires the ServiceAccounts the head and the groups name to exist: KubeRay
// could not create the Pods otherwise, and the create would wait until its timeout.
func checkServiceAccounts(ctx context.Context, k *kube.Client, spec kube.RayClusterSpec, action string, diags *diag.Diagnostics) {
	check := func(p path.Path, name string) {
		if name == "" {
			return
		}
		switch err := k.GetServiceAccount(ctx, spec.Namespace, name); {
		case errors.Is(err, kube.ErrNotFound):
			diags.AddAttributeError(p, "Service Account Not Found", fmt.Sprintf("%s: service_account_name %q: namespace %s has no such "+
				"ServiceAccount, so KubeRay could not create the Pods. Create it first (kubernetes_service_account, or kubectl create "+
				"serviceaccount %s -n %s), annotated iam.gke.io/gcp-service-account for Workload Identity.", action, name, spec.Namespace, name, spec.Namespace))
		case err != nil:
			diags.AddAttributeError(p, "Error Reading Service Account", fmt.Sprintf("%s: %s", action, err))
		}
	}
	check(path.Root("head").AtName("service_account_name"), spec.Head.Pod.ServiceAccountName)
	for i, g := range spec.Groups {
		check(path.Root("worker_groups").AtListIndex(i).AtName("service_account_name"), g.Pod.ServiceAccountName)
	}
}

// rayStateWait bounds the wait for KubeRay to report a running RayCluster ready.
const rayStateWait = time.Minute
