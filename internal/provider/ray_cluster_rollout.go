package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// What raytpu carries out because KubeRay v1.5 does not (ray-operator
// controllers/ray/raycluster_controller.go, reconcilePods): it recreates no Pod whose template
// changed, deletes no Pod of a worker group removed from the spec, and, when a group shrinks,
// deletes whichever replicas it lists first (and, without the RayMultiHostIndexing gate,
// single Pods, which can split a replica across slices). Every replacement takes whole replicas:
// all the Pods of one slice go together, and KubeRay makes the replica again on one slice.
//
// Which changes restart which Pods (the resource's page says the same):
//   - ray_version, python_version, image, history_server and anything of the head: the head and
//     every worker, as a Ray cluster without GCS fault tolerance does not outlive its head;
//   - a worker group's cpu, memory, ray_start_params, Pod settings, or its slices' shape (a slice
//     replaced by another shape): every replica of that group;
//   - a slice removed from a group: the replica on it; a slice added: a new replica; and in a group
//     of multi-host slices every replica, as MEGASCALE_NUM_SLICES, in its template, changes;
//   - head.service_type and the head service's settings: the head Service, not the Pods.

// leavingReplicas are the Pods of the replicas that leave their group: those on a slice the group
// no longer has, and, of a group with more replicas than it is to have, the extra ones (those
// not running first). KubeRay is told to delete exactly these (workersToDelete).
func leavingReplicas(pods []kube.RayPod, groups []resolvedGroup) []kube.RayPod {
	var out []kube.RayPod
	replicas := replicasOf(pods)
	for _, g := range groups {
		keep := map[string]bool{}
		for _, s := range g.slices {
			keep[s.id.Name] = true
		}
		var staying [][]kube.RayPod
		for _, name := range sortedKeys(replicas[g.Name]) {
			hosts := replicas[g.Name][name]
			if g.Claim != nil && hosts[0].NodePool != "" && !keep[hosts[0].NodePool] {
				out = append(out, hosts...)
				continue
			}
			staying = append(staying, hosts)
		}
		// Extra replicas: those not all running go first.
		sort.SliceStable(staying, func(i, j int) bool { return everyWorkerRunning(staying[i]) && !everyWorkerRunning(staying[j]) })
		for len(staying) > g.Replicas {
			out = append(out, staying[len(staying)-1]...)
			staying = staying[:len(staying)-1]
		}
	}
	return out
}

// waitLeavingGone waits until no Pod of leaving is left (KubeRay deleted the replicas named as
// workersToDelete), reporting whether they went.
func waitLeavingGone(ctx context.Context, w *kube.RayClusterWatch, leaving []kube.RayPod, action string, diags *diag.Diagnostics) bool {
	if _, err := w.WaitForPods(ctx, func(pods []kube.RayPod) bool { return !anyOf(pods, leaving) }); err != nil {
		diags.AddError("RayCluster Not Running", fmt.Sprintf("%s: the replicas on the slices the groups no longer have did not end: %s", action, err))
		return false
	}
	return true
}

// podNames are the names of the Pods of group.
func podNames(pods []kube.RayPod, group string) []string {
	var out []string
	for _, p := range pods {
		if p.Group == group {
			out = append(out, p.Name)
		}
	}
	return out
}

// anyOf reports whether pods still holds one of those (by UID).
func anyOf(pods, those []kube.RayPod) bool {
	uids := map[string]bool{}
	for _, p := range those {
		uids[p.UID] = true
	}
	for _, p := range pods {
		if uids[p.UID] {
			return true
		}
	}
	return false
}

// current are the Pods made from the RayCluster's present templates, of a group it has.
func current(pods []kube.RayPod, t kube.Templates) []kube.RayPod {
	var out []kube.RayPod
	for _, p := range pods {
		if _, known := t.Groups[p.Group]; (p.Head || known) && !t.Stale(p) {
			out = append(out, p)
		}
	}
	return out
}

// outdated are the Pods to replace, whole replicas each: every Pod when the head is stale; else
// the replicas with a Pod made from an older template of its group, and the Pods of groups the
// RayCluster no longer has. Pods without a stamp (made before raytpu stamped its templates) count
// as stale where restart says their part changed.
func outdated(pods []kube.RayPod, t kube.Templates, restart restartPlan) []kube.RayPod {
	stale := func(p kube.RayPod) bool {
		return t.Stale(p) || (p.Template == "" && (restart.everything || (!p.Head && restart.groups[p.Group])))
	}
	for _, p := range pods {
		if p.Head && stale(p) {
			return pods
		}
	}
	var out []kube.RayPod
	for group, replicas := range replicasOf(pods) {
		_, known := t.Groups[group]
		for _, hosts := range replicas {
			for _, p := range hosts {
				if !known || stale(p) {
					out = append(out, hosts...)
					break
				}
			}
		}
	}
	return out
}

// restartStale deletes the outdated Pods of rc, whole replicas at once, for KubeRay to make them
// again from the present templates.
func restartStale(ctx context.Context, k *kube.Client, w *kube.RayClusterWatch, rc *rayv1.RayCluster, restart restartPlan) error {
	pods, err := w.WaitForPods(ctx, func([]kube.RayPod) bool { return true })
	if err != nil {
		return err
	}
	return k.DeletePods(ctx, rc.Namespace, outdated(pods, kube.TemplatesOf(rc), restart))
}

// inSync tells whether the live RayCluster and its Pods are what the state's configuration and the
// slices as GKE holds them now ask for: the spec that applying it would store (a server-side dry
// run), the claims on the slices, and Pods made from the present templates. A slice replaced,
// reshaped or released, a change made outside Terraform and a rollout cut short all show as
// false, with why.
//
// spec and groups are what the configuration resolves to now, with the diagnostics of resolving
// it.
func inSync(ctx context.Context, k *kube.Client, rc *rayv1.RayCluster, spec kube.RayClusterSpec, groups []resolvedGroup, diags diag.Diagnostics) (bool, string) {
	if ok, why := resolvedInSync(groups, diags); !ok {
		return false, why
	}
	obj, err := kube.RayClusterObject(spec)
	if err != nil {
		return false, err.Error()
	}
	want, err := k.DryRunApplyRayCluster(ctx, obj)
	if err != nil {
		return false, err.Error()
	}
	if specHash(want.Spec) != specHash(rc.Spec) {
		return false, "the RayCluster differs from what its configuration and slices ask for (changed outside Terraform, or a slice of another shape)"
	}
	if ok, why := historyAccountInSync(ctx, k, spec, spec.Name); !ok {
		return false, why
	}
	switch current, err := k.HeadServiceCurrent(ctx, rc); {
	case err != nil:
		return false, err.Error()
	case !current:
		return false, "the head Service is not what head asks for (its type, annotations or source ranges)"
	}
	pods, err := k.RayClusterPods(ctx, rc.Namespace, rc.Name)
	if err != nil {
		return false, err.Error()
	}
	if stale := outdated(pods, kube.TemplatesOf(rc), restartPlan{}); len(stale) > 0 {
		return false, fmt.Sprintf("%d Pods run from an older template (an update cut short)", len(stale))
	}
	return true, ""
}
