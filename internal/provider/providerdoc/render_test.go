package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

	"github.com/raytpu/terraform-provider-raytpu/internal/provider"
)

// TestSectionsAreCurrent fails when a generated section of the committed templates differs from
// what the provider's code renders: someone changed a schema, a timeout, an identity or a CLI
// feature without running `make generate`.
func TestSectionsAreCurrent(t *testing.T) {
	pages, err := render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for page, sections := range pages {
		file := filepath.Join("..", "..", "..", defaultTemplates, filepath.FromSlash(page))
		committed, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := replaceSections(string(committed), sections)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if want != string(committed) {
			t.Errorf("the generated sections of templates/%s are stale: run `make generate` and commit the result", page)
		}
	}
}

func TestReplaceSections(t *testing.T) {
	const tmpl = "intro\n\n{{/* providerdoc:begin timeouts */ -}}\nold\n{{- /* providerdoc:end */}}\n\nrest\n"
	got, err := replaceSections(tmpl, map[string]string{sectionTimeouts: "## Timeouts\n\nnew\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "intro\n\n{{/* providerdoc:begin timeouts */ -}}\n## Timeouts\n\nnew\n{{- /* providerdoc:end */}}\n\nrest\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := replaceSections(tmpl, map[string]string{sectionTimeouts: "x\n", sectionIdentity: "y\n"}); err == nil ||
		!strings.Contains(err.Error(), `no section "identity"`) {
		t.Errorf("a page without a section it needs: got %v, want an error naming the section", err)
	}
	if _, err := replaceSections(tmpl, map[string]string{sectionIdentity: "y\n"}); err == nil ||
		!strings.Contains(err.Error(), `"timeouts" is not one`) {
		t.Errorf("a page with a section not written for it: got %v, want an error naming the section", err)
	}
}

// TestReplacementSection holds the classification to the plan modifiers and plan replacements it
// reads.
func TestReplacementSection(t *testing.T) {
	ctx := context.Background()
	s := schema.Schema{Attributes: map[string]schema.Attribute{
		"id":     schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"name":   schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
		"labels": schema.MapAttribute{Optional: true},
		"zone": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: []planmodifier.String{
			stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplaceIfConfigured()}},
		"scopes": schema.ListAttribute{Optional: true, PlanModifiers: []planmodifier.List{
			listplanmodifier.RequiresReplaceIf(nil, "when it grows", "when it grows")}},
		"pool": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"size": schema.Int64Attribute{Optional: true},
			"type": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
		}},
		"settings": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"a": schema.BoolAttribute{Optional: true},
		}},
		"healthy": schema.BoolAttribute{Computed: true},
		"shape":   schema.StringAttribute{Optional: true},
	}}
	got, err := replacementSection(ctx, s, []provider.PlanReplacement{
		{Attributes: []path.Path{path.Root("shape")}, When: "when the shape changes"},
		{Attributes: []path.Path{path.Root("healthy")}, When: "when it failed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"applied in place: `labels`, `pool.size`, `settings`.\n",
		"| `name`, `pool.type` | on any change |\n",
		"| `zone` | " + whenConfigured + " |\n",
		"| `healthy` | when it failed |\n",
		"| `scopes` | when it grows |\n",
		"| `shape` | when the shape changes |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "`id`") {
		t.Errorf("a computed-only attribute is listed:\n%s", got)
	}

	if _, err := replacementSection(ctx, s, []provider.PlanReplacement{{Attributes: []path.Path{path.Root("gone")}, When: "when"}}); err == nil {
		t.Error("a plan replacement of an attribute the schema lacks: no error")
	}
	undescribed := schema.Schema{Attributes: map[string]schema.Attribute{
		"x": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(nil, "", "")}},
	}}
	if _, err := replacementSection(ctx, undescribed, nil); err == nil {
		t.Error("a RequiresReplaceIf without a description: no error")
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[string]string{"2h0m0s": "2h", "1h30m0s": "90m", "10m0s": "10m", "45s": "45s"} {
		parsed, err := time.ParseDuration(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := duration(parsed); got != want {
			t.Errorf("duration(%s) = %s, want %s", d, got, want)
		}
	}
}
