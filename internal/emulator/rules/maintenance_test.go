package rules

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
)

var maintNow = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func maintDay(n int) *timestamppb.Timestamp { return timestamppb.New(maintNow.AddDate(0, 0, n)) }

const (
	noUpgrades = containerpb.MaintenanceExclusionOptions_NO_UPGRADES
	noMinor    = containerpb.MaintenanceExclusionOptions_NO_MINOR_UPGRADES
	noMinorOrN = containerpb.MaintenanceExclusionOptions_NO_MINOR_OR_NODE_UPGRADES
	availText  = "maintenance policy would go longer than 32d without 48h maintenance availability"
)

// GKE's limits on maintenance policies, on their own.
func TestMaintenanceRules(t *testing.T) {
	weekend := func() *containerpb.MaintenancePolicy {
		return rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T10:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU")
	}
	untilEOS := rulestest.Exclusion(noMinorOrN, maintDay(1), nil)
	untilEOS.GetMaintenanceExclusionOptions().EndTimeBehavior = containerpb.MaintenanceExclusionOptions_UNTIL_END_OF_SUPPORT
	many := map[string]*containerpb.TimeWindow{}
	for i := 0; i < 21; i++ {
		many[string(rune('a'+i))] = rulestest.Exclusion(noMinor, maintDay(i), maintDay(i+1))
	}
	ok := []*containerpb.MaintenancePolicy{
		nil,
		{Window: &containerpb.MaintenanceWindow{}},
		rulestest.DailyPolicy("03:00"),
		weekend(),
		// 12 hours every Sunday: 48 in any 32 days, the least GKE takes.
		rulestest.RecurringPolicy("2025-01-05T02:00:00Z", "2025-01-05T14:00:00Z", "FREQ=WEEKLY;BYDAY=SU"),
		rulestest.RecurringPolicy("2025-01-04T00:00:00Z", "2025-01-06T00:00:00Z", "FREQ=MONTHLY;BYDAY=1SA,3SA"),
		rulestest.RecurringPolicy("2025-01-04T00:00:00Z", "2025-01-06T00:00:00Z", "FREQ=WEEKLY;INTERVAL=4;BYDAY=SA"),
		// Not followed (COUNT): taken as sent.
		rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T03:00:00Z", "FREQ=WEEKLY;COUNT=3"),
		// A 30-day NO_UPGRADES exclusion leaves two free days in any 32.
		rulestest.WithExclusions(rulestest.DailyPolicy("03:00"), map[string]*containerpb.TimeWindow{"freeze": rulestest.Exclusion(noUpgrades, maintDay(1), maintDay(31))}),
		rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{
			"a": rulestest.Exclusion(noUpgrades, maintDay(1), maintDay(20)), "b": rulestest.Exclusion(noUpgrades, maintDay(22), maintDay(40)),
			"c":        rulestest.Exclusion(noUpgrades, maintDay(60), maintDay(61)),
			"campaign": rulestest.Exclusion(noMinorOrN, maintDay(0), maintDay(179)), "eos": untilEOS,
		}),
	}
	for i, p := range ok {
		if err := CheckMaintenancePolicy(p, true, maintNow); err != nil {
			t.Errorf("ok[%d]: %v", i, err)
		}
	}
	bad := []struct {
		p        *containerpb.MaintenancePolicy
		enrolled bool
		msg      string
	}{
		{rulestest.DailyPolicy("3:00"), true, `Invalid daily maintenance window start time "3:00"`},
		{rulestest.DailyPolicy("24:00"), true, "HH from 00 to 23"},
		{rulestest.RecurringPolicy("2025-01-04T10:00:00Z", "2025-01-04T02:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU"), true, "ends (2025-01-04T02:00:00Z) before it starts"},
		{rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T10:00:00Z", "FREQ=HOURLY"), true, "FREQ HOURLY is not supported"},
		{rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T10:00:00Z", "BYDAY=SA"), true, "FREQ is missing"},
		{rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T10:00:00Z", "FREQ=WEEKLY;BYDAY=1SA"), true, "ordinal only with FREQ=MONTHLY"},
		// 4 hours on weekends: 32 or 36 hours in 32 days; 8 hours a week every fifth week.
		{rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T06:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU"), true, availText},
		{rulestest.RecurringPolicy("2025-01-04T00:00:00Z", "2025-01-06T00:00:00Z", "FREQ=WEEKLY;INTERVAL=5;BYDAY=SA"), true, availText},
		// Three hours a day never makes a four-hour block.
		{rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T05:00:00Z", "FREQ=DAILY"), true, availText},
		// First Saturdays come 35 days apart at times.
		{rulestest.RecurringPolicy("2025-01-04T00:00:00Z", "2025-01-06T00:00:00Z", "FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA"), true, availText},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"long": rulestest.Exclusion(noUpgrades, maintDay(1), maintDay(32))}), true,
			`"long" with the scope NO_UPGRADES cannot exceed 30 days`},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"eos": func() *containerpb.TimeWindow {
			e := rulestest.Exclusion(noUpgrades, maintDay(1), nil)
			e.GetMaintenanceExclusionOptions().EndTimeBehavior = containerpb.MaintenanceExclusionOptions_UNTIL_END_OF_SUPPORT
			return e
		}()}), true, "cannot exceed 30 days"},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"x": rulestest.Exclusion(noUpgrades, maintDay(5), maintDay(2))}), true, `"x" ends`},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"x": rulestest.Exclusion(noUpgrades, nil, maintDay(2))}), true, "needs a start time"},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"x": rulestest.Exclusion(noMinor, maintDay(1), nil)}), true, "needs an end time"},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"late": rulestest.Exclusion(noMinor, maintDay(1), maintDay(181))}), true,
			`"late" with the scope NO_MINOR_UPGRADES cannot end more than 180 days after its creation`},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{"m": rulestest.Exclusion(noMinorOrN, maintDay(1), maintDay(2))}), false,
			"only clusters enrolled in a release channel"},
		{rulestest.WithExclusions(weekend(), map[string]*containerpb.TimeWindow{
			"a": rulestest.Exclusion(noUpgrades, maintDay(1), maintDay(2)), "b": rulestest.Exclusion(noUpgrades, maintDay(10), maintDay(11)),
			"c": rulestest.Exclusion(noUpgrades, maintDay(20), maintDay(21)), "d": rulestest.Exclusion(noUpgrades, maintDay(40), maintDay(41)),
		}), true, "at most 3 maintenance exclusions with the scope NO_UPGRADES; this policy has 4"},
		{rulestest.WithExclusions(weekend(), many), true, "at most 20 maintenance exclusions; this policy has 21"},
		// Two 30-day freezes a day apart leave one free day in 32.
		{rulestest.WithExclusions(rulestest.DailyPolicy("03:00"), map[string]*containerpb.TimeWindow{
			"a": rulestest.Exclusion(noUpgrades, maintDay(1), maintDay(31)), "b": rulestest.Exclusion(noUpgrades, maintDay(32), maintDay(62)),
		}), true, availText},
	}
	for _, tc := range bad {
		err := CheckMaintenancePolicy(tc.p, tc.enrolled, maintNow)
		if err == nil || err.HTTPStatus != http.StatusBadRequest || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("%v: %v, want 400 with %q", tc.p.GetWindow(), err, tc.msg)
		}
	}
}

