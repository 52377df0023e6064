package provider

import "testing"

func TestGKENamePattern(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "ray-tpu": true, "v6e-4x4": true, "a234567890123456789012345678901234567890"[:40]: true,
		"": false, "Ray": false, "1pool": false, "pool-": false, "pool_1": false,
		"a2345678901234567890123456789012345678901": false, // 41 characters
	} {
		if got := gkeNamePattern.MatchString(name); got != ok {
			t.Errorf("%q: match = %v, want %v", name, got, ok)
		}
	}
}
