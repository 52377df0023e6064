package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// claimLabelsValidator refuses, in a slice's Kubernetes labels, the keys with which
// raytpu_ray_cluster claims a slice for a worker group (kube.SliceClaim): they are its to set.
type claimLabelsValidator struct{}

var _ validator.Map = claimLabelsValidator{}

func (claimLabelsValidator) Description(context.Context) string {
	return "keys must not start with raytpu.dev/ray-"
}

func (v claimLabelsValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (claimLabelsValidator) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key := range req.ConfigValue.Elements() {
		if kube.IsClaimLabel(key) {
			resp.Diagnostics.AddAttributeError(req.Path, "Reserved Node Label",
				fmt.Sprintf("%s: label %q is one raytpu_ray_cluster sets on the slices of a worker group, to hold the group to them "+
					"(%s, %s, %s). List the slice in the worker group's slices instead.", req.Path, key,
					kube.ClaimNamespaceLabel, kube.ClaimClusterLabel, kube.ClaimGroupLabel))
		}
	}
}
