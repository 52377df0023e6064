package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// day is an RFC 3339 time n days from now, on the hour, as GKE reports times (UTC).
func day(n int) string {
	return time.Now().UTC().Truncate(time.Hour).AddDate(0, 0, n).Format(time.RFC3339)
}

const weekendWindow = `recurring_window = {
      start_time = "2025-01-04T02:00:00Z"
      end_time   = "2025-01-04T10:00:00Z"
      recurrence = "FREQ=WEEKLY;BYDAY=SA,SU"
    }`

func maintenanceConfig(name, window string, exclusions ...string) string {
	policy := "  maintenance_policy = {\n    " + window
	if len(exclusions) > 0 {
		policy += "\n    exclusions = [" + strings.Join(exclusions, ", ") + "]"
	}
	return testAccClusterConfig(name, policy+"\n  }")
}

func exclusionHCL(name, start, end, scope string) string {
	return fmt.Sprintf(`{ name = %q, start_time = %q, end_time = %q, scope = %q }`, name, start, end, scope)
}

// gkeMaintenance reads the cluster's policy from GKE and checks it with want.
func gkeMaintenance(name string, want func(*containerpb.MaintenancePolicy) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		cluster, err := c.GetCluster(context.Background(), gke.ClusterID{Project: testProject, Location: testLocation, Name: name}, gke.Fresh)
		if err != nil {
			return err
		}
		return want(cluster.GetMaintenancePolicy())
	}
}

