package provider

import (
	"context"
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// maintenance_policy maps onto GKE's MaintenancePolicy: one window, daily or recurring, and
// exclusions (containerpb MaintenanceWindow). It is set in the CreateCluster request and replaced
// with SetMaintenancePolicy; GKE's limits are checked at plan time (cluster_maintenance_plan.go).

type maintenancePolicyModel struct {
	DailyWindowStartTime types.String `tfsdk:"daily_window_start_time"`
	RecurringWindow      types.Object `tfsdk:"recurring_window"`
	Exclusions           types.List   `tfsdk:"exclusions"`
}

type recurringWindowModel struct {
	StartTime  types.String `tfsdk:"start_time"`
	EndTime    types.String `tfsdk:"end_time"`
	Recurrence types.String `tfsdk:"recurrence"`
}

type maintenanceExclusionModel struct {
	Name              types.String `tfsdk:"name"`
	StartTime         types.String `tfsdk:"start_time"`
	EndTime           types.String `tfsdk:"end_time"`
	UntilEndOfSupport types.Bool   `tfsdk:"until_end_of_support"`
	Scope             types.String `tfsdk:"scope"`
}

var (
	recurringWindowAttrTypes = map[string]attr.Type{"start_time": types.StringType, "end_time": types.StringType, "recurrence": types.StringType}
	exclusionAttrTypes       = map[string]attr.Type{
		"name": types.StringType, "start_time": types.StringType, "end_time": types.StringType,
		"until_end_of_support": types.BoolType, "scope": types.StringType,
	}
	maintenancePolicyAttrTypes = map[string]attr.Type{
		"daily_window_start_time": types.StringType,
		"recurring_window":        types.ObjectType{AttrTypes: recurringWindowAttrTypes},
		"exclusions":              types.ListType{ElemType: types.ObjectType{AttrTypes: exclusionAttrTypes}},
	}
)

// exclusionScopes are GKE's exclusion scopes (containerpb MaintenanceExclusionOptions.Scope).
var exclusionScopes = []string{"NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"}

func maintenancePolicySchema() schema.SingleNestedAttribute {
	timeAttr := func(desc string, required bool) schema.StringAttribute {
		return schema.StringAttribute{Required: required, Optional: !required, MarkdownDescription: desc, Validators: []validator.String{rfc3339Validator{}}}
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "When GKE may upgrade and otherwise disrupt the cluster: one window, daily or recurring, and " +
			"exclusions during which it may not (GKE's maintenance windows and exclusions). Removing it " +
			"clears the cluster's policy. GKE's limits are checked at plan time.",
		Attributes: map[string]schema.Attribute{
			"daily_window_start_time": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Start of a four-hour window every day, `HH:MM` in UTC, such as `03:00`. Set this or `recurring_window`.",
				Validators:          []validator.String{dailyStartValidator{}},
			},
			"recurring_window": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "A window that recurs: its first occurrence runs from `start_time` to `end_time`, and it repeats " +
					"as `recurrence` says. It must leave at least 48 hours of maintenance in any 32 days, counting only " +
					"stretches of 4 hours or more. Set this or `daily_window_start_time`.",
				Attributes: map[string]schema.Attribute{
					"start_time": timeAttr("Start of the first occurrence, RFC 3339, such as `2025-01-04T02:00:00Z`.", true),
					"end_time":   timeAttr("End of the first occurrence, RFC 3339; after `start_time`.", true),
					"recurrence": schema.StringAttribute{
						Required: true,
						MarkdownDescription: "An RFC 5545 RRULE in UTC days, such as `FREQ=WEEKLY;BYDAY=SA,SU` or `FREQ=DAILY`; " +
							"`FREQ` `HOURLY`, `MINUTELY` and `SECONDLY` are not supported by GKE.",
						Validators: []validator.String{recurrenceValidator{}},
					},
				},
			},
			"exclusions": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "Periods when GKE must not upgrade the cluster, at most 20, of which at most 3 `NO_UPGRADES`. " +
					"A `NO_UPGRADES` exclusion lasts at most 30 days, and the `NO_UPGRADES` exclusions must leave at least 48 hours " +
					"free in any 32 days; the other scopes end at most 180 days ahead, or last until the end of support.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":       schema.StringAttribute{Required: true, MarkdownDescription: "Name, unique among the exclusions."},
					"start_time": timeAttr("Start, RFC 3339, such as `2026-06-01T00:00:00Z`.", true),
					"end_time":   timeAttr("End, RFC 3339; after `start_time`. Omit it with `until_end_of_support = true`.", false),
					"until_end_of_support": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(false),
						MarkdownDescription: "Last until the end of support of the cluster's minor version, without `end_time`. " +
							"Not for `NO_UPGRADES`.",
					},
					"scope": schema.StringAttribute{
						Optional: true, Computed: true, Default: stringdefault.StaticString("NO_UPGRADES"),
						MarkdownDescription: "What is excluded: `NO_UPGRADES` (default: every upgrade), `NO_MINOR_UPGRADES` " +
							"(patches only) or `NO_MINOR_OR_NODE_UPGRADES` (control plane patches only).",
						Validators: []validator.String{stringvalidator.OneOf(exclusionScopes...)},
					},
				}},
			},
		},
	}
}

