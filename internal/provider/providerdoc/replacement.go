package main

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

	"github.com/raytpu/terraform-provider-raytpu/internal/provider"
)

// The conditions of the framework's own replacing plan modifiers, in the words of the page's table
// ("replace the resource on any change"). A RequiresReplaceIf of raytpu's says its condition in
// its description, in the same form.
const (
	whenChanged    = "on any change"
	whenConfigured = "on a new value in the configuration; removing the value replaces nothing"
)

// replaceModifiers are the types of the framework's RequiresReplace, RequiresReplaceIf and
// RequiresReplaceIfConfigured plan modifiers (one type per attribute type), with the descriptions
// that tell the first and the last apart.
var replaceModifiers = func() map[reflect.Type]map[string]string {
	ctx := context.Background()
	kinds := map[reflect.Type]map[string]string{}
	add := func(always, configured planmodifier.Describer) {
		kinds[reflect.TypeOf(always)] = map[string]string{
			always.Description(ctx):     whenChanged,
			configured.Description(ctx): whenConfigured,
		}
	}
	add(stringplanmodifier.RequiresReplace(), stringplanmodifier.RequiresReplaceIfConfigured())
	add(boolplanmodifier.RequiresReplace(), boolplanmodifier.RequiresReplaceIfConfigured())
	add(int64planmodifier.RequiresReplace(), int64planmodifier.RequiresReplaceIfConfigured())
	add(float64planmodifier.RequiresReplace(), float64planmodifier.RequiresReplaceIfConfigured())
	add(listplanmodifier.RequiresReplace(), listplanmodifier.RequiresReplaceIfConfigured())
	add(setplanmodifier.RequiresReplace(), setplanmodifier.RequiresReplaceIfConfigured())
	add(mapplanmodifier.RequiresReplace(), mapplanmodifier.RequiresReplaceIfConfigured())
	add(objectplanmodifier.RequiresReplace(), objectplanmodifier.RequiresReplaceIfConfigured())
	return kinds
}()

// attributeChange is what a change of one attribute does: "" for an update in place, else the
// conditions under which it replaces the resource.
type attributeChange struct {
	path     string
	replaces []string
}

// replacementSection lists the attributes a user sets that change in place, and those that replace
// the resource, and when: from each attribute's plan modifiers and the replacements the resource's
// ModifyPlan decides (planned). Computed-only attributes are listed only where ModifyPlan replaces
// the resource for them.
func replacementSection(ctx context.Context, s schema.Schema, planned []provider.PlanReplacement) (string, error) {
	byPath := map[string][]string{}
	for _, r := range planned {
		if r.When == "" {
			return "", fmt.Errorf("a plan replacement of %v says not when", r.Attributes)
		}
		for _, p := range r.Attributes {
			byPath[p.String()] = append(byPath[p.String()], r.When)
		}
	}
	changes, err := walk(ctx, "", s.Attributes, byPath)
	if err != nil {
		return "", err
	}
	for p := range byPath {
		return "", fmt.Errorf("a plan replacement names %s, which is no attribute that a configuration sets", p)
	}

	var inPlace []string
	var conditions []string // in the order of first appearance
	replaced := map[string][]string{}
	for _, c := range changes {
		if len(c.replaces) == 0 {
			inPlace = append(inPlace, "`"+c.path+"`")
			continue
		}
		for _, when := range c.replaces {
			if _, ok := replaced[when]; !ok {
				conditions = append(conditions, when)
			}
			replaced[when] = append(replaced[when], "`"+c.path+"`")
		}
	}
	slices.SortStableFunc(conditions, func(a, b string) int { return conditionRank(a) - conditionRank(b) })

	var b strings.Builder
	b.WriteString("## Updates and replacement\n\n")
	if len(inPlace) > 0 {
		fmt.Fprintf(&b, "A change of these attributes is applied in place: %s.\n", strings.Join(inPlace, ", "))
	}
	if len(conditions) > 0 {
		b.WriteString("\nThese replace the resource (the plan says `must be replaced`):\n\n" +
			"| Attributes | Replace the resource |\n|---|---|\n")
		for _, when := range conditions {
			fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(replaced[when], ", "), when)
		}
	}
	return b.String(), nil
}

// conditionRank puts the framework's unconditional replacements first, then those of a value set
// in the configuration, then the rest in the order they came.
func conditionRank(when string) int {
	switch when {
	case whenChanged:
		return 0
	case whenConfigured:
		return 1
	}
	return 2
}

// walk lists the changes of attrs (under prefix), sorted by name, taking the plan replacements it
// finds out of planned. A nested attribute whose every attribute changes in place is one entry.
func walk(ctx context.Context, prefix string, attrs map[string]schema.Attribute, planned map[string][]string) ([]attributeChange, error) {
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []attributeChange
	for _, name := range names {
		a := attrs[name]
		p := prefix + name
		if !a.IsRequired() && !a.IsOptional() {
			// Only ModifyPlan replaces the resource for an output (such as a slice's healthy).
			if when, ok := planned[p]; ok {
				out = append(out, attributeChange{path: p, replaces: when})
				delete(planned, p)
			}
			continue
		}
		replaces, err := replaceConditions(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		replaces = append(replaces, planned[p]...)
		delete(planned, p)
		if len(replaces) > 0 {
			out = append(out, attributeChange{path: p, replaces: replaces})
			continue
		}
		nested, err := walk(ctx, p+".", nestedAttributes(a), planned)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(nested, func(c attributeChange) bool { return len(c.replaces) > 0 }) {
			out = append(out, nested...)
			continue
		}
		out = append(out, attributeChange{path: p})
	}
	return out, nil
}

// replaceConditions are the conditions of a's replacing plan modifiers.
func replaceConditions(ctx context.Context, a schema.Attribute) ([]string, error) {
	field := reflect.ValueOf(a).FieldByName("PlanModifiers")
	if !field.IsValid() {
		return nil, nil
	}
	var out []string
	for i := 0; i < field.Len(); i++ {
		m, ok := field.Index(i).Interface().(planmodifier.Describer)
		if !ok {
			return nil, fmt.Errorf("plan modifier %T has no description", field.Index(i).Interface())
		}
		known, ok := replaceModifiers[reflect.TypeOf(m)]
		if !ok {
			continue
		}
		when := known[m.Description(ctx)]
		if when == "" {
			when = m.MarkdownDescription(ctx)
		}
		if when == "" {
			return nil, fmt.Errorf("a RequiresReplaceIf plan modifier without a description of when it replaces")
		}
		out = append(out, when)
	}
	return out, nil
}

// nestedAttributes are the attributes of a nested attribute; nil for any other.
func nestedAttributes(a schema.Attribute) map[string]schema.Attribute {
	switch n := a.(type) {
	case schema.SingleNestedAttribute:
		return n.Attributes
	case schema.ListNestedAttribute:
		return n.NestedObject.Attributes
	case schema.SetNestedAttribute:
		return n.NestedObject.Attributes
	case schema.MapNestedAttribute:
		return n.NestedObject.Attributes
	}
	return nil
}