func exclusionNames(p *containerpb.MaintenancePolicy) string {
	var names []string
	for name, ex := range p.GetWindow().GetMaintenanceExclusions() {
		names = append(names, name+":"+ex.GetMaintenanceExclusionOptions().GetScope().String())
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// setPolicyOutOfBand replaces the cluster's policy behind Terraform's back, as gcloud would.
func setPolicyOutOfBand(t *testing.T, name string, policy *containerpb.MaintenancePolicy) {
	t.Helper()
	c := testGKEClient(t)
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	op, err := c.SetMaintenancePolicy(context.Background(), id, policy)
	if err == nil {
		err = c.WaitForOperation(context.Background(), id, op)
	}
	if err != nil {
		t.Fatalf("setting the maintenance policy of %s out of band: %v", id, err)
	}
}

func TestAccClusterMaintenance_policy(t *testing.T) {
	t.Parallel()
	name := "acc-maintenance"
	campaign := exclusionHCL("campaign", day(2), day(16), "NO_UPGRADES")
	eos := fmt.Sprintf(`{ name = "eos", start_time = %q, until_end_of_support = true, scope = "NO_MINOR_OR_NODE_UPGRADES" }`, day(1))
	created := maintenanceConfig(name, weekendWindow, eos, campaign)
	// A longer freeze, a minor-upgrade hold for the evaluation, and no more hold until the end of support.
	updated := maintenanceConfig(name, weekendWindow, exclusionHCL("campaign", day(2), day(30), "NO_UPGRADES"),
		exclusionHCL("eval", day(31), day(120), "NO_MINOR_UPGRADES"))
	daily := maintenanceConfig(name, `daily_window_start_time = "03:00"`, exclusionHCL("campaign", day(2), day(30), "NO_UPGRADES"))
	policy := tfjsonpath.New("maintenance_policy")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: created,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_cluster.test", policy, knownvalue.ObjectExact(map[string]knownvalue.Check{
						"daily_window_start_time": knownvalue.Null(),
						"recurring_window": knownvalue.ObjectExact(map[string]knownvalue.Check{
							"start_time": knownvalue.StringExact("2025-01-04T02:00:00Z"), "end_time": knownvalue.StringExact("2025-01-04T10:00:00Z"),
							"recurrence": knownvalue.StringExact("FREQ=WEEKLY;BYDAY=SA,SU"),
						}),
						"exclusions": knownvalue.ListExact([]knownvalue.Check{
							knownvalue.ObjectExact(map[string]knownvalue.Check{
								"name": knownvalue.StringExact("eos"), "start_time": knownvalue.StringExact(day(1)), "end_time": knownvalue.Null(),
								"until_end_of_support": knownvalue.Bool(true), "scope": knownvalue.StringExact("NO_MINOR_OR_NODE_UPGRADES"),
							}),
							knownvalue.ObjectExact(map[string]knownvalue.Check{
								"name": knownvalue.StringExact("campaign"), "start_time": knownvalue.StringExact(day(2)), "end_time": knownvalue.StringExact(day(16)),
								"until_end_of_support": knownvalue.Bool(false), "scope": knownvalue.StringExact("NO_UPGRADES"),
							}),
						}),
					})),
				},
				Check: gkeMaintenance(name, func(p *containerpb.MaintenancePolicy) error {
					rw := p.GetWindow().GetRecurringWindow()
					eos := p.GetWindow().GetMaintenanceExclusions()["eos"].GetMaintenanceExclusionOptions().GetEndTimeBehavior()
					if rw.GetRecurrence() != "FREQ=WEEKLY;BYDAY=SA,SU" || exclusionNames(p) != "campaign:NO_UPGRADES eos:NO_MINOR_OR_NODE_UPGRADES" ||
						eos != containerpb.MaintenanceExclusionOptions_UNTIL_END_OF_SUPPORT {
						return fmt.Errorf("GKE holds %v", p)
					}
					return nil
				}),
			},
			{
				// Nothing to do on a second plan: what GKE reports matches the configuration.
				Config:   created,
				PlanOnly: true,
			},
			clusterImportStep(name),
			{
				// Changed out of band (the resource version moves too): the plan puts it back, in place.
				PreConfig: func() {
					setPolicyOutOfBand(t, name, &containerpb.MaintenancePolicy{Window: &containerpb.MaintenanceWindow{
						Policy: &containerpb.MaintenanceWindow_DailyMaintenanceWindow{DailyMaintenanceWindow: &containerpb.DailyMaintenanceWindow{StartTime: "11:00"}},
					}})
				},
				Config: created,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				Check: gkeMaintenance(name, func(p *containerpb.MaintenancePolicy) error {
					if p.GetWindow().GetDailyMaintenanceWindow() != nil || exclusionNames(p) != "campaign:NO_UPGRADES eos:NO_MINOR_OR_NODE_UPGRADES" {
						return fmt.Errorf("GKE holds %v after the drift was undone", p)
					}
					return nil
				}),
			},
			{
				Config: updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_cluster.test", policy.AtMapKey("exclusions").AtSliceIndex(1).AtMapKey("name"), knownvalue.StringExact("eval")),
				},
				Check: gkeMaintenance(name, func(p *containerpb.MaintenancePolicy) error {
					campaign := p.GetWindow().GetMaintenanceExclusions()["campaign"]
					if exclusionNames(p) != "campaign:NO_UPGRADES eval:NO_MINOR_UPGRADES" || campaign.GetEndTime().AsTime().Format(time.RFC3339) != day(30) {
						return fmt.Errorf("GKE holds %v", p)
					}
					return nil
				}),
			},
			{
				Config: daily,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				Check: gkeMaintenance(name, func(p *containerpb.MaintenancePolicy) error {
					if p.GetWindow().GetDailyMaintenanceWindow().GetStartTime() != "03:00" || exclusionNames(p) != "campaign:NO_UPGRADES" {
						return fmt.Errorf("GKE holds %v", p)
					}
					return nil
				}),
			},
			{
				// GKE answers a daily recurrence in a policy with exclusions written out day by day:
				// the same times, so state keeps the configuration's text and the next plan is empty.
				Config: maintenanceConfig(name, `recurring_window = {
      start_time = "2025-01-04T02:00:00Z"
      end_time   = "2025-01-04T06:00:00Z"
      recurrence = "FREQ=DAILY"
    }`, exclusionHCL("campaign", day(2), day(30), "NO_UPGRADES")),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("raytpu_cluster.test",
					policy.AtMapKey("recurring_window").AtMapKey("recurrence"), knownvalue.StringExact("FREQ=DAILY"))},
				Check: gkeMaintenance(name, func(p *containerpb.MaintenancePolicy) error {
					if got := p.GetWindow().GetRecurringWindow().GetRecurrence(); got != "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU" {
						return fmt.Errorf("GKE holds recurrence %q", got)
					}
					return nil
				}),
			},
			{
				// Removing the attribute clears the cluster's policy.
				Config: testAccClusterConfig(name, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("raytpu_cluster.test", policy, knownvalue.Null())},
				Check: gkeMaintenance(name, func(p *containerpb.MaintenancePolicy) error {
					if p.GetWindow().GetPolicy() != nil || len(p.GetWindow().GetMaintenanceExclusions()) > 0 {
						return fmt.Errorf("GKE still holds %v", p)
					}
					return nil
				}),
			},
		},
	})
}

