package tpu

import "testing"

func TestRayNaming(t *testing.T) {
	tests := []struct {
		generation, topology string
		chipsPerHost         int
		podType, head        string
		supported            bool
	}{
		{"v6e", "4x4", 0, "v6e-16", "TPU-v6e-16-head", true},
		{"v6e", "2x4", 4, "v6e-8", "TPU-v6e-8-head", true},
		{"v5e", "16x16", 0, "v5litepod-256", "TPU-v5litepod-256-head", true},
		{"v4", "2x2x2", 0, "v4-16", "TPU-v4-16-head", true},
		{"v4", "4x4x16", 0, "v4-512", "TPU-v4-512-head", true},
		{"v4", "16x16x16", 0, "v4-8192", "TPU-v4-8192-head", false}, // GKE yes, Ray no
		{"v4", "8x4x4", 0, "v4-256", "TPU-v4-256-head", true},
		{"v5p", "4x4x24", 0, "v5p-768", "TPU-v5p-768-head", true},
		{"v5p", "4x4x28", 0, "v5p-896", "TPU-v5p-896-head", false},
		{"v5p", "2x2x1", 0, "v5p-8", "TPU-v5p-8-head", true},
		{"tpu7x", "2x2x1", 0, "v7x-8", "TPU-v7x-8-head", true},
		{"tpu7x", "1x1x1", 0, "v7x-2", "TPU-v7x-2-head", false},
		{"tpu7x", "4x4x12", 0, "v7x-384", "TPU-v7x-384-head", false}, // GKE yes, Ray no
		{"tpu7x", "8x16x16", 0, "v7x-4096", "TPU-v7x-4096-head", true},
	}
	for _, tc := range tests {
		s, err := NewSlice(tc.generation, tc.topology, tc.chipsPerHost)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.generation, tc.topology, err)
		}
		if s.RayPodType() != tc.podType || s.RayHeadResource() != tc.head || s.RayTopologySupported() != tc.supported {
			t.Errorf("%s %s: got (%s, %s, %v), want (%s, %s, %v)", tc.generation, tc.topology,
				s.RayPodType(), s.RayHeadResource(), s.RayTopologySupported(), tc.podType, tc.head, tc.supported)
		}
	}
}

func TestRayImage(t *testing.T) {
	if got := RayImage("2.55.0", "3.10"); got != "rayproject/ray:2.55.0-py310-tpu" {
		t.Errorf("RayImage = %s", got)
	}
	if got := RayImage("2.46.0", "3.11"); got != "rayproject/ray:2.46.0-py311-tpu" {
		t.Errorf("RayImage = %s", got)
	}
}
