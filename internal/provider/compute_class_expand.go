package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// ValidateConfig checks each priority as GKE would take it, with the attribute that is wrong.
func (r *computeClassResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m computeClassModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Priorities.IsNull() || m.Priorities.IsUnknown() {
		return
	}
	var ps []computeClassPriorityModel
	if resp.Diagnostics.Append(m.Priorities.ElementsAs(ctx, &ps, false)...); resp.Diagnostics.HasError() {
		return
	}
	for i, p := range ps {
		validateClassPriority(p, path.Root("priorities").AtListIndex(i), &resp.Diagnostics)
	}
}

// validateClassPriority checks one priority; values unknown at plan are left for the apply.
func validateClassPriority(p computeClassPriorityModel, at path.Path, diags *diag.Diagnostics) {
	if p.Generation.IsUnknown() || p.Topology.IsUnknown() || p.ChipsPerHost.IsUnknown() {
		return
	}
	s, err := tpu.NewSlice(p.Generation.ValueString(), p.Topology.ValueString(), int(p.ChipsPerHost.ValueInt64()))
	if err != nil {
		diags.AddAttributeError(at, "Invalid TPU Slice", fmt.Sprintf("%s: %s.", at, err))
		return
	}
	// A multi-host tpu7x slice is placed by a workload policy, which replaces the topology flag
	// (GKE, "About Ironwood (TPU7x)"), and node auto-provisioning makes none for it.
	if s.MultiHost && s.Placement == tpu.PlacementWorkloadPolicy {
		diags.AddAttributeError(at.AtName("topology"), "Slice Needs A Workload Policy", fmt.Sprintf("%s: a multi-host %s slice (%s, %d hosts) "+
			"is placed by a workload policy, which node auto-provisioning does not create. Use a single-host %s shape here, or make the "+
			"slice with raytpu_slice.", at, s.Generation.Name, s.Topology, s.Hosts, s.Generation.Name))
	}
	capacity := p.Capacity.ValueString()
	if p.Capacity.IsUnknown() {
		return
	}
	reservation := !p.Reservation.IsNull()
	switch {
	case capacity == capacityReservation && p.Reservation.IsNull():
		diags.AddAttributeError(at.AtName("reservation"), "Reservation Needed", fmt.Sprintf("%s: capacity = \"reservation\" takes the "+
			"slice from a specific reservation: set reservation to its name, or pick on-demand, flex-start or spot.", at))
	case capacity != capacityReservation && (reservation || !p.ReservationProject.IsNull() || !p.ReservationBlock.IsNull()):
		diags.AddAttributeError(at.AtName("reservation"), "Reservation Without Reservation Capacity", fmt.Sprintf("%s: reservation, "+
			"reservation_project and reservation_block belong to capacity = \"reservation\"; this priority asks for %s.", at, capacity))
	}
	if capacity != capacityFlexStart {
		for name, v := range map[string]types.Int64{"max_run_duration_seconds": p.MaxRunDurationSeconds, "node_recycling_lead_time_seconds": p.NodeRecyclingLeadTimeSeconds} {
			if !v.IsNull() {
				diags.AddAttributeError(at.AtName(name), "Flex-Start Setting Without Flex-Start", fmt.Sprintf("%s: %s belongs to "+
					"capacity = \"flex-start\"; this priority asks for %s.", at, name, capacity))
			}
		}
		return
	}
	if !s.Generation.FlexStart {
		diags.AddAttributeError(at.AtName("capacity"), "No Flex-Start For The Generation", fmt.Sprintf("%s: GKE offers no flex-start "+
			"TPU %s (\"TPU v3 and v4 are not supported\", GKE \"About GPU and TPU provisioning with flex-start\"). Pick on-demand, spot "+
			"or a reservation for it.", at, s.Generation.Name))
	}
	run, lead := p.MaxRunDurationSeconds, p.NodeRecyclingLeadTimeSeconds
	if !run.IsNull() && !run.IsUnknown() && !lead.IsNull() && !lead.IsUnknown() && lead.ValueInt64() >= run.ValueInt64() {
		diags.AddAttributeError(at.AtName("node_recycling_lead_time_seconds"), "Lead Time Not Within The Run", fmt.Sprintf("%s: "+
			"node_recycling_lead_time_seconds = %d starts the replacement nodes before the nodes start: it must be less than "+
			"max_run_duration_seconds = %d.", at, lead.ValueInt64(), run.ValueInt64()))
	}
}

