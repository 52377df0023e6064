package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// checkNameFreeOfOtherKind refuses, before anything is made, a RayCluster named as a RayService of
// its namespace, or the reverse: KubeRay names the head Service of both <name>-head-svc
// (ray-operator v1.5.0, controllers/ray/utils/util.go, GenerateHeadServiceName: a RayService's
// is named after the RayService, a RayCluster's after the RayCluster), so the second one's
// Service is never made and its RayCluster never comes up. Their history_server service accounts
// (`{name}-ray-history`) would meet too.
func checkNameFreeOfOtherKind(ctx context.Context, k *kube.Client, kind rayKind, namespace, name, action string, diags *diag.Diagnostics) {
	other, err := kind.other(), error(nil)
	if kind.kind == rayServiceKind.kind {
		_, err = k.GetRayCluster(ctx, namespace, name)
	} else {
		_, err = k.GetRayService(ctx, namespace, name)
	}
	switch {
	case errors.Is(err, kube.ErrRayClusterNotFound), errors.Is(err, kube.ErrRayServiceNotFound):
		return
	case err != nil:
		diags.AddError("Error Reading "+other, fmt.Sprintf("%s: %s", action, err))
	default:
		diags.AddAttributeError(path.Root("name"), kind.kind+" Named As A "+other, fmt.Sprintf("%s: namespace %s already has a %s "+
			"named %q, and KubeRay names the head Service of both %s-head-svc (and raytpu their history_server's service "+
			"account %s%s), so this %s would never come up. Choose another name, or another namespace.", action, namespace,
			other, name, name, name, historyAccountSuffix, kind.kind))
	}
}
