package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		72 * time.Hour: "72h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 168*time.Hour + time.Second: "168h0m1s", 45 * time.Second: "45s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(shortDuration(d)); err != nil || back != d {
			t.Errorf("%q does not parse back to %s", shortDuration(d), d)
		}
	}
}

// readCapacity keeps the configuration while the pool runs on one of its choices, and takes
// GKE's account when it does not (drift) or when there is none yet (import).
func TestReadCapacity(t *testing.T) {
	ctx := context.Background()
	fallback := types.ListValueMust(types.ObjectType{AttrTypes: fallbackAttrTypes}, []attr.Value{
		types.ObjectValueMust(fallbackAttrTypes, map[string]attr.Value{
			"zone": types.StringValue("us-east5-a"), "capacity": types.StringNull(), "reservation": types.ObjectNull(reservationAttrTypes),
		}),
	})
	configured := func() *sliceResourceModel {
		return &sliceResourceModel{Zone: types.StringValue("us-east5-b"), Spot: types.BoolValue(false), Fallback: fallback}
	}
	pool := func(zone string, edit func(*containerpb.NodeConfig)) *containerpb.NodePool {
		cfg := &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"}
		if edit != nil {
			edit(cfg)
		}
		return &containerpb.NodePool{Locations: []string{zone}, Config: cfg}
	}
	used := func(m *sliceResourceModel) string {
		a := m.CapacityUsed.Attributes()
		return fmt.Sprintf("%s %s %s %s", a["zone"], a["type"], a["reservation"], a["attempt"])
	}

	m := configured()
	m.readCapacity(ctx, pool("us-east5-a", nil))
	if got, want := used(m), `"us-east5-a" "on-demand" <null> 2`; got != want || m.Zone.ValueString() != "us-east5-b" {
		t.Errorf("on its fallback: capacity_used %s, zone %s; want %s and the zone as written", got, m.Zone, want)
	}

	m = configured()
	m.readCapacity(ctx, pool("us-east5-b", func(c *containerpb.NodeConfig) { c.Spot = true }))
	if got, want := used(m), `"us-east5-b" "spot" <null> 1`; got != want || !m.Spot.ValueBool() {
		t.Errorf("recreated on Spot out of band: capacity_used %s, spot %s; want %s and spot read", got, m.Spot, want)
	}

	m = &sliceResourceModel{}
	m.readCapacity(ctx, pool("us-east5-c", func(c *containerpb.NodeConfig) {
		c.ReservationAffinity = reservationChoice{Consume: reservationSpecific, Project: "shared", Name: "r", Block: "b1"}.affinity()
	}))
	r := objectAs[reservationModel](ctx, m.Reservation, new(diag.Diagnostics))
	if m.Zone.ValueString() != "us-east5-c" || r.Project.ValueString() != "shared" || r.Name.ValueString() != "r" || r.Block.ValueString() != "b1" ||
		!r.Consume.IsNull() || used(m) != `"us-east5-c" "reservation" "projects/shared/reservations/r/reservationBlocks/b1" 1` {
		t.Errorf("imported: zone %s, reservation %+v, capacity_used %s", m.Zone, r, used(m))
	}
}
