package emulator

import (
	"strings"
	"testing"

	compute "google.golang.org/api/compute/v1"
)

// Compute Engine's reservations API serves the reservations made with a machine type, in VMs: the
// reserved count and the VMs the node pools consuming it hold; a pool of another machine type is
// not what it reserves.
func TestComputeReservations(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	cs := computeClient(t)
	ctx := testCtx(t)
	// SpecificOnly, so that no pool of another test consumes them.
	for _, r := range []Reservation{
		{Project: testProject, Zone: testZone, Name: "cr-v6e", MachineType: "ct6e-standard-4t", Chips: 16, SpecificOnly: true},
		{Project: testProject, Zone: testZone, Name: "cr-chips", Generation: "v6e", Chips: 8, SpecificOnly: true},
	} {
		if err := testEmu.CreateReservation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []Reservation{
		{Project: testProject, Zone: testZone, Name: "cr-bad", MachineType: "e2-standard-4", Chips: 4},
		{Project: testProject, Zone: testZone, Name: "cr-bad", MachineType: "ct6e-standard-4t", Chips: 6},
		{Project: testProject, Zone: testZone, Name: "cr-bad", MachineType: "ct6e-standard-4t", Generation: "v5e", Chips: 4},
	} {
		if err := testEmu.CreateReservation(ctx, r); err == nil {
			t.Errorf("reservation %+v taken", r)
		}
	}

	wantOpDone(t, createPoolOp(t, c, cluster, reservedPool("cr-pool", "cr-v6e")))
	other := reservedPool("cr-other", "cr-v6e")
	other.Config.MachineType = "ct6e-standard-1t"
	key := reservationKey(testProject, testZone, "cr-v6e")
	wantOpError(t, createPoolOp(t, c, cluster, other), "Reservation '"+key+"' is incorrect for the requested resources.")

	r, err := cs.Reservations.Get(testProject, testZone, "cr-v6e").Do()
	if err != nil {
		t.Fatal(err)
	}
	if sr := r.SpecificReservation; r.Kind != "compute#reservation" || r.Status != "READY" || !r.SpecificReservationRequired ||
		sr.Count != 4 || sr.InUseCount != 1 || sr.InstanceProperties.MachineType != "ct6e-standard-4t" ||
		!strings.HasSuffix(r.Zone, "/compute/v1/projects/"+testProject+"/zones/"+testZone) || !strings.HasSuffix(r.SelfLink, "/compute/v1/"+key) {
		t.Errorf("reservation reported as %+v, specificReservation %+v", r, r.SpecificReservation)
	}

	list, err := cs.Reservations.List(testProject, testZone).Do()
	if err != nil {
		t.Fatal(err)
	}
	agg, err := cs.Reservations.AggregatedList(testProject).Do()
	if err != nil {
		t.Fatal(err)
	}
	names := func(rs []*compute.Reservation) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(list.Items); !strings.Contains(got, "cr-v6e") || strings.Contains(got, "cr-chips") {
		t.Errorf("list has %s, want cr-v6e and not cr-chips", got)
	}
	if got := names(agg.Items["zones/"+testZone].Reservations); !strings.Contains(got, "cr-v6e") || strings.Contains(got, "cr-chips") {
		t.Errorf("aggregated list has %s in zones/%s (%d scopes)", got, testZone, len(agg.Items))
	}

	_, err = cs.Reservations.Get(testProject, testZone, "cr-chips").Do()
	wantComputeError(t, err, 404, "notFound", "The resource '"+reservationKey(testProject, testZone, "cr-chips")+"' was not found")
}
