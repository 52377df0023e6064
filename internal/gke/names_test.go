package gke

import "testing"

func TestNamePattern(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "slice-0": true, "v6e-4x4": true,
		"0a": false, "-a": false, "a-": false, "A": false, "a_b": false, "": false,
		"a234567890123456789012345678901234567890": true, "a2345678901234567890123456789012345678901": false,
	} {
		if got := NamePattern.MatchString(name); got != want {
			t.Errorf("NamePattern(%q) = %t, want %t", name, got, want)
		}
	}
}

func TestZone(t *testing.T) {
	for location, want := range map[string]bool{"us-central2-b": true, "europe-west4-a": true, "us-central2": false, "asia-southeast1": false} {
		zone, ok := ClusterID{Project: "p", Location: location, Name: "c"}.Zone()
		if ok != want || (ok && zone != location) {
			t.Errorf("Zone of a cluster in %s = %q, %t; want %t", location, zone, ok, want)
		}
	}
}

func TestRegion(t *testing.T) {
	for location, want := range map[string]string{"us-central2-b": "us-central2", "europe-west4-a": "europe-west4", "us-central2": "us-central2"} {
		if got := Region(location); got != want {
			t.Errorf("Region(%q) = %q, want %q", location, got, want)
		}
	}
}
