package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// An edit of the configuration from one text of a quantity to another ("1" to "1000m") must be
// planned as an update (Terraform plans the configured text of an attribute that is set), but it
// asks nothing new of the cluster. Such an update keeps every computed attribute as the state has
// it, instead of the framework's unknowns, which would read as a RayCluster changing, and its
// apply only records the new texts.

// quantityTextEdit reports whether plan differs from state in the texts of quantities alone,
// computed-only attributes aside.
func quantityTextEdit(ctx context.Context, plan tfsdk.Plan, state tfsdk.State) bool {
	if plan.Raw.IsNull() || state.Raw.IsNull() {
		return false
	}
	planned, err := plan.Schema.Type().ValueFromTerraform(ctx, plan.Raw)
	if err != nil {
		return false
	}
	was, err := state.Schema.Type().ValueFromTerraform(ctx, state.Raw)
	if err != nil {
		return false
	}
	p, okPlan := planned.(basetypes.ObjectValue)
	s, okState := was.(basetypes.ObjectValue)
	if !okPlan || !okState {
		return false
	}
	edited := false
	for name, a := range plan.Schema.GetAttributes() {
		if a.IsComputed() && !a.IsOptional() && !a.IsRequired() {
			continue
		}
		now, before := p.Attributes()[name], s.Attributes()[name]
		switch {
		case now.Equal(before):
		case equalQuantityAware(now, before):
			edited = true
		default:
			return false
		}
	}
	return edited
}

// keepComputed plans every computed-only attribute as state has it.
func keepComputed(ctx context.Context, plan *tfsdk.Plan, state tfsdk.State) diag.Diagnostics {
	var diags diag.Diagnostics
	for name, a := range plan.Schema.GetAttributes() {
		if !a.IsComputed() || a.IsOptional() || a.IsRequired() {
			continue
		}
		var v attr.Value
		diags.Append(state.GetAttribute(ctx, path.Root(name), &v)...)
		if !diags.HasError() {
			diags.Append(plan.SetAttribute(ctx, path.Root(name), v)...)
		}
	}
	return diags
}
