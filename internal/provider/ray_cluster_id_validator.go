package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// rayClusterIDValidator accepts the id of a raytpu_ray_cluster:
// projects/{project}/locations/{location}/clusters/{cluster}/rayClusters/{namespace}/{name}.
type rayClusterIDValidator struct{}

var _ validator.String = rayClusterIDValidator{}

func (rayClusterIDValidator) Description(context.Context) string {
	return "must be a RayCluster id: projects/{project}/locations/{location}/clusters/{cluster}/rayClusters/{namespace}/{name}"
}

func (v rayClusterIDValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (rayClusterIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, _, _, err := parseRayClusterID(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Ray Cluster ID", err.Error()+": use the id attribute of raytpu_ray_cluster.")
	}
}

// parseRayClusterID reads the id of a raytpu_ray_cluster, and only that form of it.
func parseRayClusterID(id string) (cluster gke.ClusterID, namespace, name string, err error) {
	if strings.Count(id, "/") != 8 || !strings.Contains(id, "/rayClusters/") {
		return gke.ClusterID{}, "", "", fmt.Errorf("%q is not {cluster_id}/rayClusters/{namespace}/{name}", id)
	}
	cluster, namespace, name, err = rayClusterKind.parseImportID(id, "")
	if err != nil {
		return gke.ClusterID{}, "", "", fmt.Errorf("%q is not {cluster_id}/rayClusters/{namespace}/{name}, with cluster_id "+
			"projects/{project}/locations/{location}/clusters/{cluster}", id)
	}
	return cluster, namespace, name, nil
}
