package tpu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Topology is a slice shape: AxB for 2D generations, AxBxC for 3D ones.
type Topology struct {
	dims [3]int
	n    int
}

// ParseTopology parses "4x4" or "2x2x4". It is strict, because GKE compares the string as
// given: no spaces, lower-case x, positive integers without signs or leading zeros.
func ParseTopology(s string) (Topology, error) {
	if s == "" {
		return Topology{}, fmt.Errorf("topology is empty: write it as AxB (for example 4x4) or AxBxC (for example 2x2x4)")
	}
	if strings.ContainsAny(s, " \t\n") {
		return Topology{}, fmt.Errorf("topology %q contains white space: write it without spaces, for example %q",
			s, strings.Join(strings.Fields(s), ""))
	}
	if strings.Contains(s, "X") {
		return Topology{}, fmt.Errorf("topology %q uses an upper-case X: write it with a lower-case x, for example %q",
			s, strings.ReplaceAll(s, "X", "x"))
	}
	parts := strings.Split(s, "x")
	if len(parts) < 2 || len(parts) > 3 {
		return Topology{}, fmt.Errorf("topology %q must have two dimensions (AxB, for example 4x4) or three (AxBxC, for example 2x2x4)", s)
	}
	var t Topology
	t.n = len(parts)
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v <= 0 || strconv.Itoa(v) != p {
			return Topology{}, fmt.Errorf("topology %q has dimension %q, which is not a positive whole number", s, p)
		}
		t.dims[i] = v
	}
	return t, nil
}

// MustParseTopology is ParseTopology for literals known to be valid.
func MustParseTopology(s string) Topology {
	t, err := ParseTopology(s)
	if err != nil {
		panic(err)
	}
	return t
}

func newTopology(dims ...int) Topology {
	var t Topology
	t.n = len(dims)
	copy(t.dims[:], dims)
	return t
}

// String renders the topology as GKE writes it.
func (t Topology) String() string {
	parts := make([]string, t.n)
	for i := 0; i < t.n; i++ {
		parts[i] = strconv.Itoa(t.dims[i])
	}
	return strings.Join(parts, "x")
}

// Dims is the number of dimensions, 2 or 3.
func (t Topology) Dims() int { return t.n }

// Dim returns dimension i (0-based).
func (t Topology) Dim(i int) int { return t.dims[i] }

// Chips is the product of the dimensions.
func (t Topology) Chips() int {
	chips := 1
	for i := 0; i < t.n; i++ {
		chips *= t.dims[i]
	}
	return chips
}

// sorted returns the topology with its dimensions in non-decreasing order.
func (t Topology) sorted() Topology {
	s := t
	d := s.dims[:s.n]
	sort.Ints(d)
	return s
}

func (t Topology) isSorted() bool { return t == t.sorted() }

// allMultiplesOf4 reports whether every dimension is a multiple of 4 (a whole number of cubes).
func (t Topology) allMultiplesOf4() bool {
	for i := 0; i < t.n; i++ {
		if t.dims[i]%4 != 0 {
			return false
		}
	}
	return true
}

// nearCubic reports whether no dimension is more than twice another: the shapes worth suggesting
// (4x4x556 is valid for tpu7x but nobody wants it suggested).
func (t Topology) nearCubic() bool {
	s := t.sorted()
	return s.dims[s.n-1] <= 2*s.dims[0] || t.Chips() <= 32
}

// cubes is the number of 4x4x4 cubes in a 3D topology whose dimensions are multiples of 4.
func (t Topology) cubes() int { return t.Chips() / 64 }

// singleHostShapes are the one-VM shapes, keyed by chips per VM (Cloud TPU docs: v5e/v6e 1x1,
// 2x2, 2x4; v4/v5p/tpu7x 2x2x1; tpu7x 1x1x1). A generation offers a shape only if it has a
// machine type of that size.
var singleHostShapes = map[int]map[int]Topology{
	2: {1: newTopology(1, 1), 4: newTopology(2, 2), 8: newTopology(2, 4)},
	3: {1: newTopology(1, 1, 1), 4: newTopology(2, 2, 1)},
}

// singleHostTopology is the one-VM shape of a machine type, if the generation has one.
func (g *Generation) singleHostTopology(m MachineType) (Topology, bool) {
	t, ok := singleHostShapes[g.Dims][m.ChipsPerVM]
	return t, ok
}

// isSingleHostShape reports whether t runs on one VM of this generation.
func (g *Generation) isSingleHostShape(t Topology) (MachineType, bool) {
	for _, m := range g.MachineTypes {
		if s, ok := g.singleHostTopology(m); ok && s == t {
			return m, true
		}
	}
	return MachineType{}, false
}

