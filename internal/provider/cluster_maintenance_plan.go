package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ resource.ResourceWithValidateConfig = (*clusterResource)(nil)

var maintenancePath = path.Root("maintenance_policy")

// ValidateConfig checks maintenance_policy against GKE's limits (internal/gke/maintenance.go has
// their sources), so that a policy GKE would refuse fails the plan, not the apply.
func (r *clusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var policy types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, maintenancePath, &policy)...)
	if resp.Diagnostics.HasError() || policy.IsNull() || policy.IsUnknown() {
		return
	}
	resp.Diagnostics.Append(validateMaintenancePolicy(ctx, policy, time.Now())...)
}

// validateMaintenancePolicy checks what the attribute validators cannot see alone: the window's
// kind and length, each exclusion against its scope's limits and the policy's counts and
// availability. now stands for the exclusions' creation date. The other GKE rule, scopes other
// than NO_UPGRADES only on clusters in a release channel, holds by construction: raytpu_cluster is
// always in one (release_channel has no "none").
func validateMaintenancePolicy(ctx context.Context, obj types.Object, now time.Time) diag.Diagnostics {
	var diags diag.Diagnostics
	var m maintenancePolicyModel
	diags.Append(obj.As(ctx, &m, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})...)
	if diags.HasError() {
		return diags
	}
	known := !m.DailyWindowStartTime.IsUnknown() && !m.RecurringWindow.IsUnknown() && !m.Exclusions.IsUnknown()
	if daily, recurring := !m.DailyWindowStartTime.IsNull(), !m.RecurringWindow.IsNull(); known && daily == recurring {
		has := "neither"
		if daily {
			has = "both"
		}
		diags.AddAttributeError(maintenancePath, "Invalid Maintenance Window",
			fmt.Sprintf("maintenance_policy has %s of daily_window_start_time and recurring_window; it needs exactly one: "+
				"daily_window_start_time = \"03:00\" (four hours a day from 03:00 UTC), or recurring_window = { start_time, "+
				"end_time, recurrence }.", has))
	}
	if !m.RecurringWindow.IsNull() && !m.RecurringWindow.IsUnknown() {
		var rw recurringWindowModel
		diags.Append(m.RecurringWindow.As(ctx, &rw, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})...)
		start, end := parseTime(rw.StartTime), parseTime(rw.EndTime)
		known = known && !rw.StartTime.IsUnknown() && !rw.EndTime.IsUnknown() && !rw.Recurrence.IsUnknown()
		if start != nil && end != nil && !end.After(*start) {
			// containerpb TimeWindow.end_time: "The end time should take place after the start time."
			diags.AddAttributeError(maintenancePath.AtName("recurring_window").AtName("end_time"), "Invalid Maintenance Window",
				fmt.Sprintf("maintenance_policy.recurring_window.end_time %s is not after start_time %s: the window's first occurrence runs from "+
					"start_time to end_time, so end_time must be later, such as four hours or more after start_time.",
					rw.EndTime.ValueString(), rw.StartTime.ValueString()))
		}
	}
	var exclusions []maintenanceExclusionModel
	if !m.Exclusions.IsNull() && !m.Exclusions.IsUnknown() {
		diags.Append(m.Exclusions.ElementsAs(ctx, &exclusions, false)...)
	}
	exclusionsPath := maintenancePath.AtName("exclusions")
	seen := map[string]bool{}
	var noUpgrades []string
	for i, ex := range exclusions {
		at := exclusionsPath.AtListIndex(i)
		if ex.Name.IsUnknown() || ex.StartTime.IsUnknown() || ex.EndTime.IsUnknown() || ex.UntilEndOfSupport.IsUnknown() || ex.Scope.IsUnknown() {
			known = false
			continue
		}
		// The configuration holds no defaults yet.
		if ex.Scope.IsNull() {
			ex.Scope = types.StringValue("NO_UPGRADES")
		}
		name := ex.Name.ValueString()
		switch {
		case name == "":
			diags.AddAttributeError(at.AtName("name"), "Invalid Maintenance Exclusion", at.AtName("name").String()+": an exclusion's name must not be empty; give it one, unique among the exclusions.")
		case seen[name]:
			// GKE keys exclusions by name (containerpb MaintenanceWindow.maintenance_exclusions).
			diags.AddAttributeError(at.AtName("name"), "Invalid Maintenance Exclusion",
				fmt.Sprintf("%s: two exclusions are named %q; GKE keys exclusions by name, so each needs its own.", at.AtName("name"), name))
		}
		seen[name] = true
		diags.Append(validateExclusion(at, ex, now)...)
		if ex.Scope.ValueString() == "NO_UPGRADES" {
			noUpgrades = append(noUpgrades, name)
		}
	}
	if len(noUpgrades) > gke.MaxNoUpgradesExclusions {
		diags.AddAttributeError(exclusionsPath, "Too Many Maintenance Exclusions",
			fmt.Sprintf("maintenance_policy.exclusions has %d NO_UPGRADES exclusions (%s); GKE allows at most %d. Merge some, or give the "+
				"others the scope NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES.", len(noUpgrades), strings.Join(noUpgrades, ", "), gke.MaxNoUpgradesExclusions))
	}
	if len(exclusions) > gke.MaxExclusions {
		diags.AddAttributeError(exclusionsPath, "Too Many Maintenance Exclusions",
			fmt.Sprintf("maintenance_policy.exclusions has %d exclusions; GKE allows at most %d in all. Remove past ones or merge some.",
				len(exclusions), gke.MaxExclusions))
	}
	if !known || diags.HasError() {
		return diags
	}
	policy, d := expandMaintenancePolicy(ctx, obj)
	diags.Append(d...)
	var short *gke.AvailabilityShortfall
	if err := gke.CheckMaintenanceAvailability(policy, now); errors.As(err, &short) {
		at, advice := maintenancePath.AtName("recurring_window"), "Lengthen the window or let it recur more often, "+
			"such as 8 hours on Saturdays and Sundays (FREQ=WEEKLY;BYDAY=SA,SU)."
		if short.Exclusions {
			at, advice = exclusionsPath, "Shorten the NO_UPGRADES exclusions or leave at least two days between them, or use "+
				"NO_MINOR_OR_NODE_UPGRADES, which keeps nodes as they are and is not held to this rule."
		}
		diags.AddAttributeError(at, "Too Little Maintenance Availability", fmt.Sprintf("%s: %s. %s", at, short, advice))
	}
	return diags
}

