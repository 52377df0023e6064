package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// pythonVersionValidator accepts a Python version Ray runs on, written 3.N. Ray builds for the
// Pythons its setup.py lists in SUPPORTED_PYTHONS, 3.8 and later in every release since 2023
// (ray-project/ray python/setup.py@001c2a6: [(3, 8), (3, 9), (3, 10), (3, 11)]); anything older is
// a slip, most often 3.10 written without quotes, which HCL reads as the number 3.1.
type pythonVersionValidator struct{}

var _ validator.String = pythonVersionValidator{}

// oldestRayPython is the oldest minor version of Python 3 that Ray supports.
const oldestRayPython = 8

var pythonPattern = regexp.MustCompile(`^3\.([0-9]{1,2})$`)

func (pythonVersionValidator) Description(context.Context) string {
	return fmt.Sprintf(`must be a Python version Ray runs on, 3.%d or later, written as a string such as "3.10"`, oldestRayPython)
}

func (v pythonVersionValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (pythonVersionValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	m := pythonPattern.FindStringSubmatch(value)
	if m == nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Python Version",
			fmt.Sprintf("%q is not a Python 3 version: write it as 3.N in quotes, such as \"3.10\".", value))
		return
	}
	if minor, _ := strconv.Atoi(m[1]); minor < oldestRayPython {
		detail := fmt.Sprintf("Python %s is older than any Python Ray runs on (3.%d and later), so no Ray image exists for it.", value, oldestRayPython)
		if value == "3.1" {
			detail += ` If you wrote 3.10 without quotes, HCL read it as the number 3.1: write python_version = "3.10".`
		}
		resp.Diagnostics.AddAttributeError(req.Path, "Unsupported Python Version", detail)
	}
}
