// Package tpu is raytpu's TPU domain model: the generations catalog, topology parsing and
// validation, slice derivation, GKE version ordering and Ray naming. It does no I/O. The emulator
// does not use it: its own table of GKE's TPU rules (internal/emulator/gketpu) is compared with
// this one row by row, so a mistake in either must be made in both to pass.
package tpu

import (
	"fmt"
	"sort"
	"strings"
)

// Placement is how GKE keeps the hosts of a slice together.
type Placement string

const (
	// PlacementNone is a single-host slice: no placement policy, no tpu_topology, which GKE
	// refuses on one ("TPU topology can't be specified with single-host TPU slice pool",
	// AI-Hypercomputer/xpk#825), a workload policy's topology included.
	PlacementNone Placement = "NONE"
	// PlacementCompact is PlacementPolicy{Type: COMPACT, TpuTopology: ...}.
	PlacementCompact Placement = "COMPACT"
	// PlacementWorkloadPolicy is PlacementPolicy{PolicyName: ...}: a Compute Engine workload policy
	// (HIGH_THROUGHPUT). GKE refuses COMPACT for multi-host tpu7x: "... with placement policy is
	// not supported. Use workload policy instead." (vllm-project/ci-infra#547).
	PlacementWorkloadPolicy Placement = "WORKLOAD_POLICY"
)

// MultiHostChipsPerVM is the number of chips on every VM of a multi-host slice, in every
// generation (Cloud TPU docs, "System architecture" of each generation).
const MultiHostChipsPerVM = 4

// MachineType is one GKE machine type of a TPU generation.
type MachineType struct {
	Name       string
	ChipsPerVM int
}

// Generation is one row of the catalog. Every value comes from the sources named on its row in
// generations; values not confirmed by a primary source are marked by MinGKEVersionVerified.
type Generation struct {
	// Name is the canonical name used in outputs: v4, v5e, v5p, v6e, tpu7x.
	Name string
	// Aliases are other accepted spellings (lower case).
	Aliases []string
	// DisplayName is the marketing name, for docs.
	DisplayName string
	// GKEAccelerator is the value of the node label cloud.google.com/gke-tpu-accelerator.
	GKEAccelerator string
	// MachineTypes is ordered by ChipsPerVM.
	MachineTypes []MachineType
	// Dims is 2 (AxB) or 3 (AxBxC).
	Dims int
	// TensorCoresPerChip decides how accelerator types count: cores (2) or chips (1).
	TensorCoresPerChip int
	// AcceleratorTypePrefix is the Cloud TPU accelerator type prefix, e.g. "v5litepod" in v5litepod-16.
	AcceleratorTypePrefix string
	// MinGKEVersion is the lowest GKE version that runs this generation.
	MinGKEVersion Version
	// MinGKEVersionVerified is false where no primary source confirmed MinGKEVersion.
	MinGKEVersionVerified bool
	// MultiHost2D lists the multi-host shapes of a 2D generation (4 chips per VM).
	MultiHost2D []string
	// MaxCubes bounds 3D shapes whose dimensions are multiples of 4 (a cube is 4x4x4 chips).
	MaxCubes int
	// SortedDims requires 3D dimensions in non-decreasing order (v5p, tpu7x); v4 accepts any order.
	SortedDims bool
	// MultiHostPlacement is how GKE places a multi-host slice of this generation.
	MultiHostPlacement Placement
	// FlexStart is whether GKE offers the generation as flex-start capacity ("TPU v3 and v4 are
	// not supported", GKE "About GPU and TPU provisioning with flex-start").
	FlexStart bool
	// RayAcceleratorVersion is Ray's name for the generation (ray.util.tpu, accelerator_version).
	RayAcceleratorVersion string
	// RayAcceleratorType is the value of Ray's ray.io/accelerator-type node label.
	RayAcceleratorType string
	// rayTopologies is Ray's VALID_TPU_TOPOLOGY entry: the shapes slice_placement_group accepts.
	rayTopologies func(Topology) bool
}

// smallShapes3D are the multi-host 3D shapes below one cube (Cloud TPU v4/v5p/tpu7x docs).
var smallShapes3D = []string{"2x2x2", "2x2x4", "2x4x4"}

