package tpu

import "fmt"

// Ray's view of a slice (ray-project/ray python/ray/_private/accelerators/tpu.py and
// python/ray/util/tpu.py; domain reference section 6).

// RayPodType is Ray's ray.io/tpu-pod-type: the Ray generation name and the accelerator-type
// size, e.g. v6e-16, v4-16, v5litepod-16. (How a Ray release names tpu7x is internal/ray's.)
func (s *Slice) RayPodType() string {
	return fmt.Sprintf("%s-%d", s.Generation.RayAcceleratorVersion, s.RayPodSize())
}

// RayPodSize is the size in Ray's pod type: TensorCores for 2-core chips, chips otherwise.
func (s *Slice) RayPodSize() int {
	return s.TotalChips() * s.Generation.TensorCoresPerChip
}

// RayHeadResource is the resource Ray puts on worker 0 of a slice only, e.g. TPU-v6e-16-head.
func (s *Slice) RayHeadResource() string {
	return fmt.Sprintf("TPU-%s-head", s.RayPodType())
}

// RayTopologySupported reports whether ray.util.tpu.slice_placement_group accepts the shape
// (Ray's VALID_TPU_TOPOLOGY is narrower than what GKE provisions).
func (s *Slice) RayTopologySupported() bool {
	return s.Generation.rayTopologies(s.Topology)
}

// RayImage is the official Ray TPU image, e.g. rayproject/ray:2.55.0-py310-tpu for Ray 2.55.0
// on Python 3.10.
func RayImage(rayVersion, pythonVersion string) string {
	digits := make([]byte, 0, len(pythonVersion))
	for i := 0; i < len(pythonVersion); i++ {
		if c := pythonVersion[i]; c >= '0' && c <= '9' {
			digits = append(digits, c)
		}
	}
	return fmt.Sprintf("rayproject/ray:%s-py%s-tpu", rayVersion, digits)
}

// rayTopologies2D is Ray's list for v5litepod and v6e.
var rayTopologies2D = rayTopologyList("1x1", "2x2", "2x4", "2x8", "4x4", "4x8", "8x8", "8x16", "16x16")

// rayTopologyList accepts exactly the listed shapes.
func rayTopologyList(shapes ...string) func(Topology) bool {
	set := make(map[Topology]bool, len(shapes))
	for _, s := range shapes {
		set[MustParseTopology(s)] = true
	}
	return func(t Topology) bool { return set[t] }
}

// rayTopologies3D accepts the small shapes 2x2x1, 2x2x2, 2x2x4, 2x4x4 and every XxYxZ with X in
// xs, Y in ys, Z in zs (Ray's table for v4 and v5p).
func rayTopologies3D(xs, ys, zs []int) func(Topology) bool {
	small := rayTopologyList("2x2x1", "2x2x2", "2x2x4", "2x4x4")
	in := func(v int, list []int) bool {
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	}
	return func(t Topology) bool {
		if small(t) {
			return true
		}
		return t.n == 3 && in(t.dims[0], xs) && in(t.dims[1], ys) && in(t.dims[2], zs)
	}
}
