package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// setZoneCapacity sets a zone's stock of one kind of TPU capacity until the test ends.
func setZoneCapacity(t *testing.T, zone, generation, kind string, chips int) {
	t.Helper()
	set := func(chips int) error {
		return testEmulator.SetCapacity(context.Background(), emulator.Capacity{Zone: zone, Generation: generation, Type: kind, Chips: chips})
	}
	if err := set(chips); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set(-1) })
}

// clusterRequests checks that the emulator answered want requests of rpc on cluster since the
// check was made, as the test case that holds it was: a test run again in the same process
// (-count) counts its own requests only.
func clusterRequests(cluster gke.ClusterID, rpc string, want int) resource.TestCheckFunc {
	since := time.Now()
	return func(*terraform.State) error {
		n, err := requestsAnswered(since, rpc, http.StatusOK, func(p string) bool { return strings.Contains(p, "/clusters/"+cluster.Name+"/") })
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("the emulator answered %d %s requests on %s, want %d", n, rpc, cluster, want)
		}
		return nil
	}
}

// requestsAnswered counts the rpc requests the emulator answered with status since then whose path
// matches.
func requestsAnswered(since time.Time, rpc string, status int, matches func(path string) bool) (int, error) {
	records, err := testEmulator.Requests(context.Background())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range records {
		if !r.Time.Before(since) && r.RPC == rpc && r.Status == status && matches(r.Path) {
			n++
		}
	}
	return n, nil
}

func capacityUsed(zone, kind string, attempt int64) knownvalue.Check {
	return knownvalue.ObjectPartial(map[string]knownvalue.Check{
		"zone": knownvalue.StringExact(zone), "type": knownvalue.StringExact(kind), "attempt": knownvalue.Int64Exact(attempt),
	})
}

// poolIn checks that GKE holds the slice's node pool in exactly one zone, with its instance
// groups there only.
func poolIn(id gke.NodePoolID, zone string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		pool, err := c.GetNodePool(context.Background(), id)
		if err != nil {
			return err
		}
		if l := pool.GetLocations(); len(l) != 1 || l[0] != zone {
			return fmt.Errorf("node pool %s is in %v, want [%s]", id, l, zone)
		}
		for _, u := range pool.GetInstanceGroupUrls() {
			if !strings.Contains(u, "/zones/"+zone+"/") {
				return fmt.Errorf("node pool %s has instance group %s outside %s", id, u, zone)
			}
		}
		return nil
	}
}

// A slice that stocks out in its zone comes up on its fallback in one apply, with nothing left
// where it failed; changing the list around where it runs does not replace it; running out of
// every choice lists each attempt and leaves nothing.
func TestAccSlice_fallback(t *testing.T) {
	const region, first, second = "us-central2", "us-central2-c", "us-central2-d"
	setZoneCapacity(t, first, "v5e", emulator.CapacityOnDemand, 0)
	setZoneCapacity(t, first, "v5e", emulator.CapacitySpot, 0)
	id := gke.NodePoolID{Cluster: gke.ClusterID{Project: testProject, Location: region, Name: "acc-fallback"}, Name: "train"}
	config := func(zone, fallback string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "test" {
  name                = "acc-fallback"
  location            = %q
  deletion_protection = false
}
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "train"
  generation = "v5e"
  topology   = "4x4"
  zone       = %q
  fallback   = [%s]
}
`, region, zone, fallback)
	}
	address := "raytpu_slice.test"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(first, `{ capacity = "spot" }`),
				ExpectError: regexp.MustCompile(`(?s)none of the slice's capacity choices gave it its TPUs \(2 tried\):\s+1\.\s+on-demand\s+in\s+` +
					first + `:\s+stockout:.*2\.\s+spot\s+in\s+` + first + `:\s+stockout:.*Nothing\s+was\s+left\s+behind`),
			},
			{
				Config: config(first, fmt.Sprintf(`{ capacity = "spot" }, { zone = %q }`, second)),
				// Five requests in all: two in step 1, three here; each failed one's pool deleted.
				Check: resource.ComposeTestCheckFunc(poolIn(id, second), clusterRequests(id.Cluster, "CreateNodePool", 5),
					clusterRequests(id.Cluster, "DeleteNodePool", 4)),
				ConfigStateChecks: []statecheck.StateCheck{
					at(address, "capacity_used", capacityUsed(second, "on-demand", 3)),
					at(address, "zone", knownvalue.StringExact(first)),
					at(address, "healthy", knownvalue.Bool(true)),
				},
			},
			{
				// The spot entry goes, a new one comes: the slice stays where it runs.
				Config: config(first, fmt.Sprintf(`{ zone = %q }, { zone = %q, capacity = "spot" }`, second, second)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("capacity_used"), capacityUsed(second, "on-demand", 2)),
				}},
			},
			{
				// Its own settings now name where it runs: still the same slice.
				Config: config(second, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at(address, "capacity_used", capacityUsed(second, "on-demand", 1))},
			},
			{
				// Where it runs is no longer allowed: replaced.
				PreConfig: func() { setZoneCapacity(t, first, "v5e", emulator.CapacityOnDemand, -1) },
				Config:    config(first, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check:             poolIn(id, first),
				ConfigStateChecks: []statecheck.StateCheck{at(address, "capacity_used", capacityUsed(first, "on-demand", 1))},
			},
		},
	})
}

