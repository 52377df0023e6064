package tpu

import (
	"fmt"
	"strconv"
	"strings"
)

// AcceleratorType is the Cloud TPU name of the slice, e.g. v6e-16 or v5p-128. The number counts
// TensorCores for 2-core chips (v4, v5p, tpu7x) and chips otherwise (v5e, v6e).
func (s *Slice) AcceleratorType() string {
	return fmt.Sprintf("%s-%d", s.Generation.AcceleratorTypePrefix, s.TotalChips()*s.Generation.TensorCoresPerChip)
}

// ParseAcceleratorType turns an accelerator type such as v6e-16, v5litepod-16, v5e-16, v5p-128,
// v4-16 or tpu7x-8 into its generation and topology. For 3D generations, where several shapes
// share a chip count, it picks the most cube-like one with non-decreasing dimensions: the
// smallest largest dimension, then the smallest middle one (v5p-128 is 4x4x4).
func ParseAcceleratorType(s string) (*Generation, Topology, error) {
	i := strings.LastIndex(s, "-")
	if i <= 0 || i == len(s)-1 {
		return nil, Topology{}, fmt.Errorf("accelerator type %q must look like <generation>-<size>, for example v6e-16 or v5p-128", s)
	}
	prefix, number := strings.ToLower(s[:i]), s[i+1:]
	g := generationForPrefix(prefix)
	if g == nil {
		return nil, Topology{}, fmt.Errorf("accelerator type %q has unknown generation %q: valid prefixes are %s",
			s, prefix, strings.Join(acceleratorPrefixes(), ", "))
	}
	n, err := strconv.Atoi(number)
	if err != nil || n <= 0 || strconv.Itoa(n) != number {
		return nil, Topology{}, fmt.Errorf("accelerator type %q has size %q, which is not a positive whole number", s, number)
	}
	unit := "chips"
	if g.TensorCoresPerChip > 1 {
		unit = "TensorCores"
	}
	if n%g.TensorCoresPerChip != 0 {
		return nil, Topology{}, fmt.Errorf("accelerator type %q: the size of a %s type counts %s (%d per chip), so it must be a multiple of %d; valid sizes near it: %s",
			s, g.Name, unit, g.TensorCoresPerChip, g.TensorCoresPerChip, g.nearestSizes(n/g.TensorCoresPerChip))
	}
	chips := n / g.TensorCoresPerChip
	var best Topology
	found := false
	for _, t := range g.Topologies() {
		if t.Chips() != chips {
			continue
		}
		if !found || moreCubeLike(t, best) {
			best, found = t, true
		}
	}
	if !found {
		return nil, Topology{}, fmt.Errorf("accelerator type %q: %s has no slice of %d chips (the size counts %s); valid sizes near it: %s",
			s, g.Name, chips, unit, g.nearestSizes(chips))
	}
	return g, best, nil
}

// moreCubeLike orders shapes of equal chip count: smaller largest dimension first, then smaller
// middle dimension.
func moreCubeLike(a, b Topology) bool {
	sa, sb := a.sorted(), b.sorted()
	last := sa.n - 1
	if sa.dims[last] != sb.dims[last] {
		return sa.dims[last] < sb.dims[last]
	}
	return sa.dims[last-1] < sb.dims[last-1]
}

// nearestSizes lists accelerator types of valid slices near chips.
func (g *Generation) nearestSizes(chips int) string {
	near := g.nearestTopologies(chips, 6)
	parts := make([]string, len(near))
	for i, t := range near {
		parts[i] = fmt.Sprintf("%s-%d", g.AcceleratorTypePrefix, t.Chips()*g.TensorCoresPerChip)
	}
	return strings.Join(parts, ", ")
}

func generationForPrefix(prefix string) *Generation {
	for _, g := range generations {
		if prefix == g.AcceleratorTypePrefix || prefix == g.Name {
			return g
		}
		for _, a := range g.Aliases {
			if prefix == a {
				return g
			}
		}
	}
	return nil
}

func acceleratorPrefixes() []string {
	var out []string
	for _, g := range generations {
		out = append(out, g.AcceleratorTypePrefix)
		if g.Name != g.AcceleratorTypePrefix {
			out = append(out, g.Name)
		}
	}
	return out
}