// expandComputeClass is the ComputeClass the plan describes.
func expandComputeClass(ctx context.Context, m *computeClassModel) (kube.ComputeClass, diag.Diagnostics) {
	var ps []computeClassPriorityModel
	diags := m.Priorities.ElementsAs(ctx, &ps, false)
	cc := kube.ComputeClass{Name: m.Name.ValueString(), WhenUnsatisfiable: m.WhenUnsatisfiable.ValueString(), AutoCreation: m.NodePoolAutoCreation.ValueBool()}
	for i, p := range ps {
		s, err := tpu.NewSlice(p.Generation.ValueString(), p.Topology.ValueString(), int(p.ChipsPerHost.ValueInt64()))
		if err != nil {
			diags.AddAttributeError(path.Root("priorities").AtListIndex(i), "Invalid TPU Slice", err.Error())
			continue
		}
		kp := kube.ComputeClassPriority{TPUType: s.Generation.GKEAccelerator, Chips: s.ChipsPerHost(), Topology: s.Topology.String(),
			MachineType: s.MachineType.Name}
		switch p.Capacity.ValueString() {
		case capacityReservation:
			kp.Reservation, kp.ReservationProject, kp.ReservationBlock = p.Reservation.ValueString(), p.ReservationProject.ValueString(), p.ReservationBlock.ValueString()
		case capacityFlexStart:
			kp.FlexStart = true
			kp.MaxRunDurationSeconds, kp.NodeRecyclingLeadTimeSeconds = p.MaxRunDurationSeconds.ValueInt64(), p.NodeRecyclingLeadTimeSeconds.ValueInt64()
		case capacitySpot:
			kp.Spot = true
		}
		cc.Priorities = append(cc.Priorities, kp)
	}
	return cc, diags
}

// flattenComputeClass writes the class the cluster has into m, keeping what m has where the
// cluster's answer means the same (chips_per_host written out as its shape's default).
func flattenComputeClass(ctx context.Context, cc kube.ComputeClass, m *computeClassModel) diag.Diagnostics {
	var prior []computeClassPriorityModel
	diags := m.Priorities.ElementsAs(ctx, &prior, false)
	elems := make([]computeClassPriorityModel, len(cc.Priorities))
	for i, p := range cc.Priorities {
		e := computeClassPriorityModel{
			Generation: types.StringValue(p.TPUType), Topology: types.StringValue(p.Topology), ChipsPerHost: types.Int64Value(int64(p.Chips)),
			Capacity: types.StringValue(capacityOnDemand), Reservation: types.StringNull(), ReservationProject: types.StringNull(),
			ReservationBlock: types.StringNull(), MaxRunDurationSeconds: types.Int64Null(), NodeRecyclingLeadTimeSeconds: types.Int64Null(),
		}
		if g := generationOfAccelerator(p.TPUType); g != nil {
			e.Generation = types.StringValue(g.Name)
			if s, err := g.Slice(tpu.MustParseTopology(p.Topology), 0); err == nil && s.ChipsPerHost() == p.Chips {
				e.ChipsPerHost = types.Int64Null()
			}
		}
		if i < len(prior) {
			// The configuration's spelling of the same generation and chips (an alias, chips written out) stays.
			if g, err := tpu.LookupGeneration(prior[i].Generation.ValueString()); err == nil && g.GKEAccelerator == p.TPUType {
				e.Generation = prior[i].Generation
			}
			if prior[i].ChipsPerHost.ValueInt64() == int64(p.Chips) {
				e.ChipsPerHost = prior[i].ChipsPerHost
			}
		}
		switch {
		case p.Reservation != "":
			e.Capacity, e.Reservation = types.StringValue(capacityReservation), types.StringValue(p.Reservation)
			e.ReservationProject, e.ReservationBlock = optionalString(p.ReservationProject), optionalString(p.ReservationBlock)
		case p.FlexStart:
			e.Capacity = types.StringValue(capacityFlexStart)
			e.MaxRunDurationSeconds, e.NodeRecyclingLeadTimeSeconds = optionalInt(p.MaxRunDurationSeconds), optionalInt(p.NodeRecyclingLeadTimeSeconds)
		case p.Spot:
			e.Capacity = types.StringValue(capacitySpot)
		}
		elems[i] = e
	}
	list, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: computeClassPriorityAttrTypes}, elems)
	diags.Append(d...)
	m.Priorities = list
	m.WhenUnsatisfiable = types.StringValue(cc.WhenUnsatisfiable)
	if cc.WhenUnsatisfiable == "" {
		m.WhenUnsatisfiable = types.StringValue("DoNotScaleUp")
	}
	m.NodePoolAutoCreation = types.BoolValue(cc.AutoCreation)
	m.NodeSelector = computeClassSelector(cc.Name)
	return diags
}

func optionalString(s string) basetypes.StringValue {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func optionalInt(v int64) basetypes.Int64Value {
	if v == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(v)
}
