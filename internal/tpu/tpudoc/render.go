package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// pageTemplate is the guide's prose; render fills in the catalog.
//
//go:embed tpu-reference.md.tmpl
var pageTemplate string

// listedCubeChips bounds the cube shapes that 3D generations list one by one: up to 8 cubes
// (512 chips). The rule covers the rest.
const listedCubeChips = 8 * 64

// notes are facts about one generation that the catalog holds as rules rather than data, each
// with its source.
var notes = map[string][]string{
	"v4": {
		"A v4 slice is a 3D torus (wraparound links in every dimension) only when its dimensions, " +
			"smallest first, satisfy 2A = B = C or 2A = 2B = C, such as `4x8x8` or `8x8x16` (Cloud TPU v4 documentation).",
	},
	"v5e": {
		"`2x4` is one `ct5lp-hightpu-8t` VM by default. With `chips_per_host = 4` it is two `ct5lp-hightpu-4t` VMs, as xpk " +
			"creates `v5litepod-8` (AI-Hypercomputer/xpk `system_characteristics.py`); no GKE page confirms or refutes that shape, " +
			"so prefer the single VM. Ray's `slice_placement_group` then needs `chips_per_vm=4`, a parameter from Ray 2.56 " +
			"(raytpu's table of Ray releases); earlier releases assume one 8-chip VM, whose bundle no 4-chip host holds.",
	},
	"v5p": {
		"The Cloud TPU v5p documentation caps one slice at `16x16x24`.",
	},
	"v6e": {
		"`2x4` is one `ct6e-standard-8t` VM by default. With `chips_per_host = 4` it is two `ct6e-standard-4t` VMs, a multi-host " +
			"slice (the Cloud TPU v6e documentation: only through the GKE API). Ray's `slice_placement_group` then needs " +
			"`chips_per_vm=4`, a parameter from Ray 2.56 (raytpu's table of Ray releases); earlier releases assume one 8-chip VM, " +
			"whose bundle no 4-chip host holds. `raytpu_slice` puts `chips_per_vm` in its `slice_placement_group` output for the Ray " +
			"versions that take it.",
	},
}

// page is what the template renders.
type page struct {
	Generations           []generation
	MultiHostChipsPerVM   int
	RayOperatorMinVersion string
	CoreCounted           []string // generations whose accelerator types count TensorCores
	ChipCounted           []string // generations whose accelerator types count chips
	AnyUnverified         bool
	ListedChips           int
}

type generation struct {
	*tpu.Generation
	MachineTypes    string // "`ct6e-standard-1t` (1 chip), ..."
	TopologyForm    string // "AxB" or "AxBxC"
	MinGKEVersion   string
	Unverified      bool
	MultiHostPlaced string
	Shapes          []shape
	Notes           []string

	// 3D generations only.
	SmallShapes []string
	MaxChips    int
	Largest     string
	TotalShapes int
	Unlisted    int
	RayAccepted int
	RayLargest  string
	RayOrder    *rayOrder // set where Ray accepts one order of a shape and not another
}

// rayOrder is a shape that Ray accepts in one order of its dimensions and refuses in another.
type rayOrder struct{ Accepted, Refused string }

type shape struct {
	Topology        string
	Chips           int
	Hosts           string // "4 × `ct6e-standard-4t`", with alternatives
	AcceleratorType string
	RayPodType      string
	RaySupported    bool
}

