package provider

import (
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// gkeNamePattern is GKE's rule for cluster and node pool names.
var gkeNamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)

// gkeNameValidator checks a cluster or node pool name at plan time.
func gkeNameValidator() validator.String {
	return stringvalidator.RegexMatches(gkeNamePattern,
		"must be 1 to 40 characters of lower-case letters, digits and hyphens, start with a letter and not end with a hyphen")
}
