package gketpu

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The emulator stands in for GKE, so none of its code may take TPU rules from internal/tpu
// (only tests, to compare).
func TestEmulatorDoesNotImportInternalTPU(t *testing.T) {
	const forbidden = "github.com/raytpu/terraform-provider-raytpu/internal/tpu"
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == forbidden || strings.HasPrefix(p, forbidden+"/") {
				t.Errorf("%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTablesHaveSources(t *testing.T) {
	for _, m := range MachineTypes() {
		if m.Source == "" || strings.Contains(m.Source, "@XPK") || strings.Contains(m.Source, "@CA") {
			t.Errorf("%s: source %q", m.Name, m.Source)
		}
	}
	rows, err := readTable("rules.txt", rulesText, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.source == "" || citeRE.MatchString(r.source) {
			t.Errorf("rules.txt:%d: source %q", r.line, r.source)
		}
	}
}

func TestSlice(t *testing.T) {
	tests := []struct {
		machine, topology string
		want              Slice
		err               string
	}{
		{"ct6e-standard-1t", "", Slice{Topology: "1x1", Chips: 1, Hosts: 1}, ""},
		{"ct6e-standard-8t", "", Slice{Topology: "2x4", Chips: 8, Hosts: 1}, ""},
		{"ct6e-standard-4t", "2x4", Slice{Topology: "2x4", Chips: 8, Hosts: 2, MultiHost: true}, ""},
		{"ct6e-standard-4t", "16x16", Slice{Topology: "16x16", Chips: 256, Hosts: 64, MultiHost: true}, ""},
		{"ct5lp-hightpu-4t", "2x4", Slice{Topology: "2x4", Chips: 8, Hosts: 2, MultiHost: true}, ""},
		{"ct4p-hightpu-4t", "", Slice{Topology: "2x2x1", Chips: 4, Hosts: 1}, ""},
		{"ct4p-hightpu-4t", "8x4x4", Slice{Topology: "8x4x4", Chips: 128, Hosts: 32, MultiHost: true}, ""},
		{"ct4p-hightpu-4t", "16x16x16", Slice{Topology: "16x16x16", Chips: 4096, Hosts: 1024, MultiHost: true}, ""},
		{"ct5p-hightpu-4t", "16x16x24", Slice{Topology: "16x16x24", Chips: 6144, Hosts: 1536, MultiHost: true}, ""},
		{"tpu7x-standard-4t", "2x2x2", Slice{Topology: "2x2x2", Chips: 8, Hosts: 2, MultiHost: true}, ""},
		{"tpu7x-standard-4t", "4x4x12", Slice{Topology: "4x4x12", Chips: 192, Hosts: 48, MultiHost: true}, ""},
		{"tpu7x-standard-1t", "", Slice{Topology: "1x1x1", Chips: 1, Hosts: 1}, ""},

		{"ct6e-standard-1t", "1x1", Slice{}, "TPU topology can't be specified with single-host TPU slice pool; please remove the tpu_topology"},
		{"ct6e-standard-4t", "2x2", Slice{}, "can't be specified with single-host"},
		{"ct4p-hightpu-4t", "2x2x1", Slice{}, "can't be specified with single-host"},
		{"ct6e-standard-8t", "4x4", Slice{}, "forms no multi-host slices"},
		{"ct6e-standard-8t", "2x2", Slice{}, `number of chips specified by topology "2x2" is not divisible by 8`},
		{"ct4p-hightpu-4t", "3x3x3", Slice{}, `"3x3x3" is not divisible by 4`},
		{"ct6e-standard-4t", "8x4", Slice{}, "valid multi-host topologies are 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"},
		{"ct6e-standard-4t", "2x2x2", Slice{}, "has 3 dimensions, but machine type ct6e-standard-4t takes 2"},
		{"ct5p-hightpu-4t", "8x4x4", Slice{}, "non-decreasing order"},
		{"ct5p-hightpu-4t", "16x16x28", Slice{}, "holds 112 cubes of 4x4x4 chips, at most 96"},
		{"ct4p-hightpu-4t", "4x4x8x", Slice{}, "Invalid TPU topology"},
		{"ct4p-hightpu-4t", "04x4x4", Slice{}, "Invalid TPU topology"},
		{"ct4p-hightpu-4t", "4X4X4", Slice{}, "Invalid TPU topology"},
		{"tpu7x-standard-4t", "4x4x260", Slice{}, "a dimension is at most 256"},
		{"tpu7x-standard-4t", "12x16x16", Slice{Topology: "12x16x16", Chips: 3072, Hosts: 768, MultiHost: true}, ""},
		{"tpu7x-standard-4t", "16x24x28", Slice{}, "at most 144"},
	}
	for _, tc := range tests {
		m, ok := LookupMachineType(tc.machine)
		if !ok {
			t.Fatalf("no machine type %s", tc.machine)
		}
		got, err := m.Slice(tc.topology)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %q: %v", tc.machine, tc.topology, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("%s %q = %+v, want %+v", tc.machine, tc.topology, got, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %q: error %v, want one containing %q", tc.machine, tc.topology, err, tc.err)
		}
	}
	m, _ := LookupMachineType("ct6e-standard-4t")
	if _, err := m.Slice("2x2"); !errors.Is(err, ErrTopologyOnSingleHost) {
		t.Errorf("single-host topology: %v", err)
	}
}