// render produces the guide from the catalog.
func render() ([]byte, error) {
	p := page{
		MultiHostChipsPerVM:   tpu.MultiHostChipsPerVM,
		RayOperatorMinVersion: tpu.RayOperatorMinVersion.String(),
		ListedChips:           listedCubeChips,
	}
	for _, g := range tpu.Generations() {
		v, err := newGeneration(g)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Name, err)
		}
		p.Generations = append(p.Generations, v)
		p.AnyUnverified = p.AnyUnverified || v.Unverified
		if g.TensorCoresPerChip > 1 {
			p.CoreCounted = append(p.CoreCounted, g.Name)
		} else {
			p.ChipCounted = append(p.ChipCounted, g.Name)
		}
	}
	for name := range notes {
		if _, err := tpu.LookupGeneration(name); err != nil {
			return nil, fmt.Errorf("note for %s: %w", name, err)
		}
	}
	tmpl, err := template.New("tpu-reference").Funcs(template.FuncMap{
		"codes": codeList,
		"yesno": func(b bool) string {
			if b {
				return "yes"
			}
			return "**no**"
		},
	}).Parse(pageTemplate)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, p); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func newGeneration(g *tpu.Generation) (generation, error) {
	v := generation{
		Generation:    g,
		TopologyForm:  "AxB",
		MinGKEVersion: g.MinGKEVersion.String(),
		Unverified:    !g.MinGKEVersionVerified,
		Notes:         notes[g.Name],
	}
	if g.Dims == 3 {
		v.TopologyForm = "AxBxC"
	}
	machineTypes := make([]string, len(g.MachineTypes))
	for i, m := range g.MachineTypes {
		machineTypes[i] = fmt.Sprintf("`%s` (%s)", m.Name, chips(m.ChipsPerVM))
	}
	v.MachineTypes = strings.Join(machineTypes, ", ")
	switch g.MultiHostPlacement {
	case tpu.PlacementCompact:
		v.MultiHostPlaced = "a `COMPACT` placement policy that carries the topology"
	case tpu.PlacementWorkloadPolicy:
		v.MultiHostPlaced = "a Compute Engine workload policy of type `HIGH_THROUGHPUT`, named by `placement_policy_name` on " +
			"`raytpu_slice`; GKE refuses a `COMPACT` placement policy for them (GKE \"About Ironwood (TPU7x)\")"
	default:
		return v, fmt.Errorf("no wording for placement %s", g.MultiHostPlacement)
	}

	all := g.Topologies()
	for _, t := range all {
		s, err := g.Slice(t, 0)
		if err != nil {
			return v, err
		}
		if s.RayTopologySupported() {
			v.RayAccepted++
			v.RayLargest = t.String()
		}
		if g.Dims == 3 && t.Chips() > listedCubeChips {
			v.Unlisted++
			continue
		}
		v.Shapes = append(v.Shapes, newShape(g, s))
		if g.Dims == 3 && s.MultiHost && !allMultiplesOf4(t) {
			v.SmallShapes = append(v.SmallShapes, t.String())
		}
	}
	v.TotalShapes = len(all)
	if !g.SortedDims && g.Dims == 3 {
		v.RayOrder = rayOrderExample(g, all)
	}
	if g.Dims == 3 {
		v.MaxChips = g.MaxCubes * 64
		// The accelerator type of the largest size names its most cube-like shape.
		_, largest, err := tpu.ParseAcceleratorType(fmt.Sprintf("%s-%d", g.AcceleratorTypePrefix, v.MaxChips*g.TensorCoresPerChip))
		if err != nil {
			return v, fmt.Errorf("largest shape: %w", err)
		}
		v.Largest = largest.String()
	}
	return v, nil
}

// newShape describes one topology: its default VMs first, then the other chips_per_host values
// that fit it.
func newShape(g *tpu.Generation, s *tpu.Slice) shape {
	hosts := []string{hostsOf(s)}
	for _, c := range g.ChipsPerVMChoices() {
		if c == s.ChipsPerHost() {
			continue
		}
		if alt, err := g.Slice(s.Topology, c); err == nil {
			hosts = append(hosts, fmt.Sprintf("or %s with `chips_per_host = %d`", hostsOf(alt), c))
		}
	}
	return shape{
		Topology:        s.Topology.String(),
		Chips:           s.TotalChips(),
		Hosts:           strings.Join(hosts, ", "),
		AcceleratorType: s.AcceleratorType(),
		RayPodType:      s.RayPodType(),
		RaySupported:    s.RayTopologySupported(),
	}
}

// rayOrderExample finds the smallest shape that Ray's slice_placement_group accepts with its
// dimensions in one order and refuses in another (both valid for GKE).
func rayOrderExample(g *tpu.Generation, shapes []tpu.Topology) *rayOrder {
	for _, t := range shapes {
		a, b, c := t.Dim(0), t.Dim(1), t.Dim(2)
		accepted, refused := "", ""
		for _, p := range [][3]int{{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}} {
			s, err := g.Slice(tpu.MustParseTopology(fmt.Sprintf("%dx%dx%d", p[0], p[1], p[2])), 0)
			if err != nil {
				continue // not every order of a small shape is a slice
			}
			switch {
			case s.RayTopologySupported() && accepted == "":
				accepted = s.Topology.String()
			case !s.RayTopologySupported() && refused == "":
				refused = s.Topology.String()
			}
		}
		if accepted != "" && refused != "" {
			return &rayOrder{Accepted: accepted, Refused: refused}
		}
	}
	return nil
}

func hostsOf(s *tpu.Slice) string {
	return fmt.Sprintf("%d × `%s`", s.Hosts, s.MachineType.Name)
}

func allMultiplesOf4(t tpu.Topology) bool {
	for i := 0; i < t.Dims(); i++ {
		if t.Dim(i)%4 != 0 {
			return false
		}
	}
	return true
}

func chips(n int) string {
	if n == 1 {
		return "1 chip"
	}
	return fmt.Sprintf("%d chips", n)
}

// codeList renders `a`, `b` and `c`.
func codeList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "`" + s + "`"
	}
	return wordList(quoted)
}

// wordList renders a, b and c.
func wordList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
