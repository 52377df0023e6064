package gketpu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// The emulator's tables (from GKE's docs, GKE's cluster autoscaler and xpk) held against
// internal/tpu, the provider's catalog, row by row. Where the two differ on purpose, the
// difference is listed here with its source, so that any other disagreement fails.

// shapeDifferences are (machine type, topology) pairs the emulator accepts and internal/tpu
// refuses. Each must still differ: a listed difference that goes away fails too.
var shapeDifferences = map[[2]string]string{}

// maxDim is the largest dimension of a 3D cube shape in the emulator: xpk's
// generate_tpu_topologies stops at 256. internal/tpu has no such bound, so it accepts, say,
// tpu7x 4x4x260 (65 cubes), which the emulator refuses.
const maxDim = 256

// minVersionDifferences are the generations with a minimum in internal/tpu (marked unverified
// there) and none in the emulator, for which no GKE page read states one.
var minVersionDifferences = map[string]string{
	"v4":  "1.26.1-gke.1500",
	"v5e": "1.27.2-gke.2100",
	"v5p": "1.28.3-gke.1024000",
}

func TestMachineTypesMatchInternalTPU(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range tpu.Generations() {
		for _, mt := range g.MachineTypes {
			seen[mt.Name] = true
			m, ok := gketpu.LookupMachineType(mt.Name)
			if !ok {
				t.Errorf("%s (internal/tpu %s) is not in the emulator's machine_types.txt", mt.Name, g.Name)
				continue
			}
			if m.Generation.Name != g.Name || m.Generation.Accelerator != g.GKEAccelerator || m.ChipsPerVM != mt.ChipsPerVM || m.Dims != g.Dims {
				t.Errorf("%s: emulator %s/%s/%d chips/%dD, internal/tpu %s/%s/%d chips/%dD", mt.Name,
					m.Generation.Name, m.Generation.Accelerator, m.ChipsPerVM, m.Dims, g.Name, g.GKEAccelerator, mt.ChipsPerVM, g.Dims)
			}
		}
	}
	for _, m := range gketpu.MachineTypes() {
		if !seen[m.Name] {
			t.Errorf("%s is in the emulator's machine_types.txt but not in internal/tpu", m.Name)
		}
	}
}

func TestGenerationsMatchInternalTPU(t *testing.T) {
	if got, want := len(gketpu.Generations()), len(tpu.Generations()); got != want {
		t.Errorf("%d generations in the emulator, %d in internal/tpu", got, want)
	}
	for _, tg := range tpu.Generations() {
		g, err := gketpu.LookupGeneration(tg.Name)
		if err != nil {
			t.Errorf("%s: %v", tg.Name, err)
			continue
		}
		if want := tg.MultiHostPlacement == tpu.PlacementWorkloadPolicy; g.MultiHostWorkloadPolicy != want {
			t.Errorf("%s: workload policy for multi-host slices: emulator %v, internal/tpu %v", tg.Name, g.MultiHostWorkloadPolicy, want)
		}
		theirs := tg.MinGKEVersion.String()
		switch listed, known := minVersionDifferences[tg.Name]; {
		case g.MinGKEVersion != "" && known:
			t.Errorf("%s: the emulator has minimum %s now: drop it from minVersionDifferences", tg.Name, g.MinGKEVersion)
		case g.MinGKEVersion != "" && g.MinGKEVersion != theirs:
			t.Errorf("%s: minimum GKE version: emulator %s, internal/tpu %s", tg.Name, g.MinGKEVersion, theirs)
		case g.MinGKEVersion == "" && !known:
			t.Errorf("%s: internal/tpu's minimum %s has no counterpart in the emulator", tg.Name, theirs)
		case g.MinGKEVersion == "" && (listed != theirs || tg.MinGKEVersionVerified):
			t.Errorf("%s: internal/tpu's minimum is %s (verified: %v), listed as %s (unverified)", tg.Name, theirs, tg.MinGKEVersionVerified, listed)
		}
	}
	if got, want := gketpu.RayOperatorMinVersion(), tpu.RayOperatorMinVersion.String(); got != want {
		t.Errorf("Ray Operator minimum version: emulator %s, internal/tpu %s", got, want)
	}
}