// Every GKE rule on maintenance policies fails the plan, naming the attribute and what would do.
func TestAccClusterMaintenance_planTimeErrors(t *testing.T) {
	t.Parallel()
	noUpgrades := func(name string, from, to int) string { return exclusionHCL(name, day(from), day(to), "NO_UPGRADES") }
	many := make([]string, 21)
	for i := range many {
		many[i] = exclusionHCL(fmt.Sprintf("x%d", i), day(i), day(i+1), "NO_MINOR_UPGRADES")
	}
	step := func(config, want string) resource.TestStep {
		// The CLI wraps diagnostics: a space may be a line break.
		return resource.TestStep{Config: config, PlanOnly: true, ExpectError: regexp.MustCompile("(?s)" + strings.ReplaceAll(want, " ", `\s+`))}
	}
	const name = "acc-maint-errors"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(maintenanceConfig(name, `daily_window_start_time = "03:00"`+"\n    "+weekendWindow),
				`Invalid Maintenance Window.*has both of daily_window_start_time and recurring_window; it needs exactly one`),
			step(maintenanceConfig(name, `exclusions = [`+noUpgrades("a", 1, 2)+`]`), `Invalid Maintenance Window.*has neither`),
			step(maintenanceConfig(name, `daily_window_start_time = "3:00"`), `Invalid Maintenance Window.*"3:00" is not a time of day HH:MM`),
			step(maintenanceConfig(name, strings.Replace(weekendWindow, "2025-01-04T02:00:00Z", "2025-01-04 02:00", 1)),
				`Invalid Time.*"2025-01-04 02:00" is not an RFC 3339 time`),
			step(maintenanceConfig(name, strings.Replace(weekendWindow, "T10:00", "T01:00", 1)),
				`Invalid Maintenance Window.*end_time 2025-01-04T01:00:00Z is not after start_time`),
			step(maintenanceConfig(name, strings.Replace(weekendWindow, "FREQ=WEEKLY;BYDAY=SA,SU", "FREQ=HOURLY", 1)),
				`Invalid Recurrence.*FREQ=HOURLY is not supported by GKE`),
			step(maintenanceConfig(name, strings.Replace(weekendWindow, "T10:00", "T06:00", 1)),
				`Too Little Maintenance Availability.*the recurring window leaves only 32h.*GKE requires at least 48h in any 32 days`),
			step(maintenanceConfig(name, weekendWindow, noUpgrades("long", 1, 32)),
				`Maintenance Exclusion Too Long.*"long" is NO_UPGRADES for 31 days.*at most 30 days`),
			step(maintenanceConfig(name, weekendWindow, fmt.Sprintf(`{ name = "eos", start_time = %q, until_end_of_support = true }`, day(1))),
				`Invalid Maintenance Exclusion.*"eos" is NO_UPGRADES until the end of support`),
			step(maintenanceConfig(name, weekendWindow, fmt.Sprintf(`{ name = "both", start_time = %q, end_time = %q, until_end_of_support = true, scope = "NO_MINOR_UPGRADES" }`, day(1), day(2))),
				`Invalid Maintenance Exclusion.*"both" has both end_time and until_end_of_support`),
			step(maintenanceConfig(name, weekendWindow, fmt.Sprintf(`{ name = "open", start_time = %q }`, day(1))),
				`Invalid Maintenance Exclusion.*"open" has no end_time`),
			step(maintenanceConfig(name, weekendWindow, exclusionHCL("back", day(5), day(2), "NO_UPGRADES")),
				`Invalid Maintenance Exclusion.*"back" ends .* before it starts`),
			step(maintenanceConfig(name, weekendWindow, exclusionHCL("late", day(1), day(181), "NO_MINOR_OR_NODE_UPGRADES")),
				`Maintenance Exclusion Too Long.*"late" \(NO_MINOR_OR_NODE_UPGRADES\) ends .* more than 180 days from now`),
			step(maintenanceConfig(name, weekendWindow, noUpgrades("a", 1, 2), noUpgrades("b", 10, 11), noUpgrades("c", 20, 21), noUpgrades("d", 40, 41)),
				`Too Many Maintenance Exclusions.*4 NO_UPGRADES exclusions \(a, b, c, d\); GKE allows at most 3`),
			step(maintenanceConfig(name, weekendWindow, many...), `Too Many Maintenance Exclusions.*21 exclusions; GKE allows at most 20`),
			step(maintenanceConfig(name, weekendWindow, noUpgrades("twice", 1, 2), noUpgrades("twice", 5, 6)),
				`Invalid Maintenance Exclusion.*two exclusions are named "twice"`),
			step(maintenanceConfig(name, weekendWindow, noUpgrades("first", 1, 31), noUpgrades("second", 32, 62)),
				`Too Little Maintenance Availability.*the NO_UPGRADES exclusions leave only 24h`),
			step(maintenanceConfig(name, weekendWindow, exclusionHCL("odd", day(1), day(2), "NO_PATCHES")),
				`scope value must be one of`),
		},
	})
}

