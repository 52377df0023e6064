package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// tpuImageWarning warns, on python_version, when the official Ray TPU image that ray_version and
// python_version name is not published, as raytpu's table of Ray releases knows it; what says
// what to do instead. Nothing is said while either is unknown or ray_version does not parse.
func tpuImageWarning(rayVersion, pythonVersion types.String, what string) diag.Diagnostics {
	var diags diag.Diagnostics
	names, _, known := rayNamesFor(rayVersion)
	if !known || pythonVersion.IsUnknown() {
		return diags
	}
	python := valueOr(pythonVersion, defaultPythonVersion)
	if !names.HasTPUImage(python) {
		diags.AddAttributeWarning(path.Root("python_version"), "No Official Ray TPU Image",
			fmt.Sprintf("python_version %q: Ray %s publishes -tpu images for Python %s only (%s). %s",
				python, names.From, orNone(names.TPUImagePythons), names.Source, what))
	}
	return diags
}