func TestLookupGeneration(t *testing.T) {
	for in, want := range map[string]string{
		"v6e": "v6e", "Trillium": "v6e", "tpu-v6e-slice": "v6e", "v5litepod": "v5e", "ironwood": "tpu7x", " TPU7x ": "tpu7x",
	} {
		if g, err := LookupGeneration(in); err != nil || g.Name != want {
			t.Errorf("LookupGeneration(%q) = %v, %v; want %s", in, g, err, want)
		}
	}
	if _, err := LookupGeneration("v3"); err == nil || !strings.Contains(err.Error(), "v4, v5e, v5p, v6e, tpu7x") {
		t.Errorf("v3: %v", err)
	}
	if _, ok := LookupMachineType("e2-standard-4"); ok {
		t.Error("a CPU machine type is a TPU one")
	}
}

func TestLoadRefusesBadRows(t *testing.T) {
	const machine = "@S somewhere\nct6e-standard-4t v6e tpu-v6e-slice 4 2 2x2 @S\n"
	const ray = "* ray_operator_min_version 1.30.0-gke.1747000 here\n"
	for name, tc := range map[string]struct{ machines, rules, err string }{
		"no source":            {"ct6e-standard-4t v6e tpu-v6e-slice 4 2 2x2\n", ray, "want 7"},
		"undefined citation":   {"ct6e-standard-4t v6e tpu-v6e-slice 4 2 2x2 @NOPE\n", ray, "@NOPE is not defined"},
		"single host mismatch": {"ct6e-standard-4t v6e tpu-v6e-slice 4 2 2x4 x\n", ray, "single_host"},
		"dims":                 {"ct6e-standard-4t v6e tpu-v6e-slice 4 4 2x2 x\n", ray, "dims"},
		"two labels":           {machine + "ct6e-standard-8t v6e other 8 2 2x4 x\n", ray, "two accelerator labels"},
		"duplicate":            {machine + machine, ray, "listed twice"},
		"unknown subject":      {machine, ray + "v9 alias x y\n", "neither a machine type nor a generation"},
		"unknown rule":         {machine, ray + "v6e colour blue y\n", "unknown rule"},
		"bad version":          {machine, ray + "v6e min_gke_version 1.31 y\n", "min_gke_version"},
		"single-host shape":    {machine, ray + "ct6e-standard-4t multihost_shapes 2x2 y\n", "not a new multi-host"},
		"cubes on 2D":          {machine, ray + "ct6e-standard-4t multihost_cubes 4 y\n", "3D machine types"},
		"no ray minimum":       {machine, "", "ray_operator_min_version"},
	} {
		if _, err := load(tc.machines, tc.rules); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.err)
		}
	}
}
