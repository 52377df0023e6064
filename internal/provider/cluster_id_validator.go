package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// clusterIDValidator accepts projects/{project}/locations/{location}/clusters/{name}.
type clusterIDValidator struct{}

var _ validator.String = clusterIDValidator{}

func (clusterIDValidator) Description(context.Context) string {
	return "must be a cluster id: projects/{project}/locations/{location}/clusters/{name}"
}

func (v clusterIDValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v clusterIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := gke.ParseClusterID(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Cluster ID",
			err.Error()+", for example the id attribute of raytpu_cluster or google_container_cluster.")
	}
}
