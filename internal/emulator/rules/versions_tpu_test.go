package rules

import (
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// The emulator's GKE version parsing and ordering, held against internal/tpu's.
func TestGKEVersionsMatchInternalTPU(t *testing.T) {
	inputs := append([]string{
		"1.34", "1.34.1", "1.31.2-gke.1115000", "1.31.3-gke.100", "1.32.0-gke.1", "1.31.10-gke.9", "1.31.9-gke.10",
		"v1.34", "1.34.0-gke.", "1.34-gke.1", "01.34", "1.+3", "1.34.0-GKE.1", "1.34.0-gke.01", "1.34.0-rc.1",
		"banana", "", "1", "1.2.3.4", "1..2", "-1.2",
	}, GKEVersions...)
	var valid []string
	for _, s := range inputs {
		ours, ok := parseGKEVersion(s)
		theirs, err := tpu.ParseVersion(s)
		if ok != (err == nil) {
			t.Errorf("%q: emulator parses %v, internal/tpu %v", s, ok, err)
			continue
		}
		if !ok {
			continue
		}
		if (ours.parts == 4) != theirs.IsExact() {
			t.Errorf("%q: exact for the emulator %v, for internal/tpu %v", s, ours.parts == 4, theirs.IsExact())
		}
		valid = append(valid, s)
	}
	valid = append(valid, "latest")
	for _, a := range valid {
		for _, b := range valid {
			want := tpu.MustParseVersion(a).Compare(tpu.MustParseVersion(b)) < 0
			if got := VersionLess(a, b); got != want {
				t.Errorf("versionLess(%q, %q) = %v, internal/tpu says %v", a, b, got, want)
			}
		}
	}
	if !VersionLess("1.31.2-gke.1115000", "1.31.3-gke.100") || !VersionLess("1.31.3-gke.100", "1.32.0-gke.1") ||
		!VersionLess("1.31.9-gke.10", "1.31.10-gke.9") {
		t.Error("GKE versions compare numerically, part by part")
	}
}
