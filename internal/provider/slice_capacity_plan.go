package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// flexStartMaxRun is the longest flex-start VMs run: "for up to seven days" (GKE "About GPU and TPU
// provisioning with flex-start").
const flexStartMaxRun = 7 * 24 * time.Hour

// capacityReplacement replaces a slice whose settings of where its capacity comes from no longer
// list the capacity it runs on (planCapacity).
var capacityReplacement = PlanReplacement{
	Attributes: []path.Path{
		path.Root("zone"), path.Root("spot"), path.Root("reservation"), path.Root("flex_start"),
		path.Root("queued_provisioning"), path.Root("fallback"),
	},
	When: "when the capacity the slice runs on (`capacity_used`) is no longer among the choices they list, or they are unknown until apply",
}

// runDurationRemoval replaces a flex-start or queued slice whose max_run_duration is removed.
var runDurationRemoval = PlanReplacement{
	Attributes: []path.Path{path.Root("max_run_duration")},
	When:       "when it is removed from a flex-start or queued slice (GKE takes a new duration, not none; a new one is applied in place)",
}

// validateCapacity refuses, at plan time, capacity settings GKE refuses or that cannot take effect.
func validateCapacity(ctx context.Context, config sliceResourceModel, s *tpu.Slice) diag.Diagnostics {
	var diags diag.Diagnostics
	queued, flex := config.QueuedProvisioning.ValueBool(), config.FlexStart.ValueBool() || config.QueuedProvisioning.ValueBool()
	reservation := !config.Reservation.IsNull()
	if queued && reservation {
		// GKE's 400 (hashicorp/terraform-provider-google#18341); raytpu sends NO_RESERVATION for a
		// queued slice, so a reservation written beside it could never be consumed.
		diags.AddAttributeError(path.Root("reservation"), "Queued Provisioning Takes No Reservation",
			"GKE queues a slice only on capacity outside reservations: it answers a queued node pool that names one with "+
				"\"Queued_provisioning requires reservation affinity to be set to none\". Remove reservation, or set "+
				"queued_provisioning = false to consume the reservation.")
		reservation = false
	}
	var ways []string
	for _, w := range []struct {
		set  bool
		name string
	}{{config.Spot.ValueBool(), "spot"}, {reservation, "reservation"}, {flex, "flex_start/queued_provisioning"}} {
		if w.set {
			ways = append(ways, w.name)
		}
	}
	if len(ways) > 1 {
		diags.AddAttributeError(path.Root("spot"), "Conflicting Capacity Options",
			fmt.Sprintf("%s and %s are different ways to obtain TPU capacity: choose one for the slice, and list others in "+
				"fallback to try them when it runs out.", strings.Join(ways[:len(ways)-1], ", "), ways[len(ways)-1]))
	}
	if queued && !config.FlexStart.IsNull() && !config.FlexStart.ValueBool() {
		diags.AddAttributeError(path.Root("flex_start"), "Queued Provisioning Needs Flex-Start",
			"GKE queues TPU node pools only as flex-start capacity (it answers \"Queued_provisioning doesn't support TPUs\" "+
				"without it): remove flex_start = false.")
	}
	if flex && !s.Generation.FlexStart {
		diags.AddAttributeError(path.Root("flex_start"), "Flex-Start Not Offered",
			fmt.Sprintf("GKE offers flex-start TPU capacity, which queued provisioning also uses, for v5e, v5p, v6e and tpu7x, "+
				"not for %s (\"TPU v3 and v4 are not supported\"). Use spot, a reservation, or another generation.", s.Generation.DisplayName))
	}
	if flex && !config.Autoscaling.IsNull() && !config.Autoscaling.ValueBool() {
		diags.AddAttributeError(path.Root("autoscaling"), "Flex-Start Slices Autoscale",
			"GKE answers \"Flex start node pools require autoscaling enabled.\": remove autoscaling = false.")
	}
	if flex && config.WaitForHosts.ValueBool() {
		diags.AddAttributeWarning(path.Root("wait_for_hosts"), "Hosts Not Waited For",
			"A flex-start or queued slice is created empty; its hosts come up together when a workload asks for them and "+
				"capacity is found, which may take hours. Creating it does not wait for them; hosts and ready_hosts show them once they are there.")
	}
	diags.Append(validateReservation(ctx, path.Root("reservation"), config.Reservation)...)
	diags.Append(validateFallback(ctx, config, s, flex)...)
	if d := config.MaxRunDuration; !d.IsNull() && !d.IsUnknown() {
		limit, err := time.ParseDuration(d.ValueString())
		if err == nil && limit > flexStartMaxRun {
			diags.AddAttributeError(path.Root("max_run_duration"), "Run Duration Too Long",
				fmt.Sprintf("max_run_duration %s is longer than flex-start capacity runs: at most seven days (168h).", d.ValueString()))
		}
		choices, _ := config.capacityChoices(ctx)
		if !slices.ContainsFunc(choices, capacityChoice.flexible) {
			diags.AddAttributeError(path.Root("max_run_duration"), "Run Duration Without Flex-Start",
				"max_run_duration limits flex-start capacity, which the slice does not use: set flex_start or queued_provisioning, "+
					"or add a flex-start fallback entry, or remove max_run_duration.")
		}
	}
	return diags
}

