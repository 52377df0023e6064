// Package gketpu is the emulator's own knowledge of GKE's TPU rules: machine types, slice shapes,
// generation minimum versions, multi-host placement and the Ray Operator add-on's minimum
// version. It reads them from machine_types.txt and rules.txt, where every row names its source
// (GKE's documentation, GKE's cluster autoscaler, xpk).
//
// It shares nothing with internal/tpu, the provider's catalog: the emulator stands in for GKE, so
// a test holds the two against each other and a wrong row has to be written twice, from two
// sources, to pass unseen.
package gketpu

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed machine_types.txt
var machineTypesText string

//go:embed rules.txt
var rulesText string

// MachineType is one row of machine_types.txt with the multi-host rules of rules.txt.
type MachineType struct {
	Name       string
	Generation *Generation
	ChipsPerVM int
	// Dims is 2 (AxB) or 3 (AxBxC).
	Dims int
	// SingleHost is the topology of one VM, "" if the machine type has none.
	SingleHost string
	Source     string

	multiHost *multiHostRules
}

// multiHostRules are the shapes a machine type forms multi-host slices of.
type multiHostRules struct {
	shapes   []string // as listed, for messages
	listed   map[string]bool
	cubes    int // 0: no whole-cube shapes
	anyOrder bool
	maxDim   int // 0: no limit
}

// Generation gathers what GKE ties to a TPU generation rather than to a machine type.
type Generation struct {
	Name        string
	Aliases     []string
	Accelerator string
	// MachineTypes are the generation's machine types, by chips per VM.
	MachineTypes []*MachineType
	// MinGKEVersion is "" where no source read states a minimum.
	MinGKEVersion string
	// MultiHostWorkloadPolicy: a multi-host slice is placed by a workload policy
	// (placementPolicy.policyName), and GKE refuses COMPACT.
	MultiHostWorkloadPolicy bool
}

// Slice is what GKE builds for a machine type and a placementPolicy.tpuTopology.
type Slice struct {
	Topology  string
	Chips     int
	Hosts     int
	MultiHost bool
}

// ErrTopologyOnSingleHost is GKE's 400 for a tpu_topology on a single-host pool, in full as
// AI-Hypercomputer/xpk#825 (2025-11) quotes it, GKE's spelling included; the project's field notes
// recorded its start (GKE, ct6e-standard-1t with --tpu-topology=1x1, 2026-08-25). The emulator
// answers it for every single-host shape, although Ray's GKE guide creates ct4p-hightpu-4t pools
// with --tpu-topology 2x2x1: whether GKE still takes that for v4 is unverified.
var ErrTopologyOnSingleHost = errors.New(topologyOnSingleHostText) //nolint:staticcheck // GKE's words end with a period

const topologyOnSingleHostText = "TPU topology can't be specified with single-host TPU slice pool; please remove the tpu_topology from the node pool creation request if the node pool is intented to run with single-host TPU slice nodes." //nolint:misspell // GKE's words, verbatim

type catalog struct {
	machineTypes   []*MachineType
	generations    []*Generation
	rayOperatorMin string
}

var cat = mustLoad(machineTypesText, rulesText)

// MachineTypes returns every machine type, in the order of machine_types.txt.
func MachineTypes() []*MachineType { return append([]*MachineType(nil), cat.machineTypes...) }

// Generations returns every generation, in the order of machine_types.txt.
func Generations() []*Generation { return append([]*Generation(nil), cat.generations...) }

// RayOperatorMinVersion is the lowest cluster version GKE enables the Ray Operator add-on on.
func RayOperatorMinVersion() string { return cat.rayOperatorMin }

// LookupMachineType finds a TPU machine type; ok is false for any other machine type.
func LookupMachineType(name string) (*MachineType, bool) {
	for _, m := range cat.machineTypes {
		if m.Name == name {
			return m, true
		}
	}
	return nil, false
}

