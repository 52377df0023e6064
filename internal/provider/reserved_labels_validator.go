package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// reservedLabelsValidator refuses resource labels in GKE's reserved goog-gke- namespace, which GKE
// sets on every node pool itself and reconciles whatever a client sends (userLabels): one written
// in the configuration could never be applied.
type reservedLabelsValidator struct{}

var _ validator.Map = reservedLabelsValidator{}

func (reservedLabelsValidator) Description(context.Context) string {
	return "keys must not start with " + reservedLabelPrefix
}

func (v reservedLabelsValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (reservedLabelsValidator) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key := range req.ConfigValue.Elements() {
		if strings.HasPrefix(key, reservedLabelPrefix) {
			resp.Diagnostics.AddAttributeError(req.Path, "Reserved Resource Label",
				fmt.Sprintf("%s: label %q is in the %s namespace, which GKE reserves for the labels it sets on every node pool "+
					"(such as goog-gke-node-pool-provisioning-model) and reconciles whatever is sent. Use a key with another prefix; "+
					"raytpu leaves GKE's own labels out of resource_labels.", req.Path, key, reservedLabelPrefix+"*"))
		}
	}
}
