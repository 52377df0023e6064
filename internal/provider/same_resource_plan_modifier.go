package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// requiresReplaceUnlessSameResource replaces the resource when a configured network or subnetwork
// names another one than the state holds; another spelling of the same one (the name GKE reports
// for a path or self link written, sameResource) changes nothing, so that an imported cluster
// whose configuration writes network = google_compute_network.vpc.id plans no replacement.
func requiresReplaceUnlessSameResource() planmodifier.String {
	const sameResourceCondition = "when the configuration names another network or subnetwork (another spelling of " +
		"the same one, such as its self link, changes nothing)"
	return stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.ConfigValue.IsNull() && !req.PlanValue.IsUnknown() && !req.StateValue.IsNull() &&
			!sameResource(req.PlanValue.ValueString(), req.StateValue.ValueString())
	}, sameResourceCondition, sameResourceCondition)
}