func TestLabelsMatchInternalTPU(t *testing.T) {
	for _, p := range [][2]string{
		{gketpu.LabelAccelerator, tpu.LabelAccelerator}, {gketpu.LabelTopology, tpu.LabelTopology},
		{gketpu.LabelNodePool, tpu.LabelNodePool}, {gketpu.ResourceName, tpu.ResourceName},
		{gketpu.TaintValue, tpu.TaintValue}, {gketpu.TaintEffect, tpu.TaintEffect},
	} {
		if p[0] != p[1] {
			t.Errorf("emulator %q, internal/tpu %q", p[0], p[1])
		}
	}
}

// TestShapesMatchInternalTPU asks both sides about topologies on every machine type: every AxB
// with sides 1 to 32; every AxBxC with sides 1 to 12, 16, 20, 24, 28 or 32 (internal/tpu takes
// about 0.2 ms to refuse a shape, so the whole 32x32x32 cube would take half a minute); and long
// 3D shapes around the dimension bound. Both must accept or refuse, and agree on the hosts.
func TestShapesMatchInternalTPU(t *testing.T) {
	if testing.Short() {
		t.Skip("compares about 30,000 shapes")
	}
	differences := map[[2]string]bool{}
	for _, m := range gketpu.MachineTypes() {
		compareShape(t, m, "", differences)
		for _, topology := range shapes(m.Dims) {
			compareShape(t, m, topology, differences)
		}
		// One shape of the other dimension count, which both must refuse.
		compareShape(t, m, map[int]string{2: "4x4x4", 3: "4x4"}[m.Dims], differences)
	}
	for k, why := range shapeDifferences {
		if !differences[k] {
			t.Errorf("%s %s is listed as a difference (%s) but both sides agree now: drop it", k[0], k[1], why)
		}
	}
}

func shapes(dims int) []string {
	var out []string
	if dims == 2 {
		for a := 1; a <= 32; a++ {
			for b := 1; b <= 32; b++ {
				out = append(out, fmt.Sprintf("%dx%d", a, b))
			}
		}
		return out
	}
	sides := []int{16, 20, 24, 28, 32}
	for s := 1; s <= 12; s++ {
		sides = append(sides, s)
	}
	for _, a := range sides {
		for _, b := range sides {
			for _, c := range sides {
				out = append(out, fmt.Sprintf("%dx%dx%d", a, b, c))
			}
		}
	}
	for c := 36; c <= 2*maxDim+8; c += 4 {
		out = append(out, fmt.Sprintf("4x4x%d", c))
	}
	return append(out, "4x8x252", "8x8x260", "260x4x4")
}

func compareShape(t *testing.T, m *gketpu.MachineType, topology string, differences map[[2]string]bool) {
	t.Helper()
	ours, oursErr := m.Slice(topology)
	theirs, theirsErr := tpu.SliceForNodePool(m.Name, topology)
	if theirsErr == nil && !theirs.MultiHost && topology != "" {
		// internal/tpu reads a single-host shape written out, as pools of other tools carry it;
		// the pools raytpu creates never carry one (Slice.TPUTopology), which is what GKE takes.
		theirsErr = fmt.Errorf("raytpu creates single-host pools without a topology")
	}
	key := [2]string{m.Name, topology}
	if (oursErr == nil) != (theirsErr == nil) {
		if _, listed := shapeDifferences[key]; listed && oursErr == nil {
			differences[key] = true
			return
		}
		if oursErr != nil && theirsErr == nil && longerThan(topology, maxDim) {
			return
		}
		t.Errorf("%s %q: emulator %v, internal/tpu %v", m.Name, topology, errText(oursErr), errText(theirsErr))
		return
	}
	if oursErr != nil {
		return
	}
	if ours.Hosts != theirs.Hosts || ours.MultiHost != theirs.MultiHost || ours.Topology != theirs.Topology.String() ||
		m.ChipsPerVM != theirs.ChipsPerHost() || ours.Chips != theirs.TotalChips() {
		t.Errorf("%s %q: emulator %+v, internal/tpu %s with %d hosts (multi-host %v) of %d chips",
			m.Name, topology, ours, theirs.Topology, theirs.Hosts, theirs.MultiHost, theirs.ChipsPerHost())
	}
}

func longerThan(topology string, n int) bool {
	for _, d := range strings.Split(topology, "x") {
		var v int
		if _, err := fmt.Sscan(d, &v); err == nil && v > n {
			return true
		}
	}
	return false
}

func errText(err error) string {
	if err == nil {
		return "accepts"
	}
	return "refuses (" + err.Error() + ")"
}
