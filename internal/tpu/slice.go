package tpu

import (
	"fmt"
	"strconv"
	"strings"
)

// Slice is everything derived from a generation and a topology: what GKE needs to create the
// node pool and what Ray needs to schedule onto it.
type Slice struct {
	Generation  *Generation
	Topology    Topology
	MachineType MachineType
	// Hosts is the number of VMs (GKE nodes): max(1, chips / chips per VM).
	Hosts     int
	MultiHost bool
	Placement Placement
}

// NewSlice validates and derives a slice. chipsPerHost 0 picks the default: one VM when the shape
// fits on one, otherwise 4-chip VMs.
func NewSlice(generation, topology string, chipsPerHost int) (*Slice, error) {
	g, err := LookupGeneration(generation)
	if err != nil {
		return nil, err
	}
	t, err := ParseTopology(topology)
	if err != nil {
		return nil, err
	}
	return g.Slice(t, chipsPerHost)
}

// Slice derives the slice of shape t. See NewSlice for chipsPerHost.
func (g *Generation) Slice(t Topology, chipsPerHost int) (*Slice, error) {
	if err := g.ValidateTopology(t); err != nil {
		return nil, err
	}
	var options []*Slice
	if m, ok := g.isSingleHostShape(t); ok {
		options = append(options, &Slice{Generation: g, Topology: t, MachineType: m, Hosts: 1, Placement: PlacementNone})
	}
	if ok, _ := g.isMultiHostShape(t); ok {
		m, _ := g.machineTypeWithChips(MultiHostChipsPerVM)
		options = append(options, &Slice{
			Generation:  g,
			Topology:    t,
			MachineType: m,
			Hosts:       t.Chips() / MultiHostChipsPerVM,
			MultiHost:   true,
			Placement:   g.MultiHostPlacement,
		})
	}
	if chipsPerHost == 0 {
		return options[0], nil
	}
	fits := make([]string, len(options))
	for i, s := range options {
		if s.MachineType.ChipsPerVM == chipsPerHost {
			return s, nil
		}
		fits[i] = strconv.Itoa(s.MachineType.ChipsPerVM)
	}
	return nil, fmt.Errorf("chips_per_host = %d does not fit %s %s: valid values are %s (or leave it unset)",
		chipsPerHost, g.Name, t, strings.Join(fits, ", "))
}

// SliceForNodePool describes the slice a node pool holds, from its machine type and
// placementPolicy.tpuTopology: whatever GKE holds, which is more than raytpu creates. An empty
// topology means the single-host shape of the machine type; so does that shape written out, as
// pools made by other tools carry it (Ray's GKE guide creates ct4p-hightpu-4t pools with
// --tpu-topology 2x2x1).
func SliceForNodePool(machineType, tpuTopology string) (*Slice, error) {
	g, m, ok := LookupMachineType(machineType)
	if !ok {
		return nil, fmt.Errorf("machine type %q is not a TPU machine type", machineType)
	}
	if tpuTopology == "" {
		t, ok := g.singleHostTopology(m)
		if !ok {
			return nil, fmt.Errorf("TPU topology must be specified for machine type %s", machineType)
		}
		return g.Slice(t, m.ChipsPerVM)
	}
	t, err := ParseTopology(tpuTopology)
	if err != nil {
		return nil, err
	}
	s, err := g.Slice(t, m.ChipsPerVM)
	if err != nil {
		return nil, fmt.Errorf("topology %s does not fit machine type %s: %w", tpuTopology, machineType, err)
	}
	return s, nil
}

// TotalChips is the number of chips in the slice.
func (s *Slice) TotalChips() int { return s.Topology.Chips() }

// ChipsPerHost is the number of chips on each VM, the value of google.com/tpu per node.
func (s *Slice) ChipsPerHost() int { return s.MachineType.ChipsPerVM }

// TPUTopology is the value for PlacementPolicy.TpuTopology: set for multi-host slices only,
// because GKE refuses a topology on a single-host pool.
func (s *Slice) TPUTopology() string {
	if !s.MultiHost {
		return ""
	}
	return s.Topology.String()
}

// NodeSelector is what a pod needs to land on this kind of slice (GKE labels its TPU nodes with
// both keys).
func (s *Slice) NodeSelector() map[string]string {
	return map[string]string{
		LabelAccelerator: s.Generation.GKEAccelerator,
		LabelTopology:    s.Topology.String(),
	}
}