// LookupGeneration finds a generation by name, alias or accelerator label, case-insensitively.
func LookupGeneration(name string) (*Generation, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, g := range cat.generations {
		if key == g.Name || key == g.Accelerator {
			return g, nil
		}
		for _, a := range g.Aliases {
			if key == a {
				return g, nil
			}
		}
		names = append(names, g.Name)
	}
	return nil, fmt.Errorf("unknown TPU generation %q: the emulator knows %s", name, strings.Join(names, ", "))
}

// Slice returns the slice GKE builds for this machine type and topology ("" meaning the machine
// type's single-host shape), or why GKE refuses the pair.
func (m *MachineType) Slice(topology string) (Slice, error) {
	if topology == "" {
		if m.SingleHost == "" {
			return Slice{}, refuse("TPU topology must be specified for machine type %s.", m.Name)
		}
		return Slice{Topology: m.SingleHost, Chips: m.ChipsPerVM, Hosts: 1}, nil
	}
	dims, ok := parseTopology(topology)
	if !ok {
		return Slice{}, refuse("Invalid TPU topology %q: write it as AxB or AxBxC in positive whole numbers.", topology)
	}
	if len(dims) != m.Dims {
		return Slice{}, refuse("TPU topology %q has %d dimensions, but machine type %s takes %d.", topology, len(dims), m.Name, m.Dims)
	}
	chips := product(dims)
	// GKE's cluster autoscaler calls a pool multi-host when its topology holds more chips than one
	// VM (IsMultiHostTpuPodslice) and gives it chips / chips per VM nodes (NumNodesFromTopology,
	// whose error text follows): GoogleCloudPlatform/cluster-autoscaler@9676c4b6bd0d:
	// pkg/cloudprovider/gke/machinetypes/machine_config_provider.go.
	if chips == m.ChipsPerVM {
		return Slice{}, ErrTopologyOnSingleHost
	}
	if chips%m.ChipsPerVM != 0 {
		return Slice{}, refuse("TPU topology %q does not fit machine type %s: number of chips specified by topology %q is not divisible by %d.",
			topology, m.Name, topology, m.ChipsPerVM)
	}
	if why := m.multiHost.refuse(dims, topology); why != "" {
		return Slice{}, refuse("TPU topology %q is not supported for machine type %s: %s.", topology, m.Name, why)
	}
	return Slice{Topology: topology, Chips: chips, Hosts: chips / m.ChipsPerVM, MultiHost: true}, nil
}

// refuse says why dims is not a multi-host shape, or "" if it is one.
func (r *multiHostRules) refuse(dims []int, topology string) string {
	if r == nil {
		return "this machine type forms no multi-host slices"
	}
	if r.listed[topology] {
		return ""
	}
	valid := "valid multi-host topologies are " + r.describe()
	if r.cubes == 0 || len(dims) != 3 {
		return valid
	}
	for _, d := range dims {
		if d%4 != 0 {
			return valid
		}
	}
	for _, d := range dims {
		if r.maxDim > 0 && d > r.maxDim {
			return fmt.Sprintf("a dimension is at most %d", r.maxDim)
		}
	}
	if cubes := product(dims) / 64; cubes > r.cubes {
		return fmt.Sprintf("it holds %d cubes of 4x4x4 chips, at most %d are allowed", cubes, r.cubes)
	}
	if !r.anyOrder && !sort.IntsAreSorted(dims) {
		return "the dimensions must be in non-decreasing order"
	}
	return ""
}

func (r *multiHostRules) describe() string {
	s := strings.Join(r.shapes, ", ")
	if r.cubes > 0 {
		order := " in non-decreasing order"
		if r.anyOrder {
			order = " in any order"
		}
		s += fmt.Sprintf(", and AxBxC in multiples of 4%s holding at most %d cubes of 4x4x4 chips", order, r.cubes)
		if r.maxDim > 0 {
			s += fmt.Sprintf(" with no dimension above %d", r.maxDim)
		}
	}
	return s
}

// topologyRE is a topology as GKE writes it: positive whole numbers without signs or leading
// zeros (at most six digits, so that products cannot overflow).
var topologyRE = regexp.MustCompile(`^[1-9][0-9]{0,5}(x[1-9][0-9]{0,5}){1,2}$`)

