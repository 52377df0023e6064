package ray

import (
	"slices"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"2.55.0": {2, 55, 0}, "2.55": {2, 55, 0}, "3.0.12": {3, 0, 12}} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "2.55.0rc1", "v2.55.0", "2.055.0", "2.55.0.1", "latest"} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) accepted", in)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		version          string
		from             string
		exact            bool
		chipsPerVM       bool
		singleHost       bool
		tpu7xPodType     string
		pythonHasTPUImg  string
		pythonNoTPUImage string
	}{
		{"2.55.0", "2.55.0", true, false, false, "v7x-16", "3.10", "3.12"},
		{"2.55.1", "2.55.0", true, false, false, "v7x-16", "3.10", "3.11"},
		{"2.56.0", "2.56.0", true, true, false, "v7x-16", "3.10", "3.12"},
		{"2.57.3", "2.56.0", true, true, false, "v7x-16", "3.10", "3.12"},
		{"2.58.0", "2.58.0", true, true, true, "v7x-16", "3.10", "3.13"},
		{"2.54.0", "2.54.0", true, false, false, "tpu7x-16", "", "3.10"},
		// Outside the table: the nearest row, not exact.
		{"2.40.0", "2.54.0", false, false, false, "tpu7x-16", "", "3.10"},
		{"2.59.0", "2.58.0", false, true, true, "v7x-16", "3.10", "3.9"},
		{"3.0.0", "2.58.0", false, true, true, "v7x-16", "3.10", "3.9"},
	}
	for _, tc := range tests {
		v, err := ParseVersion(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		row, exact := Lookup(v)
		if row.From.String() != tc.from || exact != tc.exact {
			t.Errorf("Lookup(%s) = row %s exact %v; want row %s exact %v", tc.version, row.From, exact, tc.from, tc.exact)
		}
		if row.ChipsPerVM != tc.chipsPerVM || slices.Contains(row.PlacementGroupArgs, "chips_per_vm") != tc.chipsPerVM {
			t.Errorf("%s: chips_per_vm %v args %v; want %v", tc.version, row.ChipsPerVM, row.PlacementGroupArgs, tc.chipsPerVM)
		}
		if row.SingleHostSlices != tc.singleHost {
			t.Errorf("%s: single-host slices %v, want %v", tc.version, row.SingleHostSlices, tc.singleHost)
		}
		if got := row.PodType("v7x", 16); got != tc.tpu7xPodType {
			t.Errorf("%s: tpu7x pod type %s, want %s", tc.version, got, tc.tpu7xPodType)
		}
		if got := row.PodType("v6e", 16); got != "v6e-16" {
			t.Errorf("%s: v6e pod type %s", tc.version, got)
		}
		if tc.pythonHasTPUImg != "" && !row.HasTPUImage(tc.pythonHasTPUImg) {
			t.Errorf("%s: no -tpu image for Python %s", tc.version, tc.pythonHasTPUImg)
		}
		if row.HasTPUImage(tc.pythonNoTPUImage) {
			t.Errorf("%s: a -tpu image for Python %s", tc.version, tc.pythonNoTPUImage)
		}
	}
}

// Every row must say where it comes from, and rows must be ordered, or Lookup picks wrongly.
func TestTableRowsSourcedAndOrdered(t *testing.T) {
	for i, r := range table {
		if r.Source == "" || len(r.PlacementGroupArgs) < 2 || r.PlacementGroupArgs[0] != "topology" {
			t.Errorf("row %s: source %q args %v", r.From, r.Source, r.PlacementGroupArgs)
		}
		if i > 0 && !table[i-1].From.Less(r.From) {
			t.Errorf("row %s does not follow %s", r.From, table[i-1].From)
		}
	}
	if got := Known(); len(got) != len(table) || got[0] != "2.54.0" {
		t.Errorf("Known() = %v", got)
	}
}