// expandMaintenancePolicy is the policy to send; nil when the attribute is null, which leaves GKE's
// default on create and clears the policy on update.
func expandMaintenancePolicy(ctx context.Context, obj types.Object) (*containerpb.MaintenancePolicy, diag.Diagnostics) {
	var diags diag.Diagnostics
	if obj.IsNull() || obj.IsUnknown() {
		return nil, diags
	}
	var m maintenancePolicyModel
	diags.Append(obj.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	window := &containerpb.MaintenanceWindow{}
	if v := m.DailyWindowStartTime; !v.IsNull() {
		window.Policy = &containerpb.MaintenanceWindow_DailyMaintenanceWindow{
			DailyMaintenanceWindow: &containerpb.DailyMaintenanceWindow{StartTime: v.ValueString()},
		}
	}
	if !m.RecurringWindow.IsNull() {
		var rw recurringWindowModel
		diags.Append(m.RecurringWindow.As(ctx, &rw, basetypes.ObjectAsOptions{})...)
		window.Policy = &containerpb.MaintenanceWindow_RecurringWindow{RecurringWindow: &containerpb.RecurringTimeWindow{
			Window:     &containerpb.TimeWindow{StartTime: timestamp(rw.StartTime), EndTime: timestamp(rw.EndTime)},
			Recurrence: rw.Recurrence.ValueString(),
		}}
	}
	var exclusions []maintenanceExclusionModel
	diags.Append(m.Exclusions.ElementsAs(ctx, &exclusions, false)...)
	for _, ex := range exclusions {
		if window.MaintenanceExclusions == nil {
			window.MaintenanceExclusions = map[string]*containerpb.TimeWindow{}
		}
		opts := &containerpb.MaintenanceExclusionOptions{
			Scope: containerpb.MaintenanceExclusionOptions_Scope(containerpb.MaintenanceExclusionOptions_Scope_value[ex.Scope.ValueString()]),
		}
		if ex.UntilEndOfSupport.ValueBool() {
			opts.EndTimeBehavior = containerpb.MaintenanceExclusionOptions_UNTIL_END_OF_SUPPORT
		}
		window.MaintenanceExclusions[ex.Name.ValueString()] = &containerpb.TimeWindow{
			StartTime: timestamp(ex.StartTime), EndTime: timestamp(ex.EndTime),
			Options: &containerpb.TimeWindow_MaintenanceExclusionOptions{MaintenanceExclusionOptions: opts},
		}
	}
	return &containerpb.MaintenancePolicy{Window: window}, diags
}

// timestamp is an RFC 3339 attribute as a protobuf timestamp; nil when null or unparsable (the
// validators report the latter).
func timestamp(v types.String) *timestamppb.Timestamp {
	t, err := time.Parse(time.RFC3339, v.ValueString())
	if v.IsNull() || err != nil {
		return nil
	}
	return timestamppb.New(t)
}

// flattenMaintenancePolicy is the policy GKE reports, in prior's terms where they mean the same:
// a time written with another offset than GKE's UTC keeps its text, and exclusions keep their
// order (GKE holds them in a map). A policy with no window and no exclusion is null.
func flattenMaintenancePolicy(ctx context.Context, p *containerpb.MaintenancePolicy, prior types.Object) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	w := p.GetWindow()
	if w.GetPolicy() == nil && len(w.GetMaintenanceExclusions()) == 0 {
		return types.ObjectNull(maintenancePolicyAttrTypes), diags
	}
	var was maintenancePolicyModel
	if !prior.IsNull() && !prior.IsUnknown() {
		diags.Append(prior.As(ctx, &was, basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true})...)
	}
	m := maintenancePolicyModel{DailyWindowStartTime: types.StringNull(), RecurringWindow: types.ObjectNull(recurringWindowAttrTypes)}
	if d := w.GetDailyMaintenanceWindow(); d != nil {
		m.DailyWindowStartTime = types.StringValue(d.GetStartTime())
	}
	if rw := w.GetRecurringWindow(); rw != nil {
		var old recurringWindowModel
		if !was.RecurringWindow.IsNull() && !was.RecurringWindow.IsUnknown() {
			diags.Append(was.RecurringWindow.As(ctx, &old, basetypes.ObjectAsOptions{})...)
		}
		m.RecurringWindow = types.ObjectValueMust(recurringWindowAttrTypes, map[string]attr.Value{
			"start_time": sameTime(rw.GetWindow().GetStartTime(), old.StartTime),
			"end_time":   sameTime(rw.GetWindow().GetEndTime(), old.EndTime),
			"recurrence": sameRecurrence(rw, old.Recurrence),
		})
	}
	var oldExclusions []maintenanceExclusionModel
	if !was.Exclusions.IsNull() && !was.Exclusions.IsUnknown() {
		diags.Append(was.Exclusions.ElementsAs(ctx, &oldExclusions, false)...)
	}
	exclusions := flattenExclusions(w.GetMaintenanceExclusions(), oldExclusions)
	elemType := types.ObjectType{AttrTypes: exclusionAttrTypes}
	switch {
	case len(exclusions) > 0:
		list, d := types.ListValueFrom(ctx, elemType, exclusions)
		diags.Append(d...)
		m.Exclusions = list
	case !was.Exclusions.IsNull() && !was.Exclusions.IsUnknown():
		m.Exclusions = types.ListValueMust(elemType, nil) // configured as []
	default:
		m.Exclusions = types.ListNull(elemType)
	}
	obj, d := types.ObjectValueFrom(ctx, maintenancePolicyAttrTypes, m)
	diags.Append(d...)
	return obj, diags
}

