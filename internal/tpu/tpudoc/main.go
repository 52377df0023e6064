// Command tpudoc writes the TPU reference guide, templates/guides/tpu-reference.md, from the
// catalog in internal/tpu, so that the documentation cannot drift from the rules the provider
// enforces. `make generate` runs it before tfplugindocs, which copies the page to docs/guides/.
//
// Usage (from the repository root):
//
//	go run ./internal/tpu/tpudoc [-o templates/guides/tpu-reference.md]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// defaultOutput is where the guide lives, relative to the repository root.
const defaultOutput = "templates/guides/tpu-reference.md"

func main() {
	out := flag.String("o", defaultOutput, "file to write")
	flag.Parse()
	page, err := render()
	if err == nil {
		err = os.MkdirAll(filepath.Dir(*out), 0o755)
	}
	if err == nil {
		err = os.WriteFile(*out, page, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tpudoc:", err)
		os.Exit(1)
	}
}
