package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestPythonVersionValidator(t *testing.T) {
	for value, want := range map[string]string{
		"3.10": "", "3.8": "", "3.12": "", "3.13": "",
		"3.1": `HCL read it as the number 3.1: write python_version = "3.10"`,
		"3.7": "older than any Python Ray runs on",
		"3":   "not a Python 3 version", "3.10.4": "not a Python 3 version", "py310": "not a Python 3 version", "2.7": "not a Python 3 version",
	} {
		resp := &validator.StringResponse{}
		pythonVersionValidator{}.ValidateString(context.Background(), validator.StringRequest{
			Path: path.Root("python_version"), ConfigValue: types.StringValue(value),
		}, resp)
		switch {
		case want == "" && resp.Diagnostics.HasError():
			t.Errorf("%q: %v, want it accepted", value, resp.Diagnostics)
		case want != "" && (!resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), want)):
			t.Errorf("%q: %v, want an error saying %q", value, resp.Diagnostics, want)
		}
	}
}