// validateReservation checks a reservation attribute: one named, or any matching one.
func validateReservation(ctx context.Context, at path.Path, o types.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	if o.IsNull() || o.IsUnknown() {
		return diags
	}
	r := objectAs[reservationModel](ctx, o, &diags)
	if r.Consume.ValueString() == reservationAny {
		if !r.Name.IsNull() || !r.Project.IsNull() || !r.Block.IsNull() {
			diags.AddAttributeError(at, "Reservation Named With consume = \"any\"",
				"consume = \"any\" takes any matching reservation of the zone that does not require to be named: remove name, "+
					"project and block, or set consume = \"specific\" to use the one named.")
		}
		return diags
	}
	if r.Name.IsNull() {
		diags.AddAttributeError(at.AtName("name"), "Missing Reservation Name",
			"a specific reservation is consumed by name: set name (and project for one shared from another project), or "+
				"consume = \"any\" to take any matching reservation.")
	}
	return diags
}

// validateFallback checks each fallback entry and that each can be reached: a flex-start choice
// never stocks out at creation (GKE creates the pool empty), so nothing after one is ever tried.
func validateFallback(ctx context.Context, config sliceResourceModel, s *tpu.Slice, ownFlex bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if config.Fallback.IsNull() || config.Fallback.IsUnknown() {
		return diags
	}
	var entries []fallbackModel
	diags.Append(config.Fallback.ElementsAs(ctx, &entries, false)...)
	if diags.HasError() {
		return diags
	}
	if ownFlex && len(entries) > 0 {
		diags.AddAttributeError(path.Root("fallback"), "Fallback Never Tried",
			"a flex-start or queued slice is created empty and never stocks out at creation, so its fallback entries would "+
				"never be tried: remove fallback, or make flex-start the last fallback entry instead.")
		return diags
	}
	choices, _ := config.capacityChoices(ctx)
	for i, f := range entries {
		at := path.Root("fallback").AtListIndex(i)
		kind := choices[i+1].Kind
		switch {
		case f.Capacity.IsUnknown():
			continue
		case kind == capacityReservation && f.Reservation.IsNull() && config.Reservation.IsNull():
			diags.AddAttributeError(at.AtName("reservation"), "Missing Reservation",
				"a reservation entry needs reservation = { ... }: the slice has no reservation of its own to try.")
		case kind != capacityReservation && !f.Reservation.IsNull():
			diags.AddAttributeError(at.AtName("reservation"), "Reservation Not Applicable",
				fmt.Sprintf("reservation applies to capacity = %q entries; this one is %q: remove it.", capacityReservation, kind))
		case kind == capacityFlexStart && !s.Generation.FlexStart:
			diags.AddAttributeError(at.AtName("capacity"), "Flex-Start Not Offered",
				fmt.Sprintf("GKE offers no flex-start capacity for %s.", s.Generation.DisplayName))
		case kind == capacityFlexStart && i < len(entries)-1:
			diags.AddAttributeError(path.Root("fallback").AtListIndex(i+1), "Fallback Never Tried",
				"flex-start never stocks out at creation (GKE creates the slice empty), so the entries after it would never be tried: make it the last.")
		}
		diags.Append(validateReservation(ctx, at.AtName("reservation"), f.Reservation)...)
		if config.Zone.IsUnknown() || f.Zone.IsUnknown() || f.Reservation.IsUnknown() {
			continue
		}
		if slices.Index(choices, choices[i+1]) <= i {
			diags.AddAttributeError(at, "Duplicate Capacity Choice",
				fmt.Sprintf("fallback entry %d asks for %s, which an earlier choice already tries: remove it.", i+1, choices[i+1]))
		}
	}
	return diags
}

