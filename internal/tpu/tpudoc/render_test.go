package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// TestGuideIsCurrent fails when the committed guide differs from what the catalog renders:
// someone changed internal/tpu or the template without running `make generate`.
func TestGuideIsCurrent(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", filepath.FromSlash(defaultOutput))
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the committed guide: %v (run `make generate`)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gotLines) || i < len(wantLines); i++ {
		g, w := line(gotLines, i), line(wantLines, i)
		if g != w {
			t.Fatalf("%s is stale: run `make generate` and commit the result.\nfirst difference, line %d:\ncommitted: %s\ncatalog:   %s",
				defaultOutput, i+1, g, w)
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}

// TestNotesStillHold checks the hand-written notes against the catalog, so that a catalog change
// that contradicts one fails here instead of leaving the guide wrong.
func TestNotesStillHold(t *testing.T) {
	if s, err := tpu.NewSlice("v5e", "2x4", 4); err != nil || s.Hosts != 2 || !s.MultiHost {
		t.Errorf("the v5e note says 2x4 with chips_per_host = 4 is two hosts: got %+v, %v", s, err)
	}
	if s, err := tpu.NewSlice("v6e", "2x4", 4); err != nil || s.Hosts != 2 || !s.MultiHost {
		t.Errorf("the v6e note says 2x4 with chips_per_host = 4 is two hosts: got %+v, %v", s, err)
	}
	v5p, err := tpu.LookupGeneration("v5p")
	if err != nil {
		t.Fatal(err)
	}
	all := v5p.Topologies()
	if largest := all[len(all)-1]; largest.Chips() != tpu.MustParseTopology("16x16x24").Chips() {
		t.Errorf("the v5p note caps a slice at 16x16x24 (6144 chips), but the catalog's largest is %s", largest)
	}
	if _, err := tpu.NewSlice("v5p", "16x16x24", 0); err != nil {
		t.Errorf("the v5p note names 16x16x24: %v", err)
	}
	for _, shape := range []string{"4x8x8", "8x8x16"} {
		if _, err := tpu.NewSlice("v4", shape, 0); err != nil {
			t.Errorf("the v4 note names %s: %v", shape, err)
		}
	}
}

func TestRenderListsEveryGeneration(t *testing.T) {
	page, err := render()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tpu.GenerationNames() {
		if !bytes.Contains(page, []byte("\n## "+name+"\n")) {
			t.Errorf("no section for %s", name)
		}
	}
	// Every table row has the header's number of cells.
	for i, l := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(l, "| `") && strings.Count(l, " | ") != 5 && strings.Count(l, " | ") != 7 {
			t.Errorf("line %d has a wrong number of cells: %s", i+1, l)
		}
	}
}