// validateExclusion checks one exclusion's end against its start and its scope's limits.
func validateExclusion(at path.Path, ex maintenanceExclusionModel, now time.Time) diag.Diagnostics {
	var diags diag.Diagnostics
	fail := func(attribute, summary, format string, args ...any) {
		p := at.AtName(attribute)
		diags.AddAttributeError(p, summary, p.String()+": "+fmt.Sprintf(format, args...))
	}
	name, scope, until := ex.Name.ValueString(), ex.Scope.ValueString(), ex.UntilEndOfSupport.ValueBool()
	start, end := parseTime(ex.StartTime), parseTime(ex.EndTime)
	switch {
	// terraform-provider-google's container_cluster docs: "One and only one of end_time_behavior
	// and end_time should be specified."
	case until && !ex.EndTime.IsNull():
		fail("end_time", "Invalid Maintenance Exclusion", "exclusion %q has both end_time and until_end_of_support = true; set one: "+
			"an end_time, or until_end_of_support = true to last until the end of support of the cluster's version.", name)
	case !until && ex.EndTime.IsNull():
		fail("end_time", "Invalid Maintenance Exclusion", "exclusion %q has no end_time; set end_time (RFC 3339), or "+
			"until_end_of_support = true for a NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES exclusion.", name)
	case start != nil && end != nil && !end.After(*start):
		fail("end_time", "Invalid Maintenance Exclusion", "exclusion %q ends (%s) before it starts (%s); end_time must be after start_time.",
			name, ex.EndTime.ValueString(), ex.StartTime.ValueString())
	case scope == "NO_UPGRADES" && until:
		// Inferred from "No upgrades: Cannot exceed 30 days": an exclusion without an end can.
		fail("until_end_of_support", "Invalid Maintenance Exclusion", "exclusion %q is NO_UPGRADES until the end of support, but GKE "+
			"limits NO_UPGRADES exclusions to 30 days. Give it an end_time at most 30 days after start_time, or the scope "+
			"NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES.", name)
	case scope == "NO_UPGRADES" && start != nil && end != nil && end.Sub(*start) > gke.MaxNoUpgradesExclusion:
		fail("end_time", "Maintenance Exclusion Too Long", "exclusion %q is NO_UPGRADES for %s (%s to %s); GKE allows at most 30 days. "+
			"End it by %s, or use NO_MINOR_OR_NODE_UPGRADES, which keeps nodes as they are for up to 180 days.", name,
			days(end.Sub(*start)), ex.StartTime.ValueString(), ex.EndTime.ValueString(), start.Add(gke.MaxNoUpgradesExclusion).UTC().Format(time.RFC3339))
	case scope != "NO_UPGRADES" && end != nil && end.Sub(now) > gke.MaxMinorExclusionAhead:
		fail("end_time", "Maintenance Exclusion Too Long", "exclusion %q (%s) ends %s, more than 180 days from now; GKE allows %s "+
			"exclusions to end at most 180 days after they are created (now: by %s). End it earlier, or set "+
			"until_end_of_support = true instead of end_time.", name, scope, ex.EndTime.ValueString(), scope,
			now.Add(gke.MaxMinorExclusionAhead).UTC().Format(time.RFC3339))
	}
	return diags
}

