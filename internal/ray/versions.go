// Package ray holds what raytpu emits for Ray that depends on the Ray version: the arguments of
// ray.util.tpu.slice_placement_group, whether it can reserve a single-host slice, how Ray names a
// tpu7x pod type and which Python versions have official -tpu images. Pure data, no I/O.
//
// Ray changes these between minor releases, so every row names its source. Where a fact could not
// be read at the release tag, the row says INFERRED and why; correct the row, not the callers.
package ray

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Ray release, major.minor.patch.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less orders versions numerically.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// ParseVersion reads "2.55.0" (or "2.55", patch 0). Pre-release suffixes are refused: the
// official images are tagged with plain release numbers.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("ray_version %q is not major.minor.patch, like 2.55.0", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || (len(p) > 1 && p[0] == '0') {
			return Version{}, fmt.Errorf("ray_version %q is not major.minor.patch, like 2.55.0", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// Names is what one range of Ray releases expects from raytpu.
type Names struct {
	// From is the first release the row describes; it holds until the next row's From.
	From Version
	// PlacementGroupArgs are the named parameters of ray.util.tpu.slice_placement_group, in order.
	PlacementGroupArgs []string
	// ChipsPerVM is true when slice_placement_group takes chips_per_vm (needed for a v6e 2x4
	// built from two 4-chip VMs: Ray otherwise assumes one 8-chip VM).
	ChipsPerVM bool
	// SingleHostSlices is true when slice_placement_group can reserve a single-host slice (before,
	// single-host TPU nodes lack the unique slice label it reserves by).
	SingleHostSlices bool
	// TPU7xPodPrefix is how Ray names the tpu7x pod type and its head resource: "v7x" (v7x-16,
	// TPU-v7x-16-head) or "tpu7x" (as the TPU VM reports it).
	TPU7xPodPrefix string
	// TPUImagePythons are the Python versions with an official rayproject/ray:<v>-py<p>-tpu image.
	TPUImagePythons []string
	// Source says where the row comes from; INFERRED marks what could not be read at the tag.
	Source string
}

// table is sorted by From. Sources: ray-project/ray pull requests (dates from the PRs):
// #60338 (2026-01-20) normalises tpu7x-N to v7x-N; #62307 (2026-04-02) is the 2.55.0 version
// bump; #62526 (opened 2026-04-11) adds chips_per_vm; #62113 (2026-03-26) builds release TPU images
// for Python 3.10 only and #62346 (2026-04-04) reverts it; #64079 (2026-06-13) lets
// SlicePlacementGroup reserve single-host TPUs; #64072 (2026-07-23) adds pg_per_slice.
var table = []Names{
	{
		From:               Version{2, 54, 0},
		PlacementGroupArgs: []string{"topology", "accelerator_version", "num_slices"},
		TPU7xPodPrefix:     "tpu7x",
		TPUImagePythons:    nil,
		Source: "ray python/ray/util/tpu.py@91c2bbba (late 2025): slice_placement_group(topology, accelerator_version, " +
			"num_slices=1, **kwargs). INFERRED: #60338 (tpu7x-N to v7x-N) not yet released; no release -tpu images " +
			"(only nightly-py310-tpu, ray#61175, 2026-02-19).",
	},
	{
		From:               Version{2, 55, 0},
		PlacementGroupArgs: []string{"topology", "accelerator_version", "resources_per_bundle", "num_slices"},
		TPU7xPodPrefix:     "v7x",
		TPUImagePythons:    []string{"3.10"},
		Source: "ray #62307 (2.55.0 bump, 2026-04-02) cut before #62526 (chips_per_vm, opened 2026-04-11) and #64079 " +
			"(single-host slices, 2026-06-13). INFERRED: resources_per_bundle present and #60338 (v7x-N) shipped, " +
			"both dated before the cut; -tpu images for Python 3.10 as #62113 restricted them (its revert #62346 " +
			"leaves the 2.55.x tags on Docker Hub unverified).",
	},
	{
		From:               Version{2, 56, 0},
		PlacementGroupArgs: []string{"topology", "accelerator_version", "resources_per_bundle", "num_slices", "chips_per_vm"},
		ChipsPerVM:         true,
		TPU7xPodPrefix:     "v7x",
		TPUImagePythons:    []string{"3.10"},
		Source: "ray #62526 (chips_per_vm, opened 2026-04-11, after the 2.55 cut). INFERRED: first released in 2.56.0; " +
			"single-host reservation (#64079, 2026-06-13) not yet in it.",
	},
	{
		From: Version{2, 58, 0},
		PlacementGroupArgs: []string{"topology", "accelerator_version", "resources_per_bundle", "num_slices", "chips_per_vm",
			"pg_per_slice", "tpu_resource_per_chip"},
		ChipsPerVM:       true,
		SingleHostSlices: true,
		TPU7xPodPrefix:   "v7x",
		TPUImagePythons:  []string{"3.10"},
		Source: "ray python/ray/util/tpu.py@01624ad4 (master, mid-2026): slice_placement_group(topology, " +
			"accelerator_version, resources_per_bundle=None, num_slices=1, chips_per_vm=None, pg_per_slice=False, " +
			"tpu_resource_per_chip=None); #64079 (2026-06-13) single-host slices; #64072 (2026-07-23) pg_per_slice. " +
			"INFERRED: first released in 2.58.0.",
	},
}

// Lookup returns the row for version. exact is false when the table does not cover the version:
// older than the oldest row (the oldest row is given) or past the newest row's minor release (the
// newest row is given). Then the facts are a guess, and the caller should say so.
func Lookup(v Version) (row Names, exact bool) {
	if v.Less(table[0].From) {
		return table[0], false
	}
	for _, r := range table {
		if !v.Less(r.From) {
			row = r
		}
	}
	newest := table[len(table)-1].From
	return row, v.Less(Version{newest.Major, newest.Minor + 1, 0})
}

// Known lists the first release of every row, oldest first.
func Known() []string {
	out := make([]string, len(table))
	for i, r := range table {
		out[i] = r.From.String()
	}
	return out
}

// PodType is Ray's ray.io/tpu-pod-type for a slice: the Ray accelerator version and the
// accelerator-type size (TensorCores for 2-core chips, chips otherwise), with tpu7x named as the
// row says (v7x-16 or tpu7x-16).
func (n Names) PodType(acceleratorVersion string, size int) string {
	if acceleratorVersion == "v7x" || acceleratorVersion == "tpu7x" {
		acceleratorVersion = n.TPU7xPodPrefix
	}
	return fmt.Sprintf("%s-%d", acceleratorVersion, size)
}

// HasTPUImage reports whether python (like "3.10") has an official -tpu image in this row.
func (n Names) HasTPUImage(python string) bool {
	for _, p := range n.TPUImagePythons {
		if p == python {
			return true
		}
	}
	return false
}
