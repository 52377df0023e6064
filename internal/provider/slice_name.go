package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A slice named by name_prefix gets the prefix and nameSuffixLength random characters, at apply:
// the name of a replacement differs from the name of the slice it replaces, so that both node
// pools can exist at once, as create_before_destroy needs (GKE names node pools uniquely within a
// cluster). The name is unknown in the plan until then, with what depends on it.

// nameSuffixLength is the length of the random part; the prefix leaves room for it within GKE's
// 40 characters.
const (
	nameSuffixLength = 8
	maxNamePrefix    = 40 - nameSuffixLength
)

var namePrefixRE = regexp.MustCompile(`^[a-z][-a-z0-9]*$`)

func namePrefixValidator() validator.String {
	return stringvalidator.All(
		stringvalidator.LengthAtMost(maxNamePrefix),
		stringvalidator.RegexMatches(namePrefixRE, "must start with a lower-case letter and hold only lower-case letters, digits and hyphens"),
	)
}

// generatedName is prefix followed by random lower-case hexadecimal digits.
func generatedName(prefix string) string {
	b := make([]byte, nameSuffixLength/2)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}

// nameLacksPrefixCondition is when nameLacksPrefix replaces a slice, for the docs.
const nameLacksPrefixCondition = "when the slice's name does not begin with a new prefix (a name imported, or written before " +
	"as `name`, that begins with it stays)"

// nameLacksPrefix replaces a slice whose name does not begin with a new name_prefix; one that
// already does (imported, or a prefix written where its name was) stays.
func nameLacksPrefix(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	if req.PlanValue.IsNull() || req.PlanValue.IsUnknown() {
		return
	}
	var name types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.RequiresReplace = !strings.HasPrefix(name.ValueString(), req.PlanValue.ValueString())
}
