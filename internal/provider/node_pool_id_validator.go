package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// nodePoolIDValidator accepts projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}.
type nodePoolIDValidator struct{}

var _ validator.String = nodePoolIDValidator{}

func (nodePoolIDValidator) Description(context.Context) string {
	return "must be a node pool id: projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}"
}

func (v nodePoolIDValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v nodePoolIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := gke.ParseNodePoolID(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Node Pool ID", err.Error()+", for example the id attribute of raytpu_slice.")
	}
}