// planCapacity fills the capacity settings GKE or raytpu decide, and replaces the slice only when
// the capacity it runs on is no longer one of the choices planned: a slice that came up on a
// fallback entry stays when the list changes around it.
func planCapacity(ctx context.Context, config sliceResourceModel, plan, state *sliceResourceModel, resp *resource.ModifyPlanResponse) {
	if config.FlexStart.IsNull() {
		plan.FlexStart = plan.QueuedProvisioning
	}
	if config.Autoscaling.IsNull() && !plan.FlexStart.IsUnknown() {
		plan.Autoscaling = plan.FlexStart
	}
	if state == nil {
		return
	}
	if !plan.capacityKnown(ctx) {
		resp.RequiresReplace = append(resp.RequiresReplace, capacityReplacement.Attributes...)
		return
	}
	running := runningChoice(ctx, *state)
	choices, diags := plan.capacityChoices(ctx)
	resp.Diagnostics.Append(diags...)
	attempt := slices.Index(choices, running)
	if attempt < 0 {
		resp.RequiresReplace = append(resp.RequiresReplace, capacityReplacement.Attributes...)
		return
	}
	plan.CapacityUsed = capacityUsedObject(running, attempt)
	// A new run duration is an update in place; none at all cannot be asked of GKE (UpdateNodePool
	// takes a duration, and one left out changes nothing), so removing it replaces the slice.
	if running.flexible() && plan.MaxRunDuration.IsNull() && !state.MaxRunDuration.IsNull() {
		resp.RequiresReplace = append(resp.RequiresReplace, runDurationRemoval.Attributes...)
	}
}

// runningChoice is the capacity a slice in state runs on: capacity_used, or for a state written
// before it existed, the slice's own settings.
func runningChoice(ctx context.Context, state sliceResourceModel) capacityChoice {
	var diags diag.Diagnostics
	used := objectAs[struct {
		Zone        types.String `tfsdk:"zone"`
		Type        types.String `tfsdk:"type"`
		Reservation types.String `tfsdk:"reservation"`
		Attempt     types.Int64  `tfsdk:"attempt"`
	}](ctx, state.CapacityUsed, &diags)
	choices, _ := state.capacityChoices(ctx)
	if used.Attempt.IsNull() || diags.HasError() {
		return choices[0]
	}
	if i := int(used.Attempt.ValueInt64()) - 1; i >= 0 && i < len(choices) && choices[i].Zone == used.Zone.ValueString() &&
		choices[i].Kind == used.Type.ValueString() {
		return choices[i]
	}
	// Recorded on a configuration since changed: what GKE reported then.
	c := capacityChoice{Zone: used.Zone.ValueString(), Kind: used.Type.ValueString()}
	if c.Kind == capacityReservation {
		c.Reservation = parseReservationString(used.Reservation.ValueString())
	}
	return c
}

// parseReservationString reads back reservationChoice.String.
func parseReservationString(s string) reservationChoice {
	if s == (reservationChoice{Consume: reservationAny}).String() {
		return reservationChoice{Consume: reservationAny}
	}
	r, _ := reservationOfAffinity(reservationChoice{Consume: reservationSpecific, Name: s}.affinity())
	return r
}

func sameDuration(a, b types.String) bool {
	da, errA := time.ParseDuration(a.ValueString())
	db, errB := time.ParseDuration(b.ValueString())
	return (errA != nil && errB != nil) || (errA == nil && errB == nil && da == db)
}

// checkManagement refuses what GKE refuses of a slice on a cluster enrolled in a release channel:
// "Auto_upgrade and auto_repair cannot be false when release_channel REGULAR is set." (GKE's 400,
// quoted in kaiwaehner/hivemq-mqtt-tensorflow-kafka-realtime-iot-machine-learning-training-inference#47).
// Flex-start slices are exempt: cluster-toolkit runs flex-start tpu7x pools with auto_repair false
// on REGULAR (capacity-facts §7, INFERRED).
func checkManagement(plan sliceResourceModel, channel string, flexible bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if channel == "" || flexible {
		return diags
	}
	for name, v := range map[string]types.Bool{"auto_repair": plan.AutoRepair, "auto_upgrade": plan.AutoUpgrade} {
		if !v.IsNull() && !v.IsUnknown() && !v.ValueBool() {
			diags.AddAttributeError(path.Root(name), "Release Channel Requires Auto-Upgrade and Auto-Repair",
				fmt.Sprintf("the cluster is enrolled in the %s release channel, where GKE keeps nodes upgraded and repaired "+
					"(\"Auto_upgrade and auto_repair cannot be false when release_channel %s is set.\"): remove %s = false, or "+
					"use maintenance exclusions on the cluster to keep upgrades away from a training run.", channel, channel, name))
		}
	}
	return diags
}

// zoneRegionCheck refuses choices in zones outside the cluster's region, where GKE places none of
// its node pools.
func zoneRegionCheck(choices []capacityChoice, id gke.ClusterID) diag.Diagnostics {
	var diags diag.Diagnostics
	region := gke.Region(id.Location)
	for i, c := range choices {
		if c.Zone == "" || gke.Region(c.Zone) == region {
			continue
		}
		at := path.Root("zone")
		if i > 0 {
			at = path.Root("fallback").AtListIndex(i - 1).AtName("zone")
		}
		diags.AddAttributeError(at, "Zone Outside the Cluster's Region",
			fmt.Sprintf("zone %s is not in %s, the region of cluster %s: use one of its zones.", c.Zone, region, id))
	}
	return diags
}
