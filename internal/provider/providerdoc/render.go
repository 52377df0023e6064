package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-version"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/provider"
)

// Sections of a resource page, and of the index page.
const (
	sectionReplacement = "replacement"
	sectionTimeouts    = "timeouts"
	sectionIdentity    = "identity"
	sectionChanges     = "changes"
	sectionCLIVersions = "cli-versions"
)

// indexPage is the provider's index template, relative to the templates folder.
const indexPage = "index.md.tmpl"

// sectionPattern finds the sections of a template: a begin comment naming the section, the text,
// and the end comment.
var sectionPattern = regexp.MustCompile(`(?s)(\{\{/\* providerdoc:begin ([a-z-]+) \*/ -\}\}\n)(.*?)(\{\{- /\* providerdoc:end \*/\}\})`)

// writeSections rewrites the generated sections of the templates under dir.
func writeSections(dir string) error {
	pages, err := render(context.Background())
	if err != nil {
		return err
	}
	for page, sections := range pages {
		file := filepath.Join(dir, filepath.FromSlash(page))
		text, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		updated, err := replaceSections(string(text), sections)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if updated != string(text) {
			if err := os.WriteFile(file, []byte(updated), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// replaceSections writes each of sections into the template text, which must have every one of
// them, once, and no other.
func replaceSections(text string, sections map[string]string) (string, error) {
	seen := map[string]bool{}
	var failure error
	out := sectionPattern.ReplaceAllStringFunc(text, func(match string) string {
		m := sectionPattern.FindStringSubmatch(match)
		name := m[2]
		body, ok := sections[name]
		switch {
		case !ok:
			failure = fmt.Errorf("section %q is not one providerdoc writes for this page", name)
		case seen[name]:
			failure = fmt.Errorf("section %q appears twice", name)
		}
		seen[name] = true
		return m[1] + body + m[4]
	})
	if failure != nil {
		return "", failure
	}
	for name := range sections {
		if !seen[name] {
			return "", fmt.Errorf("no section %q: add {{/* providerdoc:begin %s */ -}} and {{- /* providerdoc:end */}} where it goes", name, name)
		}
	}
	return out, nil
}

// render returns the generated sections of every page, by the page's path under the templates
// folder.
func render(ctx context.Context) (map[string]map[string]string, error) {
	p := provider.New("doc")()
	var meta fwprovider.MetadataResponse
	p.Metadata(ctx, fwprovider.MetadataRequest{}, &meta)
	pages := map[string]map[string]string{indexPage: {sectionCLIVersions: cliVersions()}}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: meta.TypeName}, &md)
		sections, err := resourceSections(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", md.TypeName, err)
		}
		pages["resources/"+strings.TrimPrefix(md.TypeName, meta.TypeName+"_")+".md.tmpl"] = sections
	}
	return pages, nil
}

func resourceSections(ctx context.Context, r resource.Resource) (map[string]string, error) {
	var s resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &s)
	if s.Diagnostics.HasError() {
		return nil, fmt.Errorf("schema: %v", s.Diagnostics)
	}
	var planned []provider.PlanReplacement
	if pr, ok := r.(provider.ResourceWithPlanReplacements); ok {
		planned = pr.PlanReplacements()
	}
	replacement, err := replacementSection(ctx, s.Schema, planned)
	if err != nil {
		return nil, err
	}
	sections := map[string]string{sectionReplacement: replacement}
	if _, ok := s.Schema.Attributes["timeouts"]; ok {
		t, ok := r.(provider.ResourceWithDefaultTimeouts)
		if !ok {
			return nil, fmt.Errorf("it has a timeouts block but no DefaultTimeouts")
		}
		sections[sectionTimeouts] = timeoutsSection(t.DefaultTimeouts())
	}
	if ri, ok := r.(resource.ResourceWithIdentity); ok {
		var id resource.IdentitySchemaResponse
		ri.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &id)
		sections[sectionIdentity] = identitySection(id.IdentitySchema)
	}
	if rc, ok := r.(provider.ResourceWithChanges); ok {
		sections[sectionChanges] = changesSection(rc.Changes())
	}
	return sections, nil
}

// changesSection is the table of a resource's kinds of change.
func changesSection(rows []provider.ChangeRow) string {
	var b strings.Builder
	b.WriteString("| Change | Applied by | The plan |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Change, r.AppliedBy, r.Plan)
	}
	return b.String()
}

func timeoutsSection(t provider.OperationTimeouts) string {
	return fmt.Sprintf("## Timeouts\n\n"+
		"The `timeouts` block sets how long each operation may take, as a duration such as `\"45m\"` or `\"2h\"`. "+
		"Unset, they are:\n\n"+
		"| Operation | Default |\n|---|---|\n| create | %s |\n| update | %s |\n| delete | %s |\n",
		duration(t.Create), duration(t.Update), duration(t.Delete))
}

// duration writes d as a timeouts block takes it: "2h", "90m".
func duration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

func identitySection(s identityschema.Schema) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Identity\n\n"+
		"The resource's identity is the names its `id` is made of. In %s, an `import` block may name the resource by its "+
		"`identity` instead of its `id`:\n\n", cliRange(acctest.ImportByIdentity))
	names := make([]string, 0, len(s.Attributes))
	for name := range s.Attributes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a := s.Attributes[name]
		need := "required"
		if a.IsOptionalForImport() {
			need = "optional"
		}
		fmt.Fprintf(&b, "- `%s` (%s) %s\n", name, need, a.GetDescription())
	}
	return b.String()
}

// cliVersions is the index page's table of the CLI versions each feature needs.
func cliVersions() string {
	var b strings.Builder
	b.WriteString("| Feature | Terraform | OpenTofu |\n|---|---|---|\n")
	for _, f := range acctest.Features {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Name, shortVersion(f.Terraform), shortVersion(f.OpenTofu))
	}
	return b.String()
}

// cliRange says which CLIs have f, for a sentence: "Terraform 1.12 and later, and OpenTofu 1.12
// and later".
func cliRange(f acctest.Feature) string {
	switch {
	case f.OpenTofu == "":
		return fmt.Sprintf("Terraform %s and later (OpenTofu has none)", shortVersion(f.Terraform))
	case f.Terraform == "":
		return fmt.Sprintf("OpenTofu %s and later (Terraform has none)", shortVersion(f.OpenTofu))
	}
	return fmt.Sprintf("Terraform %s and later, and OpenTofu %s and later", shortVersion(f.Terraform), shortVersion(f.OpenTofu))
}

// shortVersion writes 1.12.0 as 1.12 and keeps 1.12.4; "" is "none".
func shortVersion(v string) string {
	if v == "" {
		return "none"
	}
	parsed := version.Must(version.NewVersion(v))
	if s := parsed.Segments(); len(s) == 3 && s[2] == 0 {
		return fmt.Sprintf("%d.%d", s[0], s[1])
	}
	return v
}
