package gke

import (
	"slices"
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// A reservation reads back in hosts, with its zone and machine type by name; one of that name is
// found in every zone that has it; a missing one is a 404 and a refused read a 403.
func TestReservations(t *testing.T) {
	e := testEmulator(t)
	c := testClient(t)
	ctx := testCtx(t)
	const project, other = "raytpu-gke-test", "us-central2-a"
	for _, r := range []emulator.Reservation{
		{Project: project, Zone: testCluster.Location, Name: "rs-v6e", MachineType: "ct6e-standard-4t", Chips: 16, SpecificOnly: true},
		{Project: project, Zone: other, Name: "rs-v6e", MachineType: "ct6e-standard-4t", Chips: 8},
		{Project: project, Zone: other, Name: "rs-only-there", MachineType: "ct5p-hightpu-4t", Chips: 8},
	} {
		if err := e.CreateReservation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.GetReservation(ctx, project, testCluster.Location, "rs-v6e")
	if err != nil {
		t.Fatal(err)
	}
	want := Reservation{Project: project, Zone: testCluster.Location, Name: "rs-v6e", MachineType: "ct6e-standard-4t",
		Count: 4, SpecificRequired: true}
	if r.Project != want.Project || r.Zone != want.Zone || r.Name != want.Name || r.MachineType != want.MachineType ||
		r.Count != want.Count || r.InUse != 0 || !r.SpecificRequired || r.Free() != 4 {
		t.Errorf("read %+v, want %+v", *r, want)
	}

	zones, err := c.ReservationZones(ctx, project, "rs-only-there")
	if err != nil || !slices.Equal(zones, []string{other}) {
		t.Errorf("rs-only-there in %v (%v), want [%s]", zones, err, other)
	}
	zones, err = c.ReservationZones(ctx, project, "rs-v6e")
	if err != nil || !slices.Equal(zones, []string{other, testCluster.Location}) {
		t.Errorf("rs-v6e in %v (%v), want both zones", zones, err)
	}

	_, err = c.GetReservation(ctx, project, testCluster.Location, "rs-only-there")
	if !IsNotFound(err) {
		t.Errorf("a reservation of another zone read as %v, want a 404", err)
	}

	// Times 1: the emulator is shared, and a 403 is not retried.
	if _, err := e.InjectFault(ctx, emulator.Fault{RPC: "compute.reservations.get", Path: "/rs-v6e$", Status: "PERMISSION_DENIED",
		Message: "Required 'compute.reservations.get' permission", Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetReservation(ctx, project, testCluster.Location, "rs-v6e")
	if !IsPermissionDenied(err) || IsNotFound(err) {
		t.Errorf("a refused read is %v, want a 403", err)
	}
}

func TestReservationFree(t *testing.T) {
	for _, r := range []struct {
		count, inUse, free int64
	}{{4, 1, 3}, {4, 4, 0}, {2, 3, 0}} {
		if got := (Reservation{Count: r.count, InUse: r.inUse}).Free(); got != r.free {
			t.Errorf("%d reserved, %d in use: %d free, want %d", r.count, r.inUse, got, r.free)
		}
	}
}
