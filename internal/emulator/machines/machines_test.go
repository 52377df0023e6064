package machines

import (
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vcpus  int
		memMiB int64
	}{
		{"ct6e-standard-4t", 180, 720 * 1024},
		{"ct5lp-hightpu-8t", 224, 384 * 1024},
		{"e2-standard-4", 4, 16 * 1024},
		{"n1-standard-96", 96, 368640}, // machineTypes.list: memoryMb 368640
		{"e2-medium", 2, 4 * 1024},
		{"custom-4-16384", 4, 16384},
	} {
		m, ok := Lookup(tc.name)
		if !ok || m.VCPUs != tc.vcpus || m.MemoryMiB != tc.memMiB {
			t.Errorf("Lookup(%q) = %+v, %v; want %d vCPUs and %d MiB", tc.name, m, ok, tc.vcpus, tc.memMiB)
		}
	}
	for _, name := range []string{"e2-standard-3", "ct6e-standard-2t", "c2-standard-8", "custom-0-1024"} {
		if m, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) = %+v, want no such machine type", name, m)
		}
	}
}

// GKE's reservations, worked by hand from the rule on "Plan GKE Standard node sizes", and one
// node GKE reported: an a3-highgpu-8g (208 vCPUs) with allocatable cpu 207410m.
func TestReservations(t *testing.T) {
	for _, tc := range []struct {
		m             MachineType
		milli, memMiB int64
	}{
		// 4 vCPUs: 60 + 10 + 10 = 80m; 16 GiB: 1024 + 819.2 + 819.2 = 2662 MiB, + 100.
		{MachineType{VCPUs: 4, MemoryMiB: 16 << 10}, 80, 2662 + 100},
		// 208 vCPUs: 80 + 204 × 2.5 = 590m.
		{MachineType{VCPUs: 208, MemoryMiB: 1 << 10}, 590, 256 + 100},
		// 720 GiB: 2662.4 + 112 GiB × 6% (6881.28) + 592 GiB × 2% (12124.16) = 21667 MiB, + 100.
		// 180 vCPUs: 80 + 176 × 2.5 = 520m.
		{MachineType{VCPUs: 180, MemoryMiB: 720 << 10}, 520, 21667 + 100},
		{MachineType{VCPUs: 2, MemoryMiB: 512, SharedCore: true}, 1060, 255 + 100},
	} {
		if got := tc.m.ReservedMilliCPU(); got != tc.milli {
			t.Errorf("%+v: reserved CPU %dm, want %dm", tc.m, got, tc.milli)
		}
		if got := tc.m.ReservedMiB(); got != tc.memMiB {
			t.Errorf("%+v: reserved memory %d MiB, want %d MiB", tc.m, got, tc.memMiB)
		}
	}
	if got := 208000 - (MachineType{VCPUs: 208}).ReservedMilliCPU(); got != 207410 {
		t.Errorf("a 208-vCPU node's allocatable CPU = %dm, want the 207410m GKE reported", got)
	}
}

// Every TPU machine type the emulator offers has a shape.
func TestEveryTPUMachineTypeHasAShape(t *testing.T) {
	for _, mt := range gketpu.MachineTypes() {
		if _, ok := Lookup(mt.Name); !ok {
			t.Errorf("TPU machine type %s has no row in machine_types.txt", mt.Name)
		}
	}
}