// Each way of obtaining capacity applies, plans empty, imports and destroys: queued and flex-start
// slices come up empty, an autoscaled one whole and stays healthy scaled to zero, reservations by
// name (shared, one block) and any, and a tpu7x slice gets a workload policy of its own.
func TestAccSlice_capacityKinds(t *testing.T) {
	t.Parallel()
	const cluster = "acc-kinds"
	ctx := context.Background()
	for _, r := range []emulator.Reservation{
		{Project: "shared-capacity", Zone: testLocation, Name: "kinds-v5p", Generation: "v5p", MachineType: "ct5p-hightpu-4t", Chips: 8, Blocks: []string{"block-1"}, SpecificOnly: true},
		{Project: testProject, Zone: testLocation, Name: "kinds-v5e", Generation: "v5e", Chips: 8},
	} {
		if err := testEmulator.CreateReservation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	slices := `
resource "raytpu_slice" "queued" {
  cluster             = raytpu_cluster.test.id
  name                = "queued"
  generation          = "v6e"
  topology            = "4x4"
  queued_provisioning = true
}
resource "raytpu_slice" "flex" {
  cluster          = raytpu_cluster.test.id
  name             = "flex"
  generation       = "v6e"
  topology         = "2x4"
  chips_per_host   = 4
  flex_start       = true
  max_run_duration = "72h"
  auto_repair      = false
}
resource "raytpu_slice" "elastic" {
  cluster     = raytpu_cluster.test.id
  name        = "elastic"
  generation  = "v5p"
  topology    = "2x2x4"
  autoscaling = true
}
resource "raytpu_slice" "shared" {
  cluster     = raytpu_cluster.test.id
  name        = "shared"
  generation  = "v5p"
  topology    = "2x2x2"
  reservation = { name = "kinds-v5p", project = "shared-capacity", block = "block-1" }
}
resource "raytpu_slice" "any" {
  cluster     = raytpu_cluster.test.id
  name        = "any"
  generation  = "v5e"
  topology    = "2x4"
  reservation = { consume = "any" }
  AUTOSCALING
}
resource "raytpu_slice" "ironwood" {
  cluster    = raytpu_cluster.test.id
  name       = "ironwood"
  generation = "tpu7x"
  topology   = "2x2x2"
}
`
	config := func(anyAutoscaling string) string {
		return testAccSliceConfig(cluster, strings.Replace(slices, "AUTOSCALING", anyAutoscaling, 1))
	}
	ironwood := nodePoolIDFor(cluster, "ironwood")
	policy := workloadPolicyName(ironwood)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             workloadPolicyAbsent(policy),
		Steps: []resource.TestStep{
			{
				Config: config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.queued", "capacity_used", capacityUsed(testLocation, "queued", 1)),
					at("raytpu_slice.queued", "flex_start", knownvalue.Bool(true)),
					at("raytpu_slice.queued", "autoscaling", knownvalue.Bool(true)),
					at("raytpu_slice.queued", "hosts", knownvalue.ListSizeExact(0)),
					at("raytpu_slice.queued", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.flex", "capacity_used", capacityUsed(testLocation, "flex-start", 1)),
					at("raytpu_slice.flex", "num_hosts", knownvalue.Int64Exact(2)),
					at("raytpu_slice.flex", "hosts", knownvalue.ListSizeExact(0)),
					at("raytpu_slice.flex", "auto_repair", knownvalue.Bool(false)),
					at("raytpu_slice.elastic", "ready_hosts", knownvalue.Int64Exact(4)),
					at("raytpu_slice.elastic", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.shared", "capacity_used", knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"type": knownvalue.StringExact("reservation"), "reservation": knownvalue.StringExact("projects/shared-capacity/reservations/kinds-v5p/reservationBlocks/block-1"),
					})),
					at("raytpu_slice.any", "capacity_used", knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"reservation": knownvalue.StringExact("any reservation"),
					})),
					at("raytpu_slice.ironwood", "placement_policy_name", knownvalue.StringExact(policy)),
					at("raytpu_slice.ironwood", "placement_type", knownvalue.StringExact("WORKLOAD_POLICY")),
					at("raytpu_slice.ironwood", "healthy", knownvalue.Bool(true)),
				},
				Check: workloadPolicyIs(policy, "2x2x2"),
			},
			{
				// The autoscaler scales the elastic slice to zero: it is still healthy.
				PreConfig: func() {
					if err := testEmulator.ScalePool(ctx, emulator.PoolScale{Cluster: ironwood.Cluster.String(), NodePool: "elastic", Nodes: 0}); err != nil {
						t.Fatal(err)
					}
				},
				RefreshState: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("raytpu_slice.elastic", "hosts.#", "0"),
					resource.TestCheckResourceAttr("raytpu_slice.elastic", "healthy", "true"),
					resource.TestCheckResourceAttr("raytpu_slice.elastic", "num_hosts", "4"),
				),
			},
			{
				// And back to all of its hosts, as a pending Ray worker group would bring it.
				PreConfig: func() {
					if err := testEmulator.ScalePool(ctx, emulator.PoolScale{Cluster: ironwood.Cluster.String(), NodePool: "elastic", Nodes: 4}); err != nil {
						t.Fatal(err)
					}
				},
				RefreshState: true,
				Check:        resource.TestCheckResourceAttr("raytpu_slice.elastic", "ready_hosts", "4"),
			},
			{
				// Autoscaling is switched on in place.
				Config: config("autoscaling = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.any", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at("raytpu_slice.any", "autoscaling", knownvalue.Bool(true))},
			},
			{
				// A release channel keeps on-demand nodes repaired.
				Config: config(`autoscaling = true
  auto_repair = false`),
				ExpectError: regexp.MustCompile(`(?s)Release Channel Requires Auto-Upgrade and Auto-Repair.*REGULAR`),
			},
			{ResourceName: "raytpu_slice.queued", ImportState: true, ImportStateVerify: true, Config: config("autoscaling = true")},
			{ResourceName: "raytpu_slice.flex", ImportState: true, ImportStateVerify: true, Config: config("autoscaling = true")},
			{ResourceName: "raytpu_slice.elastic", ImportState: true, ImportStateVerify: true, Config: config("autoscaling = true")},
			{ResourceName: "raytpu_slice.shared", ImportState: true, ImportStateVerify: true, Config: config("autoscaling = true")},
			{ResourceName: "raytpu_slice.any", ImportState: true, ImportStateVerify: true, Config: config("autoscaling = true")},
			{ResourceName: "raytpu_slice.ironwood", ImportState: true, ImportStateVerify: true, Config: config("autoscaling = true")},
		},
	})
}

