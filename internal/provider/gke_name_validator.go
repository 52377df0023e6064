package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// gkeNameValidator checks a cluster or node pool name at plan time.
func gkeNameValidator() validator.String {
	return stringvalidator.RegexMatches(gke.NamePattern,
		"must be 1 to 40 characters of lower-case letters, digits and hyphens, start with a letter and not end with a hyphen")
}