func parseTopology(s string) ([]int, bool) {
	if !topologyRE.MatchString(s) {
		return nil, false
	}
	var dims []int
	for _, p := range strings.Split(s, "x") {
		n, _ := strconv.Atoi(p)
		dims = append(dims, n)
	}
	return dims, true
}

func product(dims []int) int {
	p := 1
	for _, d := range dims {
		p *= d
	}
	return p
}

// exactVersionRE is a GKE version as GKE reports one.
var exactVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+-gke\.[0-9]+$`)

func mustLoad(machineTypes, rules string) *catalog {
	c, err := load(machineTypes, rules)
	if err != nil {
		panic("gketpu: " + err.Error())
	}
	return c
}

// load reads the two tables. Rows are whitespace-separated; the last column, the source, is the
// rest of the line; "#" starts a comment line; "@NAME text" defines a source cited as @NAME.
func load(machineTypes, rules string) (*catalog, error) {
	c := &catalog{}
	mrows, err := readTable("machine_types.txt", machineTypes, 7)
	if err != nil {
		return nil, err
	}
	for _, r := range mrows {
		m, err := machineTypeRow(r)
		if err != nil {
			return nil, err
		}
		if _, dup := c.machineType(m.Name); dup {
			return nil, r.errorf("machine type %s is listed twice", m.Name)
		}
		name, accelerator := r.cols[1], r.cols[2]
		g := c.generation(name)
		if g == nil {
			g = &Generation{Name: name, Accelerator: accelerator}
			c.generations = append(c.generations, g)
		}
		if g.Accelerator != accelerator {
			return nil, r.errorf("generation %s has two accelerator labels, %s and %s", g.Name, g.Accelerator, accelerator)
		}
		m.Generation = g
		if len(g.MachineTypes) > 0 && g.MachineTypes[0].Dims != m.Dims {
			return nil, r.errorf("generation %s mixes 2D and 3D machine types", g.Name)
		}
		g.MachineTypes = append(g.MachineTypes, m)
		c.machineTypes = append(c.machineTypes, m)
	}
	for _, g := range c.generations {
		sort.SliceStable(g.MachineTypes, func(i, j int) bool { return g.MachineTypes[i].ChipsPerVM < g.MachineTypes[j].ChipsPerVM })
	}
	rrows, err := readTable("rules.txt", rules, 4)
	if err != nil {
		return nil, err
	}
	for _, r := range rrows {
		if err := c.rule(r); err != nil {
			return nil, err
		}
	}
	if c.rayOperatorMin == "" {
		return nil, fmt.Errorf("rules.txt: no ray_operator_min_version")
	}
	return c, nil
}

func (c *catalog) machineType(name string) (*MachineType, bool) {
	for _, m := range c.machineTypes {
		if m.Name == name {
			return m, true
		}
	}
	return nil, false
}

func (c *catalog) generation(name string) *Generation {
	for _, g := range c.generations {
		if g.Name == name {
			return g
		}
	}
	return nil
}

func machineTypeRow(r row) (*MachineType, error) {
	chips, err := strconv.Atoi(r.cols[3])
	if err != nil || chips <= 0 {
		return nil, r.errorf("chips_per_vm %q is not a positive number", r.cols[3])
	}
	dims, err := strconv.Atoi(r.cols[4])
	if err != nil || (dims != 2 && dims != 3) {
		return nil, r.errorf("dims %q is neither 2 nor 3", r.cols[4])
	}
	m := &MachineType{Name: r.cols[0], ChipsPerVM: chips, Dims: dims, Source: r.source}
	if r.cols[5] != "-" {
		d, ok := parseTopology(r.cols[5])
		if !ok || len(d) != dims || product(d) != chips {
			return nil, r.errorf("single_host %q is not a %dD topology of %d chips", r.cols[5], dims, chips)
		}
		m.SingleHost = r.cols[5]
	}
	return m, nil
}

func (c *catalog) rule(r row) error {
	subject, name, value := r.cols[0], r.cols[1], r.cols[2]
	if subject == "*" {
		switch name {
		case "ray_operator_min_version":
			if !exactVersionRE.MatchString(value) {
				return r.errorf("%q is not a GKE version like 1.30.0-gke.1747000", value)
			}
			c.rayOperatorMin = value
			return nil
		}
		return r.errorf("unknown rule %q for *", name)
	}
	if g := c.generation(subject); g != nil {
		switch name {
		case "alias":
			g.Aliases = append(g.Aliases, strings.ToLower(value))
		case "min_gke_version":
			if !exactVersionRE.MatchString(value) || g.MinGKEVersion != "" {
				return r.errorf("min_gke_version %q: not a GKE version like 1.34.0-gke.2201000, or given twice", value)
			}
			g.MinGKEVersion = value
		case "multihost_placement":
			if value != "workload_policy" {
				return r.errorf("multihost_placement %q: the only value is workload_policy", value)
			}
			g.MultiHostWorkloadPolicy = true
		default:
			return r.errorf("unknown rule %q for a generation", name)
		}
		return nil
	}
	m, ok := c.machineType(subject)
	if !ok {
		return r.errorf("%q is neither a machine type nor a generation", subject)
	}
	if m.multiHost == nil {
		m.multiHost = &multiHostRules{listed: map[string]bool{}}
	}
	mh := m.multiHost
	switch name {
	case "multihost_shapes":
		for _, s := range strings.Split(value, ",") {
			d, ok := parseTopology(s)
			if !ok || len(d) != m.Dims || product(d) <= m.ChipsPerVM || product(d)%m.ChipsPerVM != 0 || mh.listed[s] {
				return r.errorf("%q is not a new multi-host %dD topology of %s", s, m.Dims, m.Name)
			}
			mh.listed[s] = true
			mh.shapes = append(mh.shapes, s)
		}
	case "multihost_cubes", "max_dim":
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 || m.Dims != 3 || m.ChipsPerVM != 4 {
			return r.errorf("%s %q: a positive number, for 3D machine types of 4 chips", name, value)
		}
		if name == "max_dim" {
			mh.maxDim = n
		} else {
			mh.cubes = n
		}
	case "dim_order":
		if value != "any" && value != "nondecreasing" {
			return r.errorf("dim_order %q is neither any nor nondecreasing", value)
		}
		mh.anyOrder = value == "any"
	default:
		return r.errorf("unknown rule %q for a machine type", name)
	}
	return nil
}

type row struct {
	file   string
	line   int
	cols   []string // the columns before the source
	source string
}

func (r row) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", r.file, r.line, fmt.Sprintf(format, args...))
}

var citeRE = regexp.MustCompile(`@[A-Z][A-Z0-9]*\b`)

// readTable splits text into rows of n columns, the last being the source with its @NAME
// citations expanded.
func readTable(file, text string, n int) ([]row, error) {
	defs := map[string]string{}
	var rows []row
	for i, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if strings.HasPrefix(fields[0], "@") {
			if len(fields) < 2 || !citeRE.MatchString(fields[0]) {
				return nil, fmt.Errorf("%s:%d: a source definition is @NAME text", file, i+1)
			}
			defs[fields[0]] = strings.Join(fields[1:], " ")
			continue
		}
		if len(fields) < n {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d (the last being the source)", file, i+1, len(fields), n)
		}
		r := row{file: file, line: i + 1, cols: fields[:n-1], source: strings.Join(fields[n-1:], " ")}
		var missing string
		r.source = citeRE.ReplaceAllStringFunc(r.source, func(ref string) string {
			d, ok := defs[ref]
			if !ok {
				missing = ref
			}
			return d
		})
		if missing != "" {
			return nil, fmt.Errorf("%s:%d: source %s is not defined above", file, i+1, missing)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// refusal is why GKE refuses a node pool, worded as GKE words its errors: whole sentences, which
// Go's convention for error strings does not expect.
type refusal string

func (r refusal) Error() string { return string(r) }

func refuse(format string, args ...any) error { return refusal(fmt.Sprintf(format, args...)) }
