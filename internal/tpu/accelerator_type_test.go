package tpu

import (
	"strings"
	"testing"
)

func TestParseAcceleratorType(t *testing.T) {
	tests := []struct {
		in, generation, topology string
	}{
		{"v6e-16", "v6e", "4x4"},
		{"v6e-1", "v6e", "1x1"},
		{"v6e-8", "v6e", "2x4"},
		{"v6e-256", "v6e", "16x16"},
		{"v5litepod-16", "v5e", "4x4"},
		{"v5e-16", "v5e", "4x4"},
		{"v5litepod-4", "v5e", "2x2"},
		{"v5p-8", "v5p", "2x2x1"},
		{"v5p-16", "v5p", "2x2x2"},
		{"v5p-32", "v5p", "2x2x4"},
		{"v5p-64", "v5p", "2x4x4"},
		{"v5p-128", "v5p", "4x4x4"},
		{"v5p-256", "v5p", "4x4x8"},
		{"v5p-512", "v5p", "4x8x8"},
		{"v5p-1024", "v5p", "8x8x8"},
		{"v5p-1536", "v5p", "8x8x12"},
		{"v5p-12288", "v5p", "16x16x24"},
		{"v4-8", "v4", "2x2x1"},
		{"v4-16", "v4", "2x2x2"},
		{"v4-8192", "v4", "16x16x16"},
		{"tpu7x-2", "tpu7x", "1x1x1"},
		{"tpu7x-8", "tpu7x", "2x2x1"},
		{"tpu7x-128", "tpu7x", "4x4x4"},
		{"v7x-16", "tpu7x", "2x2x2"},
	}
	for _, tc := range tests {
		g, topo, err := ParseAcceleratorType(tc.in)
		if err != nil {
			t.Errorf("ParseAcceleratorType(%q): %v", tc.in, err)
			continue
		}
		if g.Name != tc.generation || topo.String() != tc.topology {
			t.Errorf("ParseAcceleratorType(%q) = %s %s, want %s %s", tc.in, g.Name, topo, tc.generation, tc.topology)
		}
	}
}

func TestAcceleratorTypeRoundTrip(t *testing.T) {
	for _, g := range Generations() {
		for _, topo := range g.Topologies() {
			s, err := g.Slice(topo, 0)
			if err != nil {
				t.Fatalf("%s %s: %v", g.Name, topo, err)
			}
			back, backTopo, err := ParseAcceleratorType(s.AcceleratorType())
			if err != nil {
				t.Fatalf("%s %s: %s does not parse: %v", g.Name, topo, s.AcceleratorType(), err)
			}
			if back != g || backTopo.Chips() != topo.Chips() {
				t.Errorf("%s %s -> %s -> %s %s", g.Name, topo, s.AcceleratorType(), back.Name, backTopo)
			}
		}
	}
}

func TestParseAcceleratorTypeInvalid(t *testing.T) {
	tests := map[string][]string{
		"v6e":       {"must look like <generation>-<size>"},
		"v6e-":      {"must look like"},
		"v9-16":     {`unknown generation "v9"`, "v5litepod"},
		"v6e-12":    {"v6e has no slice of 12 chips", "v6e-8", "v6e-16"},
		"v5p-7":     {"counts TensorCores (2 per chip)", "multiple of 2"},
		"v5p-24":    {"v5p has no slice of 12 chips", "v5p-32"},
		"v6e-sixty": {`size "sixty"`},
	}
	for in, parts := range tests {
		_, _, err := ParseAcceleratorType(in)
		if err == nil {
			t.Errorf("ParseAcceleratorType(%q) succeeded", in)
			continue
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("ParseAcceleratorType(%q) error %q does not contain %q", in, err, p)
			}
		}
	}
}