// The recurrence rules the emulator follows, day by day.
func TestMaintenanceRecurrence(t *testing.T) {
	days := func(rule, first string, from string, n int) []string {
		t.Helper()
		r, err := parseRRule(rule)
		if err != nil {
			t.Fatalf("%s: %v", rule, err)
		}
		f, _ := time.Parse(time.RFC3339, first)
		fire := r.firing(f, time.Hour)
		d, _ := time.Parse("2006-01-02", from)
		var out []string
		for i := 0; i < n; i++ {
			if len(fire(d)) > 0 {
				out = append(out, d.Format("01-02"))
			}
			d = d.AddDate(0, 0, 1)
		}
		return out
	}
	for _, tc := range []struct {
		rule, first, from string
		n                 int
		want              string
	}{
		// 2026-03-07 is a Saturday.
		{"FREQ=WEEKLY;BYDAY=SA,SU", "2026-03-07T02:00:00Z", "2026-03-01", 16, "03-07 03-08 03-14 03-15"},
		{"FREQ=WEEKLY", "2026-03-07T02:00:00Z", "2026-03-01", 16, "03-07 03-14"},
		{"FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", "2026-03-02T02:00:00Z", "2026-03-01", 30, "03-02 03-16 03-30"},
		{"FREQ=DAILY;INTERVAL=3", "2026-03-02T02:00:00Z", "2026-03-01", 10, "03-02 03-05 03-08"},
		{"FREQ=DAILY;BYDAY=MO,FR", "2026-03-02T02:00:00Z", "2026-03-01", 10, "03-02 03-06 03-09"},
		{"FREQ=MONTHLY;BYDAY=1SA", "2026-03-07T02:00:00Z", "2026-03-01", 70, "03-07 04-04 05-02"},
		{"FREQ=MONTHLY;BYDAY=-1SU", "2026-03-29T02:00:00Z", "2026-03-01", 70, "03-29 04-26"},
		{"FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA,SU", "2026-03-01T02:00:00Z", "2026-03-01", 70, "03-01 04-04 05-02"},
		{"FREQ=MONTHLY;BYMONTHDAY=-1", "2026-03-31T02:00:00Z", "2026-03-01", 70, "03-31 04-30"},
		{"FREQ=MONTHLY", "2026-03-15T02:00:00Z", "2026-03-01", 70, "03-15 04-15"},
	} {
		if got := strings.Join(days(tc.rule, tc.first, tc.from, tc.n), " "); got != tc.want {
			t.Errorf("%s from %s: %s, want %s", tc.rule, tc.first, got, tc.want)
		}
	}
	for _, rule := range []string{"FREQ=MINUTELY", "FREQ=WEEKLY;BYDAY=XX", "FREQ=WEEKLY;INTERVAL=0", "FREQ=WEEKLY;FOO=1", "FREQ=MONTHLY;BYMONTHDAY=0"} {
		if _, err := parseRRule(rule); err == nil {
			t.Errorf("%s: taken, want refused", rule)
		}
	}
}