// flattenExclusions orders GKE's exclusions as before (by name), new ones after them by start.
func flattenExclusions(got map[string]*containerpb.TimeWindow, old []maintenanceExclusionModel) []maintenanceExclusionModel {
	rank := map[string]int{}
	previous := map[string]maintenanceExclusionModel{}
	for i, ex := range old {
		rank[ex.Name.ValueString()] = i + 1
		previous[ex.Name.ValueString()] = ex
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		switch ra, rb := rank[a], rank[b]; {
		case ra != rb && (ra == 0 || rb == 0):
			return rb == 0
		case ra != rb:
			return ra < rb
		}
		sa, sb := got[a].GetStartTime().AsTime(), got[b].GetStartTime().AsTime()
		return sa.Before(sb) || sa.Equal(sb) && a < b
	})
	out := make([]maintenanceExclusionModel, 0, len(names))
	for _, name := range names {
		tw, was := got[name], previous[name]
		opts := tw.GetMaintenanceExclusionOptions()
		until := opts.GetEndTimeBehavior() == containerpb.MaintenanceExclusionOptions_UNTIL_END_OF_SUPPORT
		end := sameTime(tw.GetEndTime(), was.EndTime)
		if until {
			// GKE's end is then the end of support, which moves with the version: not configuration.
			end = types.StringNull()
		}
		out = append(out, maintenanceExclusionModel{
			Name: types.StringValue(name), StartTime: sameTime(tw.GetStartTime(), was.StartTime), EndTime: end,
			UntilEndOfSupport: types.BoolValue(until), Scope: types.StringValue(opts.GetScope().String()),
		})
	}
	return out
}

// sameRecurrence is GKE's recurrence of rw, or the prior text when it recurs at the same times.
func sameRecurrence(rw *containerpb.RecurringTimeWindow, prior types.String) types.String {
	got := rw.GetRecurrence()
	if !prior.IsNull() && !prior.IsUnknown() &&
		gke.SameRecurrence(prior.ValueString(), got, rw.GetWindow().GetStartTime().AsTime(), rw.GetWindow().GetEndTime().AsTime()) {
		return prior
	}
	return types.StringValue(got)
}

// sameTime is GKE's timestamp as RFC 3339 in UTC, or the prior text when it names the same instant.
func sameTime(ts *timestamppb.Timestamp, prior types.String) types.String {
	if ts == nil {
		return types.StringNull()
	}
	if t, err := time.Parse(time.RFC3339, prior.ValueString()); err == nil && t.Equal(ts.AsTime()) {
		return prior
	}
	return types.StringValue(ts.AsTime().UTC().Format(time.RFC3339Nano))
}

// updateMaintenancePolicy replaces the cluster's policy with the plan's, alone on the cluster.
// It runs after version changes, so that GKE checks exclusions against the new version
// (GoogleCloudPlatform/magic-modules#12569, for terraform-provider-google#20556).
func updateMaintenancePolicy(ctx context.Context, client *gke.Client, id gke.ClusterID, plan clusterResourceModel) diag.Diagnostics {
	policy, diags := expandMaintenancePolicy(ctx, plan.MaintenancePolicy)
	if diags.HasError() {
		return diags
	}
	err := mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
		return client.SetMaintenancePolicy(ctx, id, policy)
	})
	if err != nil {
		diags.AddAttributeError(maintenancePath, "Error Updating Maintenance Policy",
			fmt.Sprintf("updating the maintenance policy of raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
	}
	return diags
}