// multiHost2D is the 2D pod-slice list of v5e and v6e (Cloud TPU v5e and v6e docs, GKE
// "Plan TPUs": 4x4, 4x8, 8x8, 8x16, 16x16; a pod is 256 chips).
var multiHost2D = []string{"4x4", "4x8", "8x8", "8x16", "16x16"}

// generations is the catalog. Sources (see the domain reference): cloud.google.com/tpu/docs/{v4,
// v5e,v5p,v6e,tpu7x}; GKE "About TPUs in GKE" and "Plan TPUs"; GKE cluster-autoscaler TPU machine
// types; AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py; ray-project/ray
// python/ray/_private/accelerators/tpu.py and python/ray/util/tpu.py.
var generations = []*Generation{
	{
		Name:                  "v4",
		DisplayName:           "TPU v4",
		GKEAccelerator:        "tpu-v4-podslice",
		MachineTypes:          []MachineType{{"ct4p-hightpu-4t", 4}},
		Dims:                  3,
		TensorCoresPerChip:    2,
		AcceleratorTypePrefix: "v4",
		// Unverified: no primary source found for the v4 minimum.
		MinGKEVersion:         MustParseVersion("1.26.1-gke.1500"),
		MinGKEVersionVerified: false,
		MaxCubes:              64, // 4096 chips, 16x16x16
		SortedDims:            false,
		MultiHostPlacement:    PlacementCompact,
		RayAcceleratorVersion: "v4",
		RayAcceleratorType:    "TPU-V4",
		rayTopologies: rayTopologies3D(
			[]int{4, 8, 12}, []int{4, 8, 12}, []int{4, 8, 12, 16}),
	},
	{
		Name:                  "v5e",
		Aliases:               []string{"v5litepod"},
		DisplayName:           "TPU v5e",
		GKEAccelerator:        "tpu-v5-lite-podslice",
		MachineTypes:          []MachineType{{"ct5lp-hightpu-1t", 1}, {"ct5lp-hightpu-4t", 4}, {"ct5lp-hightpu-8t", 8}},
		Dims:                  2,
		TensorCoresPerChip:    1,
		AcceleratorTypePrefix: "v5litepod",
		// Unverified: no primary source found for the v5e minimum.
		MinGKEVersion:         MustParseVersion("1.27.2-gke.2100"),
		MinGKEVersionVerified: false,
		// 2x4 is also two ct5lp-hightpu-4t VMs: xpk defines v5litepod-8 so
		// (AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py), and pools of that shape
		// exist; no GKE page confirms or refutes it.
		MultiHost2D:           append([]string{"2x4"}, multiHost2D...),
		MultiHostPlacement:    PlacementCompact,
		FlexStart:             true,
		RayAcceleratorVersion: "v5litepod",
		RayAcceleratorType:    "TPU-V5LITEPOD",
		rayTopologies:         rayTopologies2D,
	},
	{
		Name:                  "v5p",
		DisplayName:           "TPU v5p",
		GKEAccelerator:        "tpu-v5p-slice",
		MachineTypes:          []MachineType{{"ct5p-hightpu-4t", 4}},
		Dims:                  3,
		TensorCoresPerChip:    2,
		AcceleratorTypePrefix: "v5p",
		// Unverified: no primary source found for the v5p minimum.
		MinGKEVersion:         MustParseVersion("1.28.3-gke.1024000"),
		MinGKEVersionVerified: false,
		// The Cloud TPU v5p doc caps a slice at 16x16x24 (96 cubes); xpk allows up to 140 cubes,
		// which no primary source confirms, so 97..140 stay out.
		MaxCubes:              96,
		SortedDims:            true,
		MultiHostPlacement:    PlacementCompact,
		FlexStart:             true,
		RayAcceleratorVersion: "v5p",
		RayAcceleratorType:    "TPU-V5P",
		rayTopologies: rayTopologies3D(
			[]int{4, 8, 12, 16}, []int{4, 8, 12, 16}, []int{4, 8, 12, 16, 20, 24}),
	},
	{
		Name:                  "v6e",
		Aliases:               []string{"trillium"},
		DisplayName:           "TPU Trillium (v6e)",
		GKEAccelerator:        "tpu-v6e-slice",
		MachineTypes:          []MachineType{{"ct6e-standard-1t", 1}, {"ct6e-standard-4t", 4}, {"ct6e-standard-8t", 8}},
		Dims:                  2,
		TensorCoresPerChip:    1,
		AcceleratorTypePrefix: "v6e",
		// Ray's GKE TPU guide quoting the GKE docs.
		MinGKEVersion:         MustParseVersion("1.31.2-gke.1115000"),
		MinGKEVersionVerified: true,
		// 2x4 is also two ct6e-standard-4t VMs (v6e doc: "only supported when using the GKE API").
		MultiHost2D:           append([]string{"2x4"}, multiHost2D...),
		MultiHostPlacement:    PlacementCompact,
		FlexStart:             true,
		RayAcceleratorVersion: "v6e",
		RayAcceleratorType:    "TPU-V6E",
		rayTopologies:         rayTopologies2D,
	},
	{
		Name:                  "tpu7x",
		Aliases:               []string{"v7x", "ironwood"},
		DisplayName:           "TPU Ironwood (TPU7x)",
		GKEAccelerator:        "tpu7x",
		MachineTypes:          []MachineType{{"tpu7x-standard-1t", 1}, {"tpu7x-standard-4t", 4}},
		Dims:                  3,
		TensorCoresPerChip:    2,
		AcceleratorTypePrefix: "tpu7x",
		// GKE "About Ironwood (TPU7x)".
		MinGKEVersion:         MustParseVersion("1.34.0-gke.2201000"),
		MinGKEVersionVerified: true,
		MaxCubes:              144, // 9216 chips, the pod
		SortedDims:            true,
		MultiHostPlacement:    PlacementWorkloadPolicy,
		FlexStart:             true,
		RayAcceleratorVersion: "v7x",
		RayAcceleratorType:    "TPU-V7X",
		rayTopologies: rayTopologyList(
			"2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16"),
	},
}

