package tpu

import "testing"

func TestVersionOrdering(t *testing.T) {
	// Each version is strictly below the next.
	ordered := []string{
		"1.26.1-gke.1500",
		"1.30.0-gke.1747000",
		"1.31.1-gke.2000000",
		"1.31.2-gke.99",
		"1.31.2-gke.1000",
		"1.31.2-gke.1115000",
		"1.31.3-gke.100",
		"1.31.10-gke.1",
		"1.32.0-gke.1",
		"1.100.0-gke.1",
		"2.0.0-gke.0",
	}
	for i := 0; i+1 < len(ordered); i++ {
		a, b := MustParseVersion(ordered[i]), MustParseVersion(ordered[i+1])
		if !a.Less(b) || b.Less(a) || a.Compare(b) != -1 || b.Compare(a) != 1 {
			t.Errorf("%s should be below %s", a, b)
		}
	}
	v := MustParseVersion("1.31.2-gke.1115000")
	if v.Compare(MustParseVersion("1.31.2-gke.1115000")) != 0 {
		t.Error("a version is not equal to itself")
	}
	if !MustParseVersion("1.40.0-gke.1").Less(MustParseVersion("latest")) {
		t.Error("latest should be above every version")
	}
}

func TestParseVersion(t *testing.T) {
	valid := map[string]string{
		"1.31.2-gke.1115000": "1.31.2-gke.1115000",
		"1.31.2":             "1.31.2",
		"1.31":               "1.31",
		"latest":             "latest",
	}
	for in, want := range valid {
		v, err := ParseVersion(in)
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", in, err)
			continue
		}
		if v.String() != want {
			t.Errorf("ParseVersion(%q).String() = %q", in, v.String())
		}
	}
	for _, in := range []string{"", "1", "v1.31.2", "1.31.2-gke", "1.31-gke.5", "1.31.2-eks.5", "1.31.x", "1.31.02", "1.31.2-gke.-1", " 1.31"} {
		if v, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) = %s, want an error", in, v)
		}
	}
}

func TestVersionCanMeet(t *testing.T) {
	floor := MustParseVersion("1.31.2-gke.1115000")
	tests := map[string]bool{
		"1.31.1-gke.9999999": false, // the exact case from the v6e docs: 1.31.1 is too old
		"1.31.2-gke.1114999": false,
		"1.31.2-gke.1115000": true,
		"1.31.3-gke.1":       true,
		"1.31.2":             true, // newest 1.31.2 build can be new enough
		"1.31.1":             false,
		"1.31":               true,
		"1.30":               false,
		"1.32":               true,
		"latest":             true,
	}
	for in, want := range tests {
		if got := MustParseVersion(in).CanMeet(floor); got != want {
			t.Errorf("%s.CanMeet(%s) = %v, want %v", in, floor, got, want)
		}
	}
}

func TestVersionMatches(t *testing.T) {
	x := MustParseVersion("1.31.5-gke.200")
	for in, want := range map[string]bool{
		"1.31": true, "1.31.5": true, "1.31.5-gke.200": true, "latest": true,
		"1.32": false, "1.31.4": false, "1.31.5-gke.201": false,
	} {
		if got := MustParseVersion(in).Matches(x); got != want {
			t.Errorf("%s.Matches(%s) = %v, want %v", in, x, got, want)
		}
	}
}
