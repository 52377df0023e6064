package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// jsonObjectValidator accepts a JSON object, as jsonencode writes one from an HCL object.
type jsonObjectValidator struct{}

var _ validator.String = jsonObjectValidator{}

func (jsonObjectValidator) Description(context.Context) string {
	return "must be a JSON object, such as jsonencode({ ... }) writes"
}

func (v jsonObjectValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (jsonObjectValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(req.ConfigValue.ValueString()), &obj); err != nil || obj == nil {
		why := "it is not an object"
		if err != nil {
			why = err.Error()
		}
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid JSON Object",
			fmt.Sprintf("%s is not a JSON object (%s): write it with jsonencode({ ... }).", req.Path, why))
	}
}
