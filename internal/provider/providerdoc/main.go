// Command providerdoc writes the sections of the registry docs' templates that come from the
// provider's code, so that the docs cannot drift from what the provider does: on every resource
// page, which attributes change in place and which replace the resource (from the schema's plan
// modifiers and the resource's own ModifyPlan replacements), the default timeouts and the resource
// identity; on the index page, the CLI versions each feature needs (internal/acctest, whose gates
// the acceptance tests run behind). `make generate` runs it before tfplugindocs, and
// `make docs-check` fails when a section is stale.
//
// A section is the text between two Go template comments of a template, which tfplugindocs renders
// as nothing:
//
//	{{/* providerdoc:begin replacement */ -}}
//	...
//	{{- /* providerdoc:end */}}
//
// Usage (from the repository root):
//
//	go run ./internal/provider/providerdoc [-templates templates]
package main

import (
	"flag"
	"fmt"
	"os"
)

// defaultTemplates is the templates folder, relative to the repository root.
const defaultTemplates = "templates"

func main() {
	dir := flag.String("templates", defaultTemplates, "templates folder to update")
	flag.Parse()
	if err := writeSections(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "providerdoc:", err)
		os.Exit(1)
	}
}
