package rules

import (
	"sort"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// Maintenance policies (containerpb MaintenancePolicy): a daily or recurring window and
// exclusions, set with the cluster or by SetMaintenancePolicy. GKE's limits, from its pages
// "Maintenance windows and exclusions" (concepts/maintenance-windows-and-exclusions, section
// "Limitations for maintenance exclusions", as terraform-provider-google#15279 quotes it) and
// "Configure maintenance windows and exclusions" (how-to/maintenance-window):
//   - "No upgrades: Cannot exceed 30 days."
//   - "No minor upgrades" / "No minor or node upgrades": "Cannot end more than 180 days after the
//     exclusion creation date"; end-of-support dates are not modeled, so UNTIL_END_OF_SUPPORT is
//     taken as sent;
//   - "a maximum of three maintenance exclusions that exclude all upgrades" and "a maximum of 20
//     maintenance exclusions in total";
//   - scopes other than "No upgrades" "only for clusters that are enrolled in a release channel";
//   - "at least 48 hours of maintenance availability in a 32-day rolling window. Only contiguous
//     availability windows of at least four hours are considered", for the window and, apart,
//     for the no-upgrades exclusions. GKE's words: "maintenance policy would go longer than 32d
//     without 48h maintenance availability" (users' field notes of a 400).
//
// The other texts are the emulator's. An exclusion's creation date is taken as the request's: the
// emulator does not keep when each was first set.
const (
	maintNoUpgradesMax   = 30 * 24 * time.Hour
	maintMinorAhead      = 180 * 24 * time.Hour
	maintNoUpgradesCount = 3
	maintExclusionsCount = 20
	maintAvailability    = 48 * 60    // minutes
	maintRolling         = 32 * 1440  // minutes
	maintBlock           = 4 * 60     // minutes
	maintHorizon         = 366 * 1440 // minutes a window is followed for
)

// AdmitMaintenancePolicy checks a new cluster's policy (after its defaults) and gives it its first
// resource version, as GKE reports one on every cluster.
func AdmitMaintenancePolicy(pb *containerpb.Cluster, now time.Time) *apierr.Error {
	if err := CheckMaintenancePolicy(pb.MaintenancePolicy, InReleaseChannel(pb), now); err != nil {
		return err
	}
	pb.MaintenancePolicy = StoredMaintenancePolicy(pb.MaintenancePolicy)
	return nil
}

// StoredMaintenancePolicy is the policy as GKE reports it: a new resource version, an empty window
// object when none, and a daily window's duration filled in ("Output only", "automatically
// chosen"; four hours, "The maintenance window starts each day at the specified START_TIME and
// lasts 4 hours", how-to/maintenance-window). A recurring window of FREQ=DAILY in a policy with
// exclusions reads back as the same days written out, FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU: "This
// diff gets applied in the cloud console if you specify "FREQ=DAILY" in your config and add a
// maintenance exclusion" (terraform-provider-google resource_container_cluster.go,
// rfc5545RecurrenceDiffSuppress). INFERRED: that GKE itself rewrites it whenever such a policy is
// set, not only through the console.
func StoredMaintenancePolicy(p *containerpb.MaintenancePolicy) *containerpb.MaintenancePolicy {
	out, _ := proto.Clone(p).(*containerpb.MaintenancePolicy)
	if out == nil {
		out = &containerpb.MaintenancePolicy{}
	}
	if out.Window == nil {
		out.Window = &containerpb.MaintenanceWindow{}
	}
	if d := out.Window.GetDailyMaintenanceWindow(); d != nil {
		d.Duration = "PT4H0M0S"
	}
	if r := out.Window.GetRecurringWindow(); r != nil && r.Recurrence == "FREQ=DAILY" && len(out.Window.MaintenanceExclusions) > 0 {
		r.Recurrence = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU"
	}
	out.ResourceVersion = RandomHex(4)
	return out
}

func InReleaseChannel(pb *containerpb.Cluster) bool {
	return pb.GetReleaseChannel().GetChannel() != containerpb.ReleaseChannel_UNSPECIFIED //nolint:staticcheck // the API's "no channel"
}

// CheckMaintenancePolicy applies GKE's rules to a policy of a cluster in a release channel or not
// (enrolled), set at now.
func CheckMaintenancePolicy(p *containerpb.MaintenancePolicy, enrolled bool, now time.Time) *apierr.Error {
	w := p.GetWindow()
	var windowMinutes func(day time.Time) [][2]int
	if d := w.GetDailyMaintenanceWindow(); d != nil {
		if _, err := time.Parse("15:04", d.GetStartTime()); err != nil || len(d.GetStartTime()) != 5 {
			return apierr.Invalid("Invalid daily maintenance window start time %q: it must be HH:MM in GMT, HH from 00 to 23 and MM from 00 to 59.", d.GetStartTime())
		}
	}
	if r := w.GetRecurringWindow(); r != nil {
		start, end := r.GetWindow().GetStartTime(), r.GetWindow().GetEndTime()
		if start == nil || end == nil {
			return apierr.Invalid("A recurring maintenance window needs a start time and an end time.")
		}
		if !end.AsTime().After(start.AsTime()) {
			return apierr.Invalid("The recurring maintenance window ends (%s) before it starts (%s).", rfc(end.AsTime()), rfc(start.AsTime()))
		}
		rule, err := parseRRule(r.GetRecurrence())
		if err != nil {
			return apierr.Invalid("Invalid maintenance window recurrence %q: %s.", r.GetRecurrence(), err)
		}
		windowMinutes = rule.firing(start.AsTime().UTC(), end.AsTime().Sub(start.AsTime()))
	}
	exclusions := w.GetMaintenanceExclusions()
	if len(exclusions) > maintExclusionsCount {
		return apierr.Invalid("A cluster can have at most %d maintenance exclusions; this policy has %d.", maintExclusionsCount, len(exclusions))
	}
	names := make([]string, 0, len(exclusions))
	for name := range exclusions {
		names = append(names, name)
	}
	sort.Strings(names)
	var noUpgrades [][2]time.Time
	for _, name := range names {
		ex := exclusions[name]
		opts := ex.GetMaintenanceExclusionOptions()
		scope, untilEOS := opts.GetScope(), opts.GetEndTimeBehavior() == containerpb.MaintenanceExclusionOptions_UNTIL_END_OF_SUPPORT
		start, end := ex.GetStartTime(), ex.GetEndTime()
		switch {
		case start == nil:
			return apierr.Invalid("Maintenance exclusion %q needs a start time.", name)
		case end == nil && !untilEOS:
			return apierr.Invalid("Maintenance exclusion %q needs an end time, or the end time behavior UNTIL_END_OF_SUPPORT.", name)
		case end != nil && !end.AsTime().After(start.AsTime()):
			return apierr.Invalid("Maintenance exclusion %q ends (%s) before it starts (%s).", name, rfc(end.AsTime()), rfc(start.AsTime()))
		case scope != containerpb.MaintenanceExclusionOptions_NO_UPGRADES && !enrolled:
			return apierr.Invalid("Maintenance exclusion %q has the scope %s, which only clusters enrolled in a release channel can use.", name, scope)
		// Until the end of support is longer than 30 days too (inferred).
		case scope == containerpb.MaintenanceExclusionOptions_NO_UPGRADES && (untilEOS || end.AsTime().Sub(start.AsTime()) > maintNoUpgradesMax):
			return apierr.Invalid("Maintenance exclusion %q with the scope NO_UPGRADES cannot exceed 30 days.", name)
		case scope != containerpb.MaintenanceExclusionOptions_NO_UPGRADES && end != nil && end.AsTime().Sub(now) > maintMinorAhead:
			return apierr.Invalid("Maintenance exclusion %q with the scope %s cannot end more than 180 days after its creation (%s); it ends %s.",
				name, scope, rfc(now), rfc(end.AsTime()))
		}
		if scope == containerpb.MaintenanceExclusionOptions_NO_UPGRADES {
			noUpgrades = append(noUpgrades, [2]time.Time{start.AsTime(), end.AsTime()})
		}
	}
	if len(noUpgrades) > maintNoUpgradesCount {
		return apierr.Invalid("A cluster can have at most %d maintenance exclusions with the scope NO_UPGRADES; this policy has %d.", maintNoUpgradesCount, len(noUpgrades))
	}
	if windowMinutes != nil && !windowLeavesAvailability(w.GetRecurringWindow().GetWindow().GetStartTime().AsTime(), now, windowMinutes) {
		return apierr.Invalid("maintenance policy would go longer than 32d without 48h maintenance availability")
	}
	if !exclusionsLeaveAvailability(noUpgrades, now) {
		return apierr.Invalid("maintenance policy would go longer than 32d without 48h maintenance availability")
	}
	return nil
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// minuteLine marks, minute by minute from origin, when maintenance may happen.
type minuteLine struct {
	origin time.Time
	open   []bool
}

func newMinuteLine(origin time.Time, minutes int, open bool) *minuteLine {
	l := &minuteLine{origin: origin.UTC().Truncate(time.Minute), open: make([]bool, minutes)}
	for i := range l.open {
		l.open[i] = open
	}
	return l
}

// set marks [from, to) open or closed, rounded to whole minutes inside it.
func (l *minuteLine) set(from, to time.Time, open bool) {
	a := int((from.Sub(l.origin) + time.Minute - 1) / time.Minute)
	b := int(to.Sub(l.origin) / time.Minute)
	for i := max(a, 0); i < min(b, len(l.open)); i++ {
		l.open[i] = open
	}
}

// leastRolling is the least open time, counting only runs of at least maintBlock minutes, in any
// maintRolling minutes starting in [from, to) minutes of the line.
func (l *minuteLine) leastRolling(from, to int) int {
	counted := make([]int, len(l.open)+1) // prefix sums of counted minutes
	for i := 0; i < len(l.open); {
		j := i
		for j < len(l.open) && l.open[j] == l.open[i] {
			j++
		}
		for k := i; k < j; k++ {
			counted[k+1] = counted[k]
			if l.open[i] && j-i >= maintBlock {
				counted[k+1]++
			}
		}
		i = j
	}
	least := -1
	for s := from; s < to && s+maintRolling <= len(l.open); s++ {
		if got := counted[s+maintRolling] - counted[s]; least < 0 || got < least {
			least = got
		}
	}
	return least
}

// windowLeavesAvailability follows the recurring window for a year from now (or its first
// occurrence, before which it has none).
func windowLeavesAvailability(first, now time.Time, minutes func(day time.Time) [][2]int) bool {
	from := now
	if first.After(from) {
		from = first
	}
	origin := from.Add(-maintRolling * time.Minute).UTC().Truncate(24 * time.Hour)
	line := newMinuteLine(origin, maintHorizon+3*maintRolling, false)
	for day := origin.AddDate(0, 0, -maintRolling/1440); day.Before(origin.Add(time.Duration(len(line.open)) * time.Minute)); day = day.AddDate(0, 0, 1) {
		for _, span := range minutes(day) {
			line.set(day.Add(time.Duration(span[0])*time.Minute), day.Add(time.Duration(span[1])*time.Minute), true)
		}
	}
	start := int(from.Sub(line.origin) / time.Minute)
	return line.leastRolling(start, start+maintHorizon) >= maintAvailability
}

// exclusionsLeaveAvailability follows the time the no-upgrades exclusions leave free, from now (or
// the first exclusion) to a month past the last.
func exclusionsLeaveAvailability(spans [][2]time.Time, now time.Time) bool {
	lo, hi := now, now
	for _, s := range spans {
		if s[0].Before(lo) {
			lo = s[0]
		}
		if s[1].After(hi) {
			hi = s[1]
		}
	}
	origin := lo.Add(-maintRolling * time.Minute)
	span := int(hi.Sub(lo)/time.Minute) + 31*1440
	line := newMinuteLine(origin, span+3*maintRolling, true)
	for _, s := range spans {
		line.set(s[0], s[1], false)
	}
	start := int(lo.Sub(line.origin) / time.Minute)
	return line.leastRolling(start, start+span) >= maintAvailability
}
