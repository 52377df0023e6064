package tpu

import (
	"strings"
	"testing"
)

func TestNewSliceValidShapes(t *testing.T) {
	tests := []struct {
		generation   string
		topology     string
		chipsPerHost int
		machineType  string
		hosts        int
		chips        int
		multiHost    bool
		placement    Placement
		accelerator  string
	}{
		// Single-host shapes of every generation.
		{"v5e", "1x1", 0, "ct5lp-hightpu-1t", 1, 1, false, PlacementNone, "v5litepod-1"},
		{"v5e", "2x2", 0, "ct5lp-hightpu-4t", 1, 4, false, PlacementNone, "v5litepod-4"},
		{"v5e", "2x4", 0, "ct5lp-hightpu-8t", 1, 8, false, PlacementNone, "v5litepod-8"},
		{"v5e", "2x4", 8, "ct5lp-hightpu-8t", 1, 8, false, PlacementNone, "v5litepod-8"},
		// xpk's v5litepod-8: two 4-chip VMs.
		{"v5e", "2x4", 4, "ct5lp-hightpu-4t", 2, 8, true, PlacementCompact, "v5litepod-8"},
		{"v6e", "1x1", 0, "ct6e-standard-1t", 1, 1, false, PlacementNone, "v6e-1"},
		{"v6e", "2x2", 0, "ct6e-standard-4t", 1, 4, false, PlacementNone, "v6e-4"},
		{"v6e", "2x4", 0, "ct6e-standard-8t", 1, 8, false, PlacementNone, "v6e-8"},
		{"v4", "2x2x1", 0, "ct4p-hightpu-4t", 1, 4, false, PlacementNone, "v4-8"},
		{"v5p", "2x2x1", 0, "ct5p-hightpu-4t", 1, 4, false, PlacementNone, "v5p-8"},
		{"tpu7x", "1x1x1", 0, "tpu7x-standard-1t", 1, 1, false, PlacementNone, "tpu7x-2"},
		{"tpu7x", "2x2x1", 0, "tpu7x-standard-4t", 1, 4, false, PlacementNone, "tpu7x-8"},
		// v6e 2x4 as two 4-chip VMs.
		{"v6e", "2x4", 4, "ct6e-standard-4t", 2, 8, true, PlacementCompact, "v6e-8"},
		// Every multi-host 2D shape.
		{"v5e", "4x4", 0, "ct5lp-hightpu-4t", 4, 16, true, PlacementCompact, "v5litepod-16"},
		{"v5e", "4x8", 0, "ct5lp-hightpu-4t", 8, 32, true, PlacementCompact, "v5litepod-32"},
		{"v5e", "8x8", 0, "ct5lp-hightpu-4t", 16, 64, true, PlacementCompact, "v5litepod-64"},
		{"v5e", "8x16", 0, "ct5lp-hightpu-4t", 32, 128, true, PlacementCompact, "v5litepod-128"},
		{"v5e", "16x16", 4, "ct5lp-hightpu-4t", 64, 256, true, PlacementCompact, "v5litepod-256"},
		{"v6e", "4x4", 0, "ct6e-standard-4t", 4, 16, true, PlacementCompact, "v6e-16"},
		{"v6e", "4x8", 0, "ct6e-standard-4t", 8, 32, true, PlacementCompact, "v6e-32"},
		{"v6e", "8x8", 0, "ct6e-standard-4t", 16, 64, true, PlacementCompact, "v6e-64"},
		{"v6e", "8x16", 0, "ct6e-standard-4t", 32, 128, true, PlacementCompact, "v6e-128"},
		{"v6e", "16x16", 0, "ct6e-standard-4t", 64, 256, true, PlacementCompact, "v6e-256"},
		// 3D small shapes and cube shapes.
		{"v4", "2x2x2", 0, "ct4p-hightpu-4t", 2, 8, true, PlacementCompact, "v4-16"},
		{"v4", "2x2x4", 0, "ct4p-hightpu-4t", 4, 16, true, PlacementCompact, "v4-32"},
		{"v4", "2x4x4", 0, "ct4p-hightpu-4t", 8, 32, true, PlacementCompact, "v4-64"},
		{"v4", "4x4x4", 0, "ct4p-hightpu-4t", 16, 64, true, PlacementCompact, "v4-128"},
		{"v4", "16x16x16", 0, "ct4p-hightpu-4t", 1024, 4096, true, PlacementCompact, "v4-8192"},
		{"v4", "8x4x4", 0, "ct4p-hightpu-4t", 32, 128, true, PlacementCompact, "v4-256"},       // v4: any order
		{"v4", "4x4x256", 0, "ct4p-hightpu-4t", 1024, 4096, true, PlacementCompact, "v4-8192"}, // 64 cubes
		{"v5p", "2x2x2", 0, "ct5p-hightpu-4t", 2, 8, true, PlacementCompact, "v5p-16"},
		{"v5p", "4x4x4", 0, "ct5p-hightpu-4t", 16, 64, true, PlacementCompact, "v5p-128"},
		{"v5p", "16x16x24", 0, "ct5p-hightpu-4t", 1536, 6144, true, PlacementCompact, "v5p-12288"}, // 96 cubes
		{"tpu7x", "2x2x2", 0, "tpu7x-standard-4t", 2, 8, true, PlacementWorkloadPolicy, "tpu7x-16"},
		{"tpu7x", "4x4x4", 0, "tpu7x-standard-4t", 16, 64, true, PlacementWorkloadPolicy, "tpu7x-128"},
		{"tpu7x", "16x24x24", 0, "tpu7x-standard-4t", 2304, 9216, true, PlacementWorkloadPolicy, "tpu7x-18432"}, // 144 cubes
		// Aliases resolve to the canonical generation.
		{"v5litepod", "4x4", 0, "ct5lp-hightpu-4t", 4, 16, true, PlacementCompact, "v5litepod-16"},
		{"trillium", "4x4", 0, "ct6e-standard-4t", 4, 16, true, PlacementCompact, "v6e-16"},
		{"v7x", "2x2x2", 0, "tpu7x-standard-4t", 2, 8, true, PlacementWorkloadPolicy, "tpu7x-16"},
		{"Ironwood", "2x2x1", 0, "tpu7x-standard-4t", 1, 4, false, PlacementNone, "tpu7x-8"},
	}
	for _, tc := range tests {
		t.Run(tc.generation+"/"+tc.topology, func(t *testing.T) {
			s, err := NewSlice(tc.generation, tc.topology, tc.chipsPerHost)
			if err != nil {
				t.Fatalf("NewSlice(%q, %q, %d): %v", tc.generation, tc.topology, tc.chipsPerHost, err)
			}
			if s.MachineType.Name != tc.machineType {
				t.Errorf("machine type = %s, want %s", s.MachineType.Name, tc.machineType)
			}
			if s.Hosts != tc.hosts {
				t.Errorf("hosts = %d, want %d", s.Hosts, tc.hosts)
			}
			if s.TotalChips() != tc.chips {
				t.Errorf("chips = %d, want %d", s.TotalChips(), tc.chips)
			}
			if s.Hosts*s.ChipsPerHost() != s.TotalChips() {
				t.Errorf("hosts %d x chips per host %d != chips %d", s.Hosts, s.ChipsPerHost(), s.TotalChips())
			}
			if s.MultiHost != tc.multiHost {
				t.Errorf("multi-host = %v, want %v", s.MultiHost, tc.multiHost)
			}
			if s.Placement != tc.placement {
				t.Errorf("placement = %s, want %s", s.Placement, tc.placement)
			}
			if got := s.AcceleratorType(); got != tc.accelerator {
				t.Errorf("accelerator type = %s, want %s", got, tc.accelerator)
			}
			wantTopology := ""
			if tc.multiHost {
				wantTopology = tc.topology
			}
			if got := s.TPUTopology(); got != wantTopology {
				t.Errorf("tpu_topology = %q, want %q", got, wantTopology)
			}
		})
	}
}

