package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// durationValidator accepts a positive Go duration such as "10m" or "90s".
type durationValidator struct{}

var _ validator.String = durationValidator{}

func (durationValidator) Description(context.Context) string {
	return `must be a positive duration such as "10m" or "90s"`
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(req.ConfigValue.ValueString()); err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Duration",
			fmt.Sprintf("%q is not a positive duration: write it as a Go duration such as \"10m\", \"90s\" or \"1h30m\".", req.ConfigValue.ValueString()))
	}
}
