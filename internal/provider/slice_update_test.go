package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// TestAccSlice_updatedInPlace changes what GKE's UpdateNodePool changes: the node version, the
// boot disk and a flex-start slice's run duration. Each slice stays the node pool it was.
func TestAccSlice_updatedInPlace(t *testing.T) {
	t.Parallel()
	const cluster = "acc-in-place"
	config := func(version string, diskGB int, diskType, runFor string) string {
		return testAccClusterConfig(cluster, `min_master_version = "1.34.1"`) + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster      = raytpu_cluster.test.id
  name         = "workers"
  generation   = "v6e"
  topology     = "2x2"
  node_version = %q
  disk_size_gb = %d
  disk_type    = %q
}
resource "raytpu_slice" "flex" {
  cluster          = raytpu_cluster.test.id
  name             = "flex"
  generation       = "v6e"
  topology         = "2x2"
  flex_start       = true
  wait_for_hosts   = false
  max_run_duration = %q
}
`, version, diskGB, diskType, runFor)
	}
	sameHosts := statecheck.CompareValue(compare.ValuesSame())
	sameFlex := statecheck.CompareValue(compare.ValuesSame())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("1.33", 100, "pd-balanced", "24h"),
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "current_node_version", knownvalue.StringExact("1.33.5-gke.1308000")),
					sameHosts.AddStateValue("raytpu_slice.test", tfjsonpath.New("hosts")),
					sameFlex.AddStateValue("raytpu_slice.flex", tfjsonpath.New("id")),
				},
			},
			{
				Config: config("1.34", 200, "hyperdisk-balanced", "48h"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("raytpu_slice.test", tfjsonpath.New("current_node_version"), knownvalue.StringExact("1.34.1-gke.1829001")),
					plancheck.ExpectResourceAction("raytpu_slice.flex", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "current_node_version", knownvalue.StringExact("1.34.1-gke.1829001")),
					at("raytpu_slice.test", "disk_size_gb", knownvalue.Int64Exact(200)),
					at("raytpu_slice.test", "disk_type", knownvalue.StringExact("hyperdisk-balanced")),
					at("raytpu_slice.flex", "max_run_duration", knownvalue.StringExact("48h")),
					sameHosts.AddStateValue("raytpu_slice.test", tfjsonpath.New("hosts")),
					sameFlex.AddStateValue("raytpu_slice.flex", tfjsonpath.New("id")),
				},
				Check: resource.ComposeTestCheckFunc(
					nodePoolIs(cluster, "workers", "1.34.1-gke.1829001", 200, "hyperdisk-balanced"),
					clusterRequests(nodePoolIDFor(cluster, "workers").Cluster, "CreateNodePool", 2),
					nodePoolCount(cluster, 3), // the system pool and the two slices, none replaced
				),
			},
		},
	})
}

// nodePoolIs checks the node version and boot disk GKE reports for a pool.
func nodePoolIs(cluster, pool, version string, diskGB int32, diskType string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := nodePoolOutOfBand(cluster, pool)
		if err != nil {
			return err
		}
		if got.GetVersion() != version || got.GetConfig().GetDiskSizeGb() != diskGB || got.GetConfig().GetDiskType() != diskType {
			return fmt.Errorf("node pool %s is version %s with a %d GB %s disk, want %s, %d GB %s", pool, got.GetVersion(),
				got.GetConfig().GetDiskSizeGb(), got.GetConfig().GetDiskType(), version, diskGB, diskType)
		}
		return nil
	}
}

// TestAccSlice_namePrefixCreateBeforeDestroy replaces a slice named by name_prefix with
// create_before_destroy: the new node pool comes up under a new name before the old one goes, and
// when the new one meets a stockout the old one keeps running.
func TestAccSlice_namePrefixCreateBeforeDestroy(t *testing.T) {
	t.Parallel()
	const cluster = "acc-name-prefix"
	config := func(topology string) string {
		return testAccSliceConfig(cluster, fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster     = raytpu_cluster.test.id
  name_prefix = "workers-"
  generation  = "v6e"
  topology    = %q
  lifecycle {
    create_before_destroy = true
  }
}
`, topology))
	}
	names := statecheck.CompareValue(compare.ValuesDiffer())
	var running string
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("2x2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("raytpu_slice.test", tfjsonpath.New("name")),
					plancheck.ExpectUnknownValue("raytpu_slice.test", tfjsonpath.New("node_selector")),
					plancheck.ExpectKnownValue("raytpu_slice.test", tfjsonpath.New("num_hosts"), knownvalue.Int64Exact(1)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "name", knownvalue.StringRegexp(regexp.MustCompile(`^workers-[0-9a-f]{8}$`))),
					names.AddStateValue("raytpu_slice.test", tfjsonpath.New("name")),
				},
			},
			{
				// Another shape: the new slice first, then the old one goes.
				Config: config("4x4"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionCreateBeforeDestroy),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					names.AddStateValue("raytpu_slice.test", tfjsonpath.New("name")),
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
				},
				Check: resource.ComposeTestCheckFunc(
					nodePoolCount(cluster, 2), // the system pool and the new slice
					func(s *terraform.State) error {
						running = s.RootModule().Resources["raytpu_slice.test"].Primary.Attributes["name"]
						return nil
					},
				),
			},
			{
				// The replacement meets a stockout: the running slice is left as it is.
				PreConfig: func() {
					if err := testEmulator.FailNextOperation(context.Background(), emulator.OperationFault{
						OperationType: "CREATE_NODE_POOL", Target: "/clusters/" + cluster + "/", Status: "RESOURCE_EXHAUSTED", Reason: "GCE_STOCKOUT",
						Message: "The zone 'projects/raytpu-acc/zones/us-central2-b' does not have enough resources available to fulfill the request.",
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config("4x8"),
				ExpectError: regexp.MustCompile(`(?s)does\s+not\s+have\s+enough\s+resources`),
			},
			{
				PreConfig: func() {
					pool, err := testGKEClient(t).GetNodePool(context.Background(), nodePoolIDFor(cluster, running))
					if err != nil || pool.GetStatus().String() != "RUNNING" {
						t.Errorf("after the failed replacement, the running slice %s is %v (%v), want RUNNING", running, pool.GetStatus(), err)
					}
				},
				Config: config("4x4"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: nodePoolCount(cluster, 2),
			},
		},
	})
	if running != "" && !strings.HasPrefix(running, "workers-") {
		t.Errorf("slice name %q", running)
	}
}