func TestNewSliceInvalid(t *testing.T) {
	tests := []struct {
		generation, topology string
		chipsPerHost         int
		wantParts            []string
	}{
		{"v3", "4x4", 0, []string{`unknown TPU generation "v3"`, "v4, v5e, v5p, v6e, tpu7x", "trillium=v6e"}},
		{"v6e", "4X4", 0, []string{"upper-case X", `"4x4"`}},
		{"v6e", "4 x 4", 0, []string{"white space", `"4x4"`}},
		{"v6e", "", 0, []string{"topology is empty"}},
		{"v6e", "4x", 0, []string{`dimension ""`}},
		{"v6e", "4x04", 0, []string{`dimension "04"`}},
		{"v6e", "0x4", 0, []string{`dimension "0"`}},
		{"v6e", "4x4x4x4", 0, []string{"two dimensions"}},
		// 2D: shapes GKE does not offer; the error lists shapes near in chip count.
		{"v6e", "3x3", 0, []string{"3x3 is not a v6e slice shape", "1x1 (1 chip)", "2x2 (4 chips)", "2x4 (8 chips)", "4x4 (16 chips)"}},
		{"v6e", "2x8", 0, []string{"2x8 is not a v6e slice shape", "4x4 (16 chips)"}},
		{"v5e", "32x32", 0, []string{"not a v5e slice shape", "16x16 (256 chips)"}},
		{"v6e", "2x2x4", 0, []string{"v6e topologies have 2 dimensions", "4x4"}},
		{"v5p", "4x4", 0, []string{"v5p topologies have 3 dimensions", "2x2x4"}},
		// 3D: non-multiples of 4, order rule, cube limits.
		{"v4", "2x2x3", 0, []string{"2x2x3 is not a v4 slice shape"}},
		{"v4", "4x4x6", 0, []string{"4x4x6 is not a v4 slice shape"}},
		{"v5p", "4x4x2", 0, []string{"is not a v5p slice shape"}},
		{"v5p", "8x4x4", 0, []string{"non-decreasing order", "write 4x4x8"}},
		{"tpu7x", "4x8x4", 0, []string{"non-decreasing order", "write 4x4x8"}},
		{"v4", "4x4x260", 0, []string{"65 cubes", "at most 64 (4096 chips)"}},
		{"v4", "16x16x20", 0, []string{"80 cubes", "at most 64"}},
		{"v5p", "16x16x28", 0, []string{"112 cubes", "at most 96 (6144 chips)"}},
		{"tpu7x", "24x24x20", 0, []string{"180 cubes", "at most 144 (9216 chips)", "16x24x24 (9216 chips)"}},
		// Single-host shapes only exist where the VM size does.
		{"v4", "1x1x1", 0, []string{"1x1x1 is not a v4 slice shape", "2x2x1 (4 chips)"}},
		// chips_per_host that does not fit.
		{"v6e", "4x4", 8, []string{"chips_per_host = 8 does not fit v6e 4x4", "valid values are 4"}},
		{"v6e", "2x4", 2, []string{"chips_per_host = 2 does not fit v6e 2x4", "valid values are 8, 4"}},
		{"v5e", "2x4", 2, []string{"chips_per_host = 2 does not fit v5e 2x4", "valid values are 8, 4"}},
		{"v6e", "1x1", 4, []string{"valid values are 1"}},
		{"tpu7x", "2x2x2", 1, []string{"valid values are 4"}},
	}
	for _, tc := range tests {
		t.Run(tc.generation+"/"+tc.topology, func(t *testing.T) {
			s, err := NewSlice(tc.generation, tc.topology, tc.chipsPerHost)
			if err == nil {
				t.Fatalf("NewSlice(%q, %q, %d) = %+v, want an error", tc.generation, tc.topology, tc.chipsPerHost, s)
			}
			for _, part := range tc.wantParts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}

func TestTopologiesAreValidAndCanonical(t *testing.T) {
	wantCounts := map[string]int{
		"v5e": 8, // 1x1 2x2 2x4 + 4x4 4x8 8x8 8x16 16x16
		"v6e": 8, // 2x4 is both a single-host and a multi-host shape but listed once
	}
	for _, g := range Generations() {
		list := g.Topologies()
		if want, ok := wantCounts[g.Name]; ok && len(list) != want {
			t.Errorf("%s: %d topologies, want %d: %v", g.Name, len(list), want, list)
		}
		seen := map[Topology]bool{}
		for i, topo := range list {
			if seen[topo] {
				t.Errorf("%s: %s listed twice", g.Name, topo)
			}
			seen[topo] = true
			if err := g.ValidateTopology(topo); err != nil {
				t.Errorf("%s: listed topology %s does not validate: %v", g.Name, topo, err)
			}
			if i > 0 && list[i-1].Chips() > topo.Chips() {
				t.Errorf("%s: %s listed after the larger %s", g.Name, topo, list[i-1])
			}
			if topo.Dims() == 3 && topo.Chips() > 4 && topo.allMultiplesOf4() && !topo.isSorted() {
				t.Errorf("%s: %s is not in canonical order", g.Name, topo)
			}
		}
	}
}

func TestCubeLimitBoundaries(t *testing.T) {
	tests := []struct {
		generation string
		maxCubes   int
	}{{"v4", 64}, {"v5p", 96}, {"tpu7x", 144}}
	for _, tc := range tests {
		g, err := LookupGeneration(tc.generation)
		if err != nil {
			t.Fatal(err)
		}
		largest := 0
		for _, topo := range g.Topologies() {
			if c := topo.Chips(); c > largest {
				largest = c
			}
		}
		if largest != tc.maxCubes*64 {
			t.Errorf("%s: largest slice has %d chips, want %d", tc.generation, largest, tc.maxCubes*64)
		}
		// At the limit along one long axis, and one cube more.
		atLimit := newTopology(4, 4, 4*tc.maxCubes)
		if err := g.ValidateTopology(atLimit); err != nil {
			t.Errorf("%s %s (%d cubes) refused: %v", tc.generation, atLimit, tc.maxCubes, err)
		}
		over := newTopology(4, 4, 4*(tc.maxCubes+1))
		if err := g.ValidateTopology(over); err == nil {
			t.Errorf("%s %s (%d cubes) accepted", tc.generation, over, tc.maxCubes+1)
		}
	}
}

func TestSliceForNodePool(t *testing.T) {
	tests := []struct {
		machineType, topology string
		wantTopology          string
		wantHosts             int
		wantErr               string
	}{
		{"ct6e-standard-4t", "4x4", "4x4", 4, ""},
		{"ct6e-standard-4t", "2x4", "2x4", 2, ""},
		{"ct6e-standard-8t", "", "2x4", 1, ""},
		{"ct6e-standard-1t", "", "1x1", 1, ""},
		{"ct5lp-hightpu-4t", "", "2x2", 1, ""},
		{"ct4p-hightpu-4t", "", "2x2x1", 1, ""},
		{"ct5p-hightpu-4t", "2x2x4", "2x2x4", 4, ""},
		{"tpu7x-standard-4t", "4x4x4", "4x4x4", 16, ""},
		{"tpu7x-standard-1t", "", "1x1x1", 1, ""},
		// Pools made by other tools: v5e 2x4 on two 4-chip VMs (xpk), a single-host shape written
		// out (Ray's GKE guide: ct4p-hightpu-4t with --tpu-topology 2x2x1).
		{"ct5lp-hightpu-4t", "2x4", "2x4", 2, ""},
		{"ct4p-hightpu-4t", "2x2x1", "2x2x1", 1, ""},
		{"ct6e-standard-4t", "2x2", "2x2", 1, ""},
		{"ct6e-standard-8t", "4x4", "", 0, "does not fit machine type ct6e-standard-8t"},
		{"ct6e-standard-1t", "2x2", "", 0, "does not fit machine type ct6e-standard-1t"},
		{"ct5p-hightpu-4t", "4x4", "", 0, "v5p topologies have 3 dimensions"},
		{"e2-standard-4", "", "", 0, "not a TPU machine type"},
	}
	for _, tc := range tests {
		t.Run(tc.machineType+"/"+tc.topology, func(t *testing.T) {
			s, err := SliceForNodePool(tc.machineType, tc.topology)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Topology.String() != tc.wantTopology || s.Hosts != tc.wantHosts {
				t.Errorf("got %s with %d hosts, want %s with %d", s.Topology, s.Hosts, tc.wantTopology, tc.wantHosts)
			}
			if s.MachineType.Name != tc.machineType {
				t.Errorf("machine type = %s, want %s", s.MachineType.Name, tc.machineType)
			}
		})
	}
}

func TestLookupGenerationAliases(t *testing.T) {
	tests := map[string]string{
		"v4": "v4", "V4": "v4",
		"v5e": "v5e", "v5litepod": "v5e",
		"v5p": "v5p",
		"v6e": "v6e", "trillium": "v6e", "Trillium": "v6e",
		"tpu7x": "tpu7x", "v7x": "tpu7x", "ironwood": "tpu7x",
	}
	for in, want := range tests {
		g, err := LookupGeneration(in)
		if err != nil {
			t.Errorf("LookupGeneration(%q): %v", in, err)
			continue
		}
		if g.Name != want {
			t.Errorf("LookupGeneration(%q) = %s, want %s", in, g.Name, want)
		}
	}
}

func TestGenerationFacts(t *testing.T) {
	tests := []struct {
		name, label, rayVersion, rayType, minVersion string
	}{
		{"v4", "tpu-v4-podslice", "v4", "TPU-V4", "1.26.1-gke.1500"},
		{"v5e", "tpu-v5-lite-podslice", "v5litepod", "TPU-V5LITEPOD", "1.27.2-gke.2100"},
		{"v5p", "tpu-v5p-slice", "v5p", "TPU-V5P", "1.28.3-gke.1024000"},
		{"v6e", "tpu-v6e-slice", "v6e", "TPU-V6E", "1.31.2-gke.1115000"},
		{"tpu7x", "tpu7x", "v7x", "TPU-V7X", "1.34.0-gke.2201000"},
	}
	for _, tc := range tests {
		g, err := LookupGeneration(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if g.GKEAccelerator != tc.label || g.RayAcceleratorVersion != tc.rayVersion ||
			g.RayAcceleratorType != tc.rayType || g.MinGKEVersion.String() != tc.minVersion {
			t.Errorf("%s: got (%s, %s, %s, %s), want (%s, %s, %s, %s)", tc.name,
				g.GKEAccelerator, g.RayAcceleratorVersion, g.RayAcceleratorType, g.MinGKEVersion,
				tc.label, tc.rayVersion, tc.rayType, tc.minVersion)
		}
	}
}

func TestLookupMachineType(t *testing.T) {
	g, m, ok := LookupMachineType("ct5lp-hightpu-8t")
	if !ok || g.Name != "v5e" || m.ChipsPerVM != 8 {
		t.Errorf("ct5lp-hightpu-8t = (%v, %+v, %v), want v5e with 8 chips", g, m, ok)
	}
	if _, _, ok := LookupMachineType("n2-standard-8"); ok {
		t.Error("n2-standard-8 reported as a TPU machine type")
	}
}

func TestNodeSelector(t *testing.T) {
	s, err := NewSlice("v6e", "4x4", 0)
	if err != nil {
		t.Fatal(err)
	}
	sel := s.NodeSelector()
	if len(sel) != 2 || sel["cloud.google.com/gke-tpu-accelerator"] != "tpu-v6e-slice" ||
		sel["cloud.google.com/gke-tpu-topology"] != "4x4" {
		t.Errorf("node selector = %v", sel)
	}
}