// workloadPolicyIs checks the workload policy made for a tpu7x slice.
func workloadPolicyIs(name, topology string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		p, err := c.GetWorkloadPolicy(context.Background(), testProject, gke.Region(testLocation), name)
		if err != nil {
			return err
		}
		if p.Type != gke.WorkloadPolicyType || p.AcceleratorTopology != topology {
			return fmt.Errorf("workload policy %s is %s %s, want %s %s", name, p.Type, p.AcceleratorTopology, gke.WorkloadPolicyType, topology)
		}
		return nil
	}
}

func workloadPolicyAbsent(name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.GetWorkloadPolicy(context.Background(), testProject, gke.Region(testLocation), name); !gke.IsNotFound(err) {
			return fmt.Errorf("workload policy %s: got %v, want it deleted with its slice", name, err)
		}
		return nil
	}
}

// A named workload policy is checked before the node pool is requested.
func TestAccSlice_workloadPolicyChecked(t *testing.T) {
	t.Parallel()
	const cluster = "acc-policy-check"
	createWorkloadPolicyOutOfBand(t, "policy-2x2x4", "2x2x4")
	slice := func(policy string) string {
		return fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster               = raytpu_cluster.test.id
  name                  = "ironwood"
  generation            = "tpu7x"
  topology              = "2x2x2"
  placement_policy_name = %q
}
`, policy)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccSliceConfig(cluster, slice("policy-2x2x4")),
				ExpectError: regexp.MustCompile(`(?s)Workload Policy Does Not Fit the Slice.*"2x2x4".*accelerator\s+topology\s+2x2x2`),
			},
			{
				Config:      testAccSliceConfig(cluster, slice("no-such-policy")),
				ExpectError: regexp.MustCompile(`(?s)Workload Policy Not Found.*no-such-policy`),
			},
			{Config: testAccSliceConfig(cluster, ""), Check: nodePoolAbsent(cluster, "ironwood")},
		},
	})
}

func TestAccSlice_capacityPlanTimeErrors(t *testing.T) {
	t.Parallel()
	cluster := fmt.Sprintf("projects/%s/locations/%s/clusters/none", testProject, testLocation)
	step := func(body, pattern string) resource.TestStep {
		return resource.TestStep{
			Config: testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = %q
  name       = "s"
  generation = "v6e"
  topology   = "4x4"
%s
}
`, cluster, body),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(pattern, " ", `\s+`)),
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(`flex_start = true
  spot = true`, `Conflicting Capacity Options.*spot.*flex_start/queued_provisioning.*fallback`),
			step(`queued_provisioning = true
  flex_start = false`, `Queued Provisioning Needs Flex-Start.*doesn't support TPUs`),
			step(`queued_provisioning = true
  reservation = { name = "r" }`, `Queued Provisioning Takes No Reservation.*"Queued_provisioning requires reservation affinity to be set to none"`),
			step(`flex_start = true
  autoscaling = false`, `Flex-Start Slices Autoscale.*require autoscaling enabled`),
			step(`flex_start = true
  max_run_duration = "200h"`, `Run Duration Too Long.*at most seven days \(168h\)`),
			step(`max_run_duration = "24h"`, `Run Duration Without Flex-Start`),
			step(`reservation = { consume = "any", name = "r" }`, `Reservation Named With consume = "any"`),
			step(`reservation = { project = "p" }`, `Missing Reservation Name`),
			step(`reservation = { consume = "some" }`, `consume.*value must be one of`),
			step(`flex_start = true
  fallback = [{ capacity = "spot" }]`, `Fallback Never Tried.*flex-start or queued slice`),
			step(`fallback = [{ capacity = "flex-start" }, { capacity = "spot" }]`, `Fallback Never Tried.*make it the last`),
			step(`fallback = [{ capacity = "on-demand" }]`, `Duplicate Capacity Choice.*on-demand in the slice's zone`),
			step(`fallback = [{ capacity = "reservation" }]`, `Missing Reservation.*no reservation of its own`),
			step(`fallback = [{ capacity = "spot", reservation = { name = "r" } }]`, `Reservation Not Applicable`),
			step(`fallback = [{ zone = "europe-west4-a" }]`, `Zone Outside the Cluster's Region.*europe-west4-a is not in us-central2`),
			step(`node_version = "1.31.2-gke.1115000"
  fallback = [{ capacity = "flex-start" }]`, `GKE Version Too Old for Flex-Start.*flex-start fallback entry`),
		},
	})
}
