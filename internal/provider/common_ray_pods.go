package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// observeRayPods fills healthy and placement from the Pods of rc, a RayCluster that raytpu made (or
// that KubeRay made for a RayService of raytpu's). With a watch w it first waits on it until the
// head and every worker run from rc's present templates, and then requires every replica on
// distinct hosts of one slice; without, it reads the Pods once. It reports whether the Pods run on
// whole slices.
func observeRayPods(ctx context.Context, k *kube.Client, w *kube.RayClusterWatch, rc *rayv1.RayCluster, out *rayOutputsModel, action string, diags *diag.Diagnostics) bool {
	if w == nil {
		pods, err := k.RayClusterPods(ctx, rc.Namespace, rc.Name)
		return observedRayPods(ctx, k, false, pods, err, rc, out, action, diags)
	}
	want := expectationsOf(rc)
	templates := kube.TemplatesOf(rc)
	pods, err := w.WaitForPods(ctx, func(p []kube.RayPod) bool { return settled(p, templates, want) })
	switch {
	case errors.Is(err, kube.ErrServeFailed):
		// The watch follows a RayService too, whose failure ends the wait.
		diags.AddError("RayService Failed", fmt.Sprintf("%s: %s. Fix the Serve config (or the image it imports from) and apply again.", action, err))
	case err != nil:
		diags.AddError("RayCluster Not Running", fmt.Sprintf("%s: %s. %sWorkers stay Pending while no slice of their shape is free: "+
			"check the slices' hosts, and for auto-provisioned groups the cluster's node auto-provisioning limits. %s", action, err,
			waitingGroups(pods, want), nextApply(action)))
	}
	return observedRayPods(ctx, k, true, pods, err, rc, out, action, diags)
}

// observedRayPods fills healthy and placement from pods, the Pods of rc as a read of them (err its
// error) or, waited, a wait for them to settle found them; after a wait a replica not whole on one
// slice is an error. It reports whether the Pods run on whole slices.
func observedRayPods(ctx context.Context, k *kube.Client, waited bool, pods []kube.RayPod, err error, rc *rayv1.RayCluster, out *rayOutputsModel,
	action string, diags *diag.Diagnostics) bool {
	want := expectationsOf(rc)
	if !waited && err != nil {
		diags.AddWarning("RayCluster Pods Unknown", fmt.Sprintf("%s: %s", action, err))
	}
	problems := placementProblems(pods, want)
	if waited && err == nil && len(problems) > 0 {
		diags.AddError("Ray Workers Not On Whole Slices", fmt.Sprintf("%s: %v. Each replica must run on distinct hosts of one slice, "+
			"whose ICI links them.", action, problems))
	}
	if waited && err == nil {
		warnSparesWithoutIndexing(pods, want, action, diags)
	}
	out.Healthy = types.BoolValue(settled(pods, kube.TemplatesOf(rc), want) && len(problems) == 0 && everyWorkerRunning(pods))
	out.Placement = flattenPlacement(pods)
	out.GroupSlices = groupSliceRoles(ctx, k, pods, want)
	return err == nil && len(problems) == 0
}

// settled reports whether the head and every expected worker run, all made from the present
// templates, with no Pod of an older one or of a group the RayCluster no longer has left.
func settled(pods []kube.RayPod, t kube.Templates, want map[string]groupExpectation) bool {
	now := current(pods, t)
	return len(now) == len(pods) && allRunning(now, want)
}

func everyWorkerRunning(pods []kube.RayPod) bool {
	for _, p := range pods {
		if !p.Running {
			return false
		}
	}
	return true
}

// nextApply says what the next apply does after a failed wait: Terraform taints a resource whose
// create failed, and replaces it; a failed update keeps the resource, and the next apply tries the
// update again.
func nextApply(action string) string {
	if strings.HasPrefix(action, "creating") {
		return "Terraform taints the resource; the next apply replaces it."
	}
	return "The resource stays as it is in the state; the next apply tries the update again."
}

// warnSparesWithoutIndexing says, after an apply, which multi-host groups have spare slices that
// cannot take over: a spare takes a failed replica's place only when KubeRay deletes and recreates
// that replica's Pods together, which KubeRay v1.5.0 does under its feature gate
// RayMultiHostIndexing alone (alpha, off by default; on by default from v1.6.0). The gate is not
// readable from the cluster, but its mark is: the replica index label on every Pod it makes.
func warnSparesWithoutIndexing(pods []kube.RayPod, want map[string]groupExpectation, action string, diags *diag.Diagnostics) {
	var groups []string
	for name, g := range want {
		if g.hosts < 2 || len(g.pools) <= g.replicas {
			continue
		}
		for _, p := range pods {
			if p.Group == name && !p.ReplicaIndexed {
				groups = append(groups, name)
				break
			}
		}
	}
	if len(groups) == 0 {
		return
	}
	slices.Sort(groups)
	diags.AddWarning("Spare Slices Cannot Take Over", fmt.Sprintf("%s: the Pods of worker groups %v carry no ray.io/worker-group-replica-index "+
		"label, so the cluster's KubeRay runs without its feature gate RayMultiHostIndexing (alpha and off in KubeRay v1.5.0). Without it "+
		"KubeRay recreates a failed host's Pod alone, not the whole replica, so no replica moves whole onto a spare slice: the "+
		"groups' spare_slices stay claimed and idle, and a recreated Pod may land on a spare's host apart from its replica. Run a KubeRay with --feature-gates=RayMultiHostIndexing=true (on by "+
		"default from v1.6.0), or remove spare_slices.", action, groups))
}