// Generations returns the catalog in a stable order (v4, v5e, v5p, v6e, tpu7x).
func Generations() []*Generation {
	return append([]*Generation(nil), generations...)
}

// GenerationNames returns the canonical names, for error messages and docs.
func GenerationNames() []string {
	names := make([]string, len(generations))
	for i, g := range generations {
		names[i] = g.Name
	}
	return names
}

// LookupGeneration finds a generation by canonical name or alias, case-insensitively.
func LookupGeneration(name string) (*Generation, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, g := range generations {
		if g.Name == key {
			return g, nil
		}
		for _, alias := range g.Aliases {
			if alias == key {
				return g, nil
			}
		}
	}
	return nil, fmt.Errorf("unknown TPU generation %q: valid generations are %s (aliases: %s)",
		name, strings.Join(GenerationNames(), ", "), strings.Join(aliasList(), ", "))
}

// LookupMachineType reports the generation and VM shape of a TPU machine type. ok is false for
// machine types that are not TPU VMs (e2-standard-4 and the like).
func LookupMachineType(machineType string) (*Generation, MachineType, bool) {
	for _, g := range generations {
		for _, m := range g.MachineTypes {
			if m.Name == machineType {
				return g, m, true
			}
		}
	}
	return nil, MachineType{}, false
}

// machineTypeWithChips returns the machine type whose VM holds chips chips.
func (g *Generation) machineTypeWithChips(chips int) (MachineType, bool) {
	for _, m := range g.MachineTypes {
		if m.ChipsPerVM == chips {
			return m, true
		}
	}
	return MachineType{}, false
}

// ChipsPerVMChoices lists the VM sizes of the generation, ascending.
func (g *Generation) ChipsPerVMChoices() []int {
	out := make([]int, len(g.MachineTypes))
	for i, m := range g.MachineTypes {
		out[i] = m.ChipsPerVM
	}
	return out
}

func aliasList() []string {
	var out []string
	for _, g := range generations {
		for _, a := range g.Aliases {
			out = append(out, a+"="+g.Name)
		}
	}
	sort.Strings(out)
	return out
}
