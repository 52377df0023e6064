package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestDurationValidator(t *testing.T) {
	for value, ok := range map[string]bool{"10m": true, "90s": true, "1h30m": true, "0s": false, "-1m": false, "10": false, "ten minutes": false} {
		resp := &validator.StringResponse{}
		durationValidator{}.ValidateString(context.Background(), validator.StringRequest{
			Path: path.Root("host_wait_timeout"), ConfigValue: types.StringValue(value),
		}, resp)
		if resp.Diagnostics.HasError() == ok {
			t.Errorf("%q: errors %v, want valid = %t", value, resp.Diagnostics, ok)
		}
	}
	resp := &validator.StringResponse{}
	durationValidator{}.ValidateString(context.Background(), validator.StringRequest{ConfigValue: types.StringUnknown()}, resp)
	if resp.Diagnostics.HasError() {
		t.Errorf("an unknown value is checked at apply: %v", resp.Diagnostics)
	}
}
