package provider

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// Combinations GKE refuses at create that raytpu_slice cannot write: whatever the shape and the
// capacity, the request it sends keeps clear of each. A change to expandNodePool that sends one
// fails here before it fails at GKE.
func TestSliceRequestsAvoidWhatGKERefuses(t *testing.T) {
	ctx := context.Background()
	kinds := []capacityChoice{
		{Kind: capacityOnDemand}, {Kind: capacitySpot},
		{Kind: capacityReservation, Reservation: reservationChoice{Consume: reservationSpecific, Name: "r"}},
		{Kind: capacityReservation, Reservation: reservationChoice{Consume: reservationAny}},
		{Kind: capacityFlexStart}, {Kind: capacityQueued},
	}
	checked := 0
	for _, g := range tpu.Generations() {
		for _, topology := range g.Topologies() {
			for _, chips := range g.ChipsPerVMChoices() {
				s, err := g.Slice(topology, chips)
				if err != nil {
					continue
				}
				for _, c := range kinds {
					if c.flexible() && !g.FlexStart {
						continue
					}
					c.Zone = "us-east5-b"
					for _, autoscaling := range []bool{false, true} {
						m := sliceResourceModel{
							Name: types.StringValue("s"), Autoscaling: types.BoolValue(autoscaling), PlacementPolicyName: types.StringValue("wp"),
							Labels: types.MapNull(types.StringType), ResourceLabels: types.MapNull(types.StringType), OAuthScopes: types.ListNull(types.StringType),
						}
						pool, diags := expandNodePool(ctx, m, s, c)
						if diags.HasError() {
							t.Fatalf("%s %s: %v", g.Name, s.Topology, diags)
						}
						checkRequest(t, s, c, pool)
						checked++
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d requests checked: the catalog walk is broken", checked)
	}
}

func checkRequest(t *testing.T, s *tpu.Slice, c capacityChoice, pool *containerpb.NodePool) {
	t.Helper()
	name := s.Generation.Name + " " + s.Topology.String() + " on " + s.MachineType.Name + ", " + c.String()
	pp, a, cfg := pool.GetPlacementPolicy(), pool.GetAutoscaling(), pool.GetConfig()
	// "TPU topology can't be specified with single-host TPU slice pool" (xpk#825, #822).
	if !s.MultiHost && (pp.GetTpuTopology() != "" || pp.GetPolicyName() != "") {
		t.Errorf("%s: single-host pool sent placement %v", name, pp)
	}
	// "... tpu7x-standard-4t machine type with placement policy is not supported. Use workload
	// policy instead." (vllm-project/ci-infra#547).
	if s.MultiHost && s.Placement == tpu.PlacementWorkloadPolicy &&
		(pp.GetType() == containerpb.NodePool_PlacementPolicy_COMPACT || pp.GetPolicyName() == "") {
		t.Errorf("%s: multi-host tpu7x sent placement %v, want a workload policy and no COMPACT", name, pp)
	}
	// "Maximum node count 0 is not a valid size of TPU pod slice" once total_max_node_count
	// replaces the per-zone maximum (vllm-project/ci-infra#545; cluster-toolkit#5111).
	if a.GetEnabled() && (a.TotalMaxNodeCount != 0 || a.TotalMinNodeCount != 0 || int(a.MaxNodeCount) != s.Hosts) {
		t.Errorf("%s: autoscaling %v, want the per-zone maximum %d and no totals", name, a, s.Hosts)
	}
	// Flex-start: autoscaled, no static nodes (GKE: "Flex start node pools require initial node
	// count to be set to 0.").
	if c.flexible() && (!a.GetEnabled() || pool.InitialNodeCount != 0 || !cfg.GetFlexStart()) {
		t.Errorf("%s: flex-start pool with autoscaling %v, %d initial nodes", name, a, pool.InitialNodeCount)
	}
	// "Queued_provisioning requires reservation affinity to be set to none" (terraform-provider-google#18341).
	if c.Kind == capacityQueued && (!pool.GetQueuedProvisioning().GetEnabled() ||
		cfg.GetReservationAffinity().GetConsumeReservationType() != containerpb.ReservationAffinity_NO_RESERVATION) {
		t.Errorf("%s: queued pool with affinity %v", name, cfg.GetReservationAffinity())
	}
}

// A queued slice naming a reservation is refused at plan with GKE's reason, once, on reservation.
func TestQueuedSliceWithReservationRefused(t *testing.T) {
	ctx := context.Background()
	s, err := tpu.NewSlice("v6e", "4x4", 0)
	if err != nil {
		t.Fatal(err)
	}
	reservation := types.ObjectValueMust(reservationAttrTypes, map[string]attr.Value{
		"consume": types.StringNull(), "name": types.StringValue("r"), "project": types.StringNull(), "block": types.StringNull(),
	})
	for _, tc := range []struct {
		name    string
		config  sliceResourceModel
		summary []string
	}{
		{"queued with a reservation", sliceResourceModel{QueuedProvisioning: types.BoolValue(true), Reservation: reservation},
			[]string{"Queued Provisioning Takes No Reservation"}},
		{"and Spot too", sliceResourceModel{QueuedProvisioning: types.BoolValue(true), Reservation: reservation, Spot: types.BoolValue(true)},
			[]string{"Queued Provisioning Takes No Reservation", "Conflicting Capacity Options"}},
		{"flex-start with a reservation", sliceResourceModel{FlexStart: types.BoolValue(true), Reservation: reservation},
			[]string{"Conflicting Capacity Options"}},
	} {
		diags := validateCapacity(ctx, tc.config, s)
		var got []string
		for _, d := range diags.Errors() {
			got = append(got, d.Summary())
			if d.Summary() == "Queued Provisioning Takes No Reservation" &&
				!strings.Contains(d.Detail(), `"Queued_provisioning requires reservation affinity to be set to none"`) {
				t.Errorf("%s: detail %q lacks GKE's words", tc.name, d.Detail())
			}
		}
		if strings.Join(got, "; ") != strings.Join(tc.summary, "; ") {
			t.Errorf("%s: errors %q, want %q", tc.name, got, tc.summary)
		}
	}
}
