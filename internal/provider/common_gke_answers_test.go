package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestSameResource(t *testing.T) {
	const path = "projects/p/global/networks/vpc"
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"vpc", "vpc", true},
		{path, "vpc", true},
		{"https://www.googleapis.com/compute/v1/" + path, path, true},
		{"https://www.googleapis.com/compute/v1/" + path, "vpc", true},
		{"global/networks/vpc", path, true},
		{"projects/other/global/networks/vpc", path, false},
		{"other", "vpc", false},
		{"projects/p/global/networks/other", "vpc", false},
	} {
		if got := sameResource(tc.a, tc.b); got != tc.want {
			t.Errorf("sameResource(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := sameResource(tc.b, tc.a); got != tc.want {
			t.Errorf("sameResource(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

// An imported cluster holds GKE's name for its network; a configuration writing its path plans no
// replacement, one naming another network does.
func TestNetworkSpellingDoesNotReplace(t *testing.T) {
	for _, tc := range []struct {
		config, state string
		replace       bool
	}{
		{"projects/p/global/networks/vpc", "vpc", false},
		{"vpc", "projects/p/global/networks/vpc", false},
		{"projects/p/global/networks/other", "vpc", true},
	} {
		req := planmodifier.StringRequest{
			ConfigValue: types.StringValue(tc.config), PlanValue: types.StringValue(tc.config), StateValue: types.StringValue(tc.state),
		}
		// A resource in state with a plan: neither a create nor a destroy.
		req.State.Raw = tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{})
		req.Plan.Raw = req.State.Raw
		var resp planmodifier.StringResponse
		requiresReplaceUnlessSameResource().PlanModifyString(context.Background(), req, &resp)
		if resp.RequiresReplace != tc.replace {
			t.Errorf("network %q in the configuration, %q in state: replace = %v, want %v", tc.config, tc.state, resp.RequiresReplace, tc.replace)
		}
	}
	if got := keepSpelling(types.StringValue("projects/p/global/networks/vpc"), "vpc", "projects/p/global/networks/vpc"); got.ValueString() != "projects/p/global/networks/vpc" {
		t.Errorf("keepSpelling kept %s, want the path written", got)
	}
	if got := keepSpelling(types.StringNull(), "vpc", "projects/p/global/networks/vpc"); got.ValueString() != "vpc" {
		t.Errorf("keepSpelling of an unset network = %s, want GKE's name", got)
	}
}

func TestSameScopes(t *testing.T) {
	const (
		logging    = "https://www.googleapis.com/auth/logging.write"
		storage    = "https://www.googleapis.com/auth/devstorage.read_only"
		monitoring = "https://www.googleapis.com/auth/monitoring"
	)
	for _, tc := range []struct {
		written, reported []string
		want              bool
	}{
		{[]string{logging, storage}, []string{storage, logging}, true},
		{[]string{logging, storage}, []string{storage, logging, monitoring}, true},
		{[]string{logging, monitoring}, []string{logging}, false},
		{[]string{logging}, []string{storage}, false},
	} {
		if got := sameScopes(tc.written, tc.reported); got != tc.want {
			t.Errorf("sameScopes(%v, %v) = %v, want %v", tc.written, tc.reported, got, tc.want)
		}
	}
}