// isMultiHostShape reports whether t is a multi-host slice of this generation, and for a 3D
// generation why not, so that errors can say it.
func (g *Generation) isMultiHostShape(t Topology) (bool, string) {
	if g.Dims == 2 {
		for _, s := range g.MultiHost2D {
			if s == t.String() {
				return true, ""
			}
		}
		return false, ""
	}
	for _, s := range smallShapes3D {
		if s == t.String() {
			return true, ""
		}
	}
	if !t.allMultiplesOf4() {
		return false, ""
	}
	if t.cubes() > g.MaxCubes {
		return false, fmt.Sprintf("%s has %d cubes of 4x4x4 chips; %s allows at most %d (%d chips)",
			t, t.cubes(), g.Name, g.MaxCubes, g.MaxCubes*64)
	}
	if g.SortedDims && !t.isSorted() {
		return false, fmt.Sprintf("%s slices list their dimensions in non-decreasing order: write %s", g.Name, t.sorted())
	}
	return true, ""
}

// ValidateTopology checks that t is a slice shape of this generation. The error says why and
// lists the valid shapes nearest in chip count.
func (g *Generation) ValidateTopology(t Topology) error {
	if t.n != g.Dims {
		example := "4x4"
		if g.Dims == 3 {
			example = "2x2x4"
		}
		return fmt.Errorf("%s topologies have %d dimensions (for example %s), got %q; valid %s topologies near %d chips: %s",
			g.Name, g.Dims, example, t, g.Name, t.Chips(), g.nearestList(t.Chips()))
	}
	if _, ok := g.isSingleHostShape(t); ok {
		return nil
	}
	ok, why := g.isMultiHostShape(t)
	if ok {
		return nil
	}
	if why == "" {
		why = fmt.Sprintf("%s is not a %s slice shape", t, g.Name)
	}
	return fmt.Errorf("%s; valid %s topologies near %d chips: %s", why, g.Name, t.Chips(), g.nearestList(t.Chips()))
}

// Topologies lists every valid shape of the generation in canonical form, by chip count. For
// v4, whose dimensions may come in any order, only the non-decreasing form of each cube shape is
// listed.
func (g *Generation) Topologies() []Topology {
	var out []Topology
	for _, m := range g.MachineTypes {
		if t, ok := g.singleHostTopology(m); ok {
			out = append(out, t)
		}
	}
	if g.Dims == 2 {
		for _, s := range g.MultiHost2D {
			t := MustParseTopology(s)
			if !containsTopology(out, t) {
				out = append(out, t)
			}
		}
	} else {
		for _, s := range smallShapes3D {
			out = append(out, MustParseTopology(s))
		}
		for a := 1; a*a*a <= g.MaxCubes; a++ {
			for b := a; a*b*b <= g.MaxCubes; b++ {
				for c := b; a*b*c <= g.MaxCubes; c++ {
					out = append(out, newTopology(4*a, 4*b, 4*c))
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Chips() < out[j].Chips() })
	return out
}

// nearestTopologies returns up to limit valid shapes closest to chips, one per chip count (the
// most cube-like), listed by chip count.
func (g *Generation) nearestTopologies(chips, limit int) []Topology {
	var shapes []Topology
	for _, t := range g.Topologies() {
		if !t.nearCubic() {
			continue
		}
		last := len(shapes) - 1
		switch {
		case last >= 0 && shapes[last].Chips() == t.Chips():
			if moreCubeLike(t, shapes[last]) {
				shapes[last] = t
			}
		default:
			shapes = append(shapes, t)
		}
	}
	distance := func(t Topology) int {
		d := t.Chips() - chips
		if d < 0 {
			return -d
		}
		return d
	}
	sort.SliceStable(shapes, func(i, j int) bool { return distance(shapes[i]) < distance(shapes[j]) })
	if len(shapes) > limit {
		shapes = shapes[:limit]
	}
	sort.SliceStable(shapes, func(i, j int) bool { return shapes[i].Chips() < shapes[j].Chips() })
	return shapes
}

func (g *Generation) nearestList(chips int) string {
	near := g.nearestTopologies(chips, 6)
	parts := make([]string, len(near))
	for i, t := range near {
		parts[i] = fmt.Sprintf("%s (%s)", t, chipCount(t.Chips()))
	}
	return strings.Join(parts, ", ")
}

func containsTopology(list []Topology, t Topology) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}

func chipCount(n int) string {
	if n == 1 {
		return "1 chip"
	}
	return fmt.Sprintf("%d chips", n)
}
