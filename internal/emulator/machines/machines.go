// Package machines is the emulator's table of Compute Engine machine types: the vCPUs and memory
// of each machine type node pools may use, TPU VMs included, held in machine_types.txt with a
// source on every row, and GKE's rule for what of a node is allocatable to Pods. The emulator's
// nodes report these as capacity and allocatable, its node auto-provisioning counts them against
// the cluster's limits, and its Compute Engine API serves them as machineTypes.
package machines

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed machine_types.txt
var table string

// MachineType is one machine type as Compute Engine describes it.
type MachineType struct {
	Name  string
	VCPUs int
	// MemoryMiB is memoryMb: Compute Engine's "GB" of memory are GiB.
	MemoryMiB int64
	// SharedCore marks the shared-core E2 machine types (isSharedCpu).
	SharedCore bool
}

// MemoryGiB is the memory in GiB, the unit of Compute Engine's "GB".
func (m MachineType) MemoryGiB() float64 { return float64(m.MemoryMiB) / 1024 }

var catalog = mustLoad(table)

// All returns every machine type of the table, by name.
func All() []MachineType {
	out := make([]MachineType, 0, len(catalog))
	for _, m := range catalog {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// customRE is a custom machine type, custom-VCPUS-MEMORY_MB (Compute Engine "Create a VM with a
// custom machine type": "custom-CPUS-MEMORY").
var customRE = regexp.MustCompile(`^custom-([0-9]+)-([0-9]+)$`)

// Lookup finds a machine type by name: one of the table or a custom machine type.
func Lookup(name string) (MachineType, bool) {
	if m, ok := catalog[name]; ok {
		return m, true
	}
	if g := customRE.FindStringSubmatch(name); g != nil {
		vcpus, err1 := strconv.Atoi(g[1])
		mem, err2 := strconv.ParseInt(g[2], 10, 64)
		if err1 == nil && err2 == nil && vcpus > 0 && mem > 0 {
			return MachineType{Name: name, VCPUs: vcpus, MemoryMiB: mem}, true
		}
	}
	return MachineType{}, false
}

// GKE's reservations on a node, from "Plan GKE Standard node sizes"
// (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes, "Memory and CPU
// reservations"), quoted in its readers' copies: memory "255 MiB of memory for machines with less
// than 1 GiB of memory; 25% of the first 4 GiB of memory; 20% of the next 4 GiB of memory (up to 8
// GiB); 10% of the next 8 GiB of memory (up to 16 GiB); 6% of the next 112 GiB of memory (up to 128
// GiB); 2% of any memory above 128 GiB", plus 100 MiB for eviction on every node; CPU "6% of the
// first core; 1% of the next core (up to 2 cores); 0.5% of the next 2 cores (up to 4 cores); 0.25%
// of any cores above 4 cores", and for shared-core E2 machine types "GKE reserves a total of 1060
// millicores" (karpenter-provider-gcp@417f047 pkg/utils/utils.go, after the same page). A GKE
// a3-highgpu-8g node reports allocatable cpu 207410m, what the CPU rule gives for 208 vCPUs.
//
// INFERRED: the kernel's own reservation, which makes a node's capacity a little smaller than its
// machine type's memory, is left out: nodes report the machine type's memory as capacity.
const evictionMiB = 100

var memoryTiers = []struct {
	upToMiB  int64
	fraction float64
}{
	{4 << 10, 0.25}, {8 << 10, 0.20}, {16 << 10, 0.10}, {128 << 10, 0.06}, {1 << 62, 0.02},
}

var cpuTiers = []struct {
	upToMilli int64
	fraction  float64
}{
	{1000, 0.06}, {2000, 0.01}, {4000, 0.005}, {1 << 62, 0.0025},
}

// ReservedMiB is the memory GKE keeps from Pods on a node of m, eviction threshold included.
func (m MachineType) ReservedMiB() int64 {
	if m.MemoryMiB < 1<<10 {
		return 255 + evictionMiB
	}
	reserved, below := 0.0, int64(0)
	for _, t := range memoryTiers {
		if m.MemoryMiB <= below {
			break
		}
		reserved += float64(min(m.MemoryMiB, t.upToMiB)-below) * t.fraction
		below = t.upToMiB
	}
	return int64(reserved) + evictionMiB
}

// ReservedMilliCPU is the CPU GKE keeps from Pods on a node of m.
func (m MachineType) ReservedMilliCPU() int64 {
	if m.SharedCore {
		return 1060
	}
	total, reserved, below := int64(m.VCPUs)*1000, 0.0, int64(0)
	for _, t := range cpuTiers {
		if total <= below {
			break
		}
		reserved += float64(min(total, t.upToMilli)-below) * t.fraction
		below = t.upToMilli
	}
	return int64(reserved)
}

func mustLoad(text string) map[string]MachineType {
	c, err := load(text)
	if err != nil {
		panic("machines: machine_types.txt: " + err.Error())
	}
	return c
}

// familyRE is a family row's name: a prefix and its sizes, e2-standard-{2,4,8}.
var familyRE = regexp.MustCompile(`^([a-z0-9]+-[a-z]+)-\{([0-9,]+)\}$`)

func load(text string) (map[string]MachineType, error) {
	out := map[string]MachineType{}
	sources := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if name, _, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "@") {
			sources[name] = true
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, fmt.Errorf("line %d: want name, vcpus, memory_gib, shared and a source, got %q", i+1, line)
		}
		for _, word := range f[4:] {
			if ref := strings.TrimRight(word, ";,"); strings.HasPrefix(ref, "@") && !sources[ref] {
				return nil, fmt.Errorf("line %d: source %s is not defined above it", i+1, ref)
			}
		}
		shared := f[3] == "yes"
		if !shared && f[3] != "no" {
			return nil, fmt.Errorf("line %d: shared is %q, want yes or no", i+1, f[3])
		}
		add := func(name string, n float64) error {
			vcpus, err := scaled(f[1], n)
			if err != nil {
				return fmt.Errorf("line %d: vcpus: %w", i+1, err)
			}
			gib, err := scaled(f[2], n)
			if err != nil {
				return fmt.Errorf("line %d: memory_gib: %w", i+1, err)
			}
			if _, dup := out[name]; dup {
				return fmt.Errorf("line %d: %s is given twice", i+1, name)
			}
			out[name] = MachineType{Name: name, VCPUs: int(vcpus), MemoryMiB: int64(gib * 1024), SharedCore: shared}
			return nil
		}
		g := familyRE.FindStringSubmatch(f[0])
		if g == nil {
			if err := add(f[0], 0); err != nil {
				return nil, err
			}
			continue
		}
		for _, size := range strings.Split(g[2], ",") {
			n, _ := strconv.Atoi(size)
			if err := add(g[1]+"-"+size, float64(n)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// scaled reads a column: a number, or a multiple of a family's size n ("N", "4N", "3.75N").
func scaled(s string, n float64) (float64, error) {
	if k, ok := strings.CutSuffix(s, "N"); ok {
		if n == 0 {
			return 0, fmt.Errorf("%q: a multiple of N in a row that is not a family", s)
		}
		if k == "" {
			return n, nil
		}
		v, err := strconv.ParseFloat(k, 64)
		return v * n, err
	}
	return strconv.ParseFloat(s, 64)
}