func days(d time.Duration) string {
	return fmt.Sprintf("%.4g days", d.Hours()/24)
}

func parseTime(v types.String) *time.Time {
	t, err := time.Parse(time.RFC3339, v.ValueString())
	if v.IsNull() || v.IsUnknown() || err != nil {
		return nil
	}
	return &t
}

// rfc3339Validator accepts an RFC 3339 time such as 2026-06-01T00:00:00Z, the form GKE takes
// and reports (google.protobuf.Timestamp in JSON).
type rfc3339Validator struct{}

func (rfc3339Validator) Description(context.Context) string {
	return "must be an RFC 3339 time such as 2026-06-01T00:00:00Z"
}

func (v rfc3339Validator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (rfc3339Validator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := time.Parse(time.RFC3339, req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Time",
			fmt.Sprintf("%q is not an RFC 3339 time: write it as 2026-06-01T00:00:00Z (UTC) or 2026-06-01T02:00:00+02:00.", req.ConfigValue.ValueString()))
	}
}

// dailyStartValidator accepts a daily window's start, HH:MM in UTC.
type dailyStartValidator struct{}

func (dailyStartValidator) Description(context.Context) string {
	return "must be a time of day HH:MM in UTC, such as 03:00"
}

func (v dailyStartValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (dailyStartValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := gke.ParseDailyStart(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Maintenance Window",
			fmt.Sprintf("daily_window_start_time: %s; write the start of the daily four-hour window in UTC, such as \"03:00\" or \"22:30\".", err))
	}
}

// recurrenceValidator accepts the RFC 5545 RRULEs GKE takes.
type recurrenceValidator struct{}

func (recurrenceValidator) Description(context.Context) string {
	return "must be an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU"
}

func (v recurrenceValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (recurrenceValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := gke.ParseRecurrence(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Recurrence",
			fmt.Sprintf("recurrence %q: %s. Write an RFC 5545 RRULE, such as FREQ=WEEKLY;BYDAY=SA,SU, FREQ=DAILY or "+
				"FREQ=MONTHLY;BYDAY=1SA.", req.ConfigValue.ValueString(), err))
	}
}
