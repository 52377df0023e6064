package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// On an upgrade KubeRay v1.5.0 does not make the RayService's head and Serve Services again: once
// the new RayCluster serves, it copies the Services' new spec onto the old ones, keeping their
// clusterIP, and leaves their annotations as they were (ray-operator
// controllers/ray/rayservice_controller.go, reconcileServices). Two head changes cannot go through
// that way:
//   - off ClusterIP: KubeRay makes a ClusterIP head Service headless, clusterIP None
//     (controllers/ray/common/service.go, BuildServiceForHeadPod), and the API server refuses None
//     for any other type ("spec.clusterIPs[0]: Invalid value: \"None\""), so the switch fails on
//     every reconcile and the apply waits for its timeout;
//   - to or from an internal load balancer: GKE's networking.gke.io/load-balancer-type annotation
//     stays the old Service's, so a NodePort or LoadBalancer head moved to InternalLoadBalancer
//     would get an external load balancer, open to the ranges its new spec names or to all.
// With upgrade_strategy Recreate the RayService is replaced and its Services are made anew.

// headServiceUpgradeRefusal says why KubeRay cannot move the head Services from the type was to
// the type now on an upgrade, "" when it can.
func headServiceUpgradeRefusal(was, now string) string {
	switch {
	case was == now:
		return ""
	case was == serviceClusterIP:
		return "KubeRay makes a ClusterIP head Service headless (clusterIP None), and on an upgrade it keeps the Service and " +
			"copies the new spec onto it with that clusterIP, which the API server refuses for type " + kubeServiceType(now) +
			` ("spec.clusterIPs[0]: Invalid value: \"None\""): the RayService would never switch to its new RayCluster`
	case (was == serviceInternalLB) != (now == serviceInternalLB) && kubeServiceType(now) == serviceExternalLB:
		what := "an external load balancer, as before"
		if now == serviceInternalLB {
			what = "an external load balancer instead of an internal one"
		}
		return "on an upgrade KubeRay keeps the head and Serve Services and copies only their new spec onto them, not their " +
			"annotations, so GKE's networking.gke.io/load-balancer-type annotation would stay as it is: the Services would get " + what
	}
	return ""
}

// checkHeadServiceUpgrade refuses an upgrade (upgrade_strategy NewCluster) that changes the head's
// service_type in a way KubeRay cannot apply (headServiceUpgradeRefusal).
func checkHeadServiceUpgrade(ctx context.Context, plan, state rayConfigModel, diags *diag.Diagnostics) {
	was, okWas := headServiceType(ctx, state)
	now, okNow := headServiceType(ctx, plan)
	if !okWas || !okNow {
		return
	}
	if why := headServiceUpgradeRefusal(was, now); why != "" {
		diags.AddAttributeError(path.Root("head").AtName("service_type"), "Head Service Type Not Changeable By An Upgrade",
			fmt.Sprintf("head.service_type %q → %q: %s. Either keep service_type %q, or set upgrade_strategy = %q, which "+
				"replaces the RayService and makes its Services anew, with downtime between the two RayClusters.",
				was, now, why, was, upgradeRecreate))
	}
}

// headServiceType is the head's service_type of m, ClusterIP when the head is not set; false while
// it is unknown.
func headServiceType(ctx context.Context, m rayConfigModel) (string, bool) {
	if m.Head.IsUnknown() {
		return "", false
	}
	if m.Head.IsNull() {
		return serviceClusterIP, true
	}
	var h rayHeadModel
	if m.Head.As(ctx, &h, basetypes.ObjectAsOptions{}).HasError() || h.ServiceType.IsUnknown() {
		return "", false
	}
	if h.ServiceType.IsNull() {
		return serviceClusterIP, true
	}
	return h.ServiceType.ValueString(), true
}