// The recurrences the plan-time check follows, day by day.
func TestAccClusterMaintenance_recurrenceDays(t *testing.T) {
	for _, tc := range []struct{ rule, first, want string }{
		// 2026-03-07 is a Saturday; days are listed from March 1 to April 30.
		{"FREQ=WEEKLY;BYDAY=SA,SU", "2026-03-21T02:00:00Z", "03-21 03-22 03-28 03-29 04-04 04-05 04-11 04-12 04-18 04-19 04-25 04-26"},
		{"FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", "2026-03-02T02:00:00Z", "03-02 03-16 03-30 04-13 04-27"},
		{"FREQ=WEEKLY", "2026-04-01T02:00:00Z", "04-01 04-08 04-15 04-22 04-29"},
		{"FREQ=DAILY;INTERVAL=9", "2026-03-02T02:00:00Z", "03-02 03-11 03-20 03-29 04-07 04-16 04-25"},
		{"FREQ=MONTHLY;BYDAY=1SA", "2026-03-07T02:00:00Z", "03-07 04-04"},
		{"FREQ=MONTHLY;BYDAY=-1SU", "2026-03-29T02:00:00Z", "03-29 04-26"},
		{"FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA,SU", "2026-03-01T02:00:00Z", "03-01 04-04"},
		{"FREQ=MONTHLY;BYMONTHDAY=-1", "2026-03-31T02:00:00Z", "03-31 04-30"},
		// A window started before the span looked at shows only its occurrences inside it.
		{"FREQ=MONTHLY;BYMONTHDAY=15", "2025-01-15T02:00:00Z", "03-15 04-15"},
	} {
		r, err := gke.ParseRecurrence(tc.rule)
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		first, _ := time.Parse(time.RFC3339, tc.first)
		var got []string
		for _, s := range r.Occurrences(first, first.Add(time.Hour), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)) {
			got = append(got, s.Start.Format("01-02"))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %s, want %s", tc.rule, strings.Join(got, " "), tc.want)
		}
	}
}
