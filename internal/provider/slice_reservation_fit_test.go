package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// The hosts in use count against a slice, those it holds itself while it is replaced do not, and a
// reservation of another project not shared with the cluster's only warns.
func TestReservationFit(t *testing.T) {
	s, err := tpu.NewSlice("v6e", "4x4", 4)
	if err != nil {
		t.Fatal(err)
	}
	fit := reservationFit{At: path.Root("reservation"), Project: "p", Zone: "z", Slice: s}
	v6e := func(count, inUse int64) *gke.Reservation {
		return &gke.Reservation{Project: "p", Zone: "z", Name: "r", MachineType: "ct6e-standard-4t", Count: count, InUse: inUse}
	}
	for _, c := range []struct {
		name   string
		fit    reservationFit
		r      *gke.Reservation
		errors string
		warns  string
	}{
		{name: "fits", fit: fit, r: v6e(8, 4)},
		{name: "in use", fit: fit, r: v6e(8, 5), errors: "has 3 free hosts (8 reserved, 5 in use); a v6e 4x4 slice needs 4. Free 1 more hosts of it, grow it to at least 9"},
		{name: "replaced", fit: reservationFit{At: fit.At, Project: "p", Zone: "z", Slice: s, Credit: 4}, r: v6e(4, 4)},
		{name: "machine type unknown", fit: fit, r: &gke.Reservation{Project: "p", Zone: "z", Name: "r", Count: 4}},
		{name: "not shared", fit: fit, r: &gke.Reservation{Project: "q", Zone: "z", Name: "r", MachineType: "ct6e-standard-4t", Count: 4,
			ShareType: "SPECIFIC_PROJECTS", SharedWith: []string{"o"}}, warns: "projects/q/reservations/r is shared as \"SPECIFIC_PROJECTS\" with [o]"},
		{name: "local", fit: fit, r: &gke.Reservation{Project: "q", Zone: "z", Name: "r", MachineType: "ct6e-standard-4t", Count: 4,
			ShareType: "LOCAL"}, warns: "which does not list project p"},
		{name: "shared", fit: fit, r: &gke.Reservation{Project: "q", Zone: "z", Name: "r", MachineType: "ct6e-standard-4t", Count: 4,
			ShareType: "SPECIFIC_PROJECTS", SharedWith: []string{"p"}}},
	} {
		diags := c.fit.check(c.r)
		var errs, warns []string
		for _, d := range diags.Errors() {
			errs = append(errs, d.Detail())
		}
		for _, d := range diags.Warnings() {
			warns = append(warns, d.Detail())
		}
		if got := strings.Join(errs, "\n"); (c.errors == "") != (got == "") || !strings.Contains(got, c.errors) {
			t.Errorf("%s: errors %q, want %q", c.name, got, c.errors)
		}
		if got := strings.Join(warns, "\n"); (c.warns == "") != (got == "") || !strings.Contains(got, c.warns) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.warns)
		}
	}
}

// Each slice planned on a reservation sees those planned before it, once each however often it
// plans; one whose creation started is no longer counted.
func TestReservationConsumers(t *testing.T) {
	var c reservationConsumers
	if got := c.plan("r", "a", 2); len(got) != 1 {
		t.Errorf("first consumer sees %v", got)
	}
	c.plan("r", "a", 2)
	c.plan("other", "x", 8)
	got := c.plan("r", "b", 3)
	if len(got) != 2 || got["a"] != 2 || got["b"] != 3 {
		t.Errorf("second consumer sees %v, want a (2) and b (3)", got)
	}
	c.creating("a")
	if got := c.plan("r", "b", 3); len(got) != 1 {
		t.Errorf("after a's creation started, b sees %v", got)
	}
	fit := reservationFit{At: path.Root("reservation"), Project: "p"}
	r := &gke.Reservation{Project: "p", Zone: "z", Name: "r", Count: 4}
	if d := fit.checkAll(r, map[string]int64{"a": 2, "b": 2}); d.HasError() {
		t.Errorf("4 hosts for 4 free refused: %v", d)
	}
	d := fit.checkAll(r, map[string]int64{"a": 2, "b": 3})
	if !d.HasError() || !strings.Contains(d.Errors()[0].Detail(), "has 4 free hosts; the 2 slices of this configuration to be created on it need 5 together: a (2), b (3). Give them 1 hosts more") {
		t.Errorf("5 hosts for 4 free: %v", d)
	}
}
