package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestClaimLabelsValidator(t *testing.T) {
	for labels, want := range map[string]string{
		"team":                      "",
		"raytpu.dev/other":          "",
		"raytpu.dev/ray-group":      `label "raytpu.dev/ray-group" is one raytpu_ray_cluster sets`,
		"raytpu.dev/ray-cluster":    `label "raytpu.dev/ray-cluster" is one raytpu_ray_cluster sets`,
		"cloud.google.com/gke-spot": "",
	} {
		m := types.MapValueMust(types.StringType, map[string]attr.Value{labels: types.StringValue("x")})
		resp := &validator.MapResponse{}
		claimLabelsValidator{}.ValidateMap(context.Background(), validator.MapRequest{Path: path.Root("labels"), ConfigValue: m}, resp)
		got := ""
		if resp.Diagnostics.HasError() {
			got = resp.Diagnostics.Errors()[0].Detail()
		}
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", labels, got, want)
		}
	}
}
