package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// movedCluster is the cluster of TestAccSlice_movedFromGoogle.
const movedCluster = "acc-moved"

// googlePoolsConfig declares, with the google provider, the pools of movedCluster that the
// configuration still keeps there: a v6e 4x4 slice (tpu) and a CPU pool (cpu).
func googlePoolsConfig(tpu, cpu bool, resources string) string {
	var google strings.Builder
	if tpu {
		fmt.Fprintf(&google, `
resource "google_container_node_pool" "tpu" {
  project    = %q
  location   = %q
  cluster    = %q
  name       = "moved-v6e"
  node_count = 4
  node_config {
    machine_type = "ct6e-standard-4t"
  }
  placement_policy {
    type         = "COMPACT"
    tpu_topology = "4x4"
  }
  management {
    auto_repair  = true
    auto_upgrade = true
  }
}
`, testProject, testLocation, movedCluster)
	}
	if cpu {
		fmt.Fprintf(&google, `
resource "google_container_node_pool" "cpu" {
  project    = %q
  location   = %q
  cluster    = %q
  name       = "moved-cpu"
  node_count = 1
  node_config {
    machine_type = "e2-standard-4"
  }
}
`, testProject, testLocation, movedCluster)
	}
	return testAccSliceConfig(movedCluster, google.String()+resources)
}

// TestAccSlice_movedFromGoogle moves a TPU node pool from google_container_node_pool into
// raytpu_slice: the pool is not recreated, Read fills in the slice, and the plan holds only the
// label the configuration changes. Moving a CPU pool fails at plan, naming why.
func TestAccSlice_movedFromGoogle(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.MovedFromGoogle)
	const cluster = movedCluster
	id := nodePoolIDFor(cluster, "moved-v6e")
	slice := `
moved {
  from = google_container_node_pool.tpu
  to   = raytpu_slice.tpu
}
resource "raytpu_slice" "tpu" {
  cluster    = raytpu_cluster.test.id
  name       = "moved-v6e"
  generation = "v6e"
  topology   = "4x4"
  labels     = { team = "ray" }
}
`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccMoveProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccSliceConfig(cluster, "")},
			{
				// GKE holds the pools the google provider created.
				PreConfig: func() {
					createPoolOutOfBand(t, cluster, &containerpb.NodePool{
						Name: "moved-v6e", InitialNodeCount: 4,
						Config:          &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
						PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
						Management:      &containerpb.NodeManagement{AutoRepair: true, AutoUpgrade: true},
					})
					createPoolOutOfBand(t, cluster, &containerpb.NodePool{
						Name: "moved-cpu", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"},
					})
				},
				Config: googlePoolsConfig(true, true, ""),
			},
			{
				// The CPU pool's google resource leaves the configuration with the move.
				Config: googlePoolsConfig(true, false, `
moved {
  from = google_container_node_pool.cpu
  to   = raytpu_slice.cpu
}
resource "raytpu_slice" "cpu" {
  cluster    = raytpu_cluster.test.id
  name       = "moved-cpu"
  generation = "v6e"
  topology   = "2x2"
}
`),
				ExpectError: regexp.MustCompile(`(?s)Node Pool Is No raytpu_slice.*moved-cpu.*machine\s+type\s+"e2-standard-4"\s+is\s+not\s+a\s+TPU\s+machine\s+type`),
			},
			{
				Config: googlePoolsConfig(false, true, slice),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.tpu", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("raytpu_slice.tpu", tfjsonpath.New("id"), knownvalue.StringExact(id.String())),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.tpu", "accelerator_type", knownvalue.StringExact("v6e-16")),
					at("raytpu_slice.tpu", "num_hosts", knownvalue.Int64Exact(4)),
					at("raytpu_slice.tpu", "hosts", knownvalue.ListSizeExact(4)),
					at("raytpu_slice.tpu", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.tpu", "labels", knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("ray")})),
				},
				// The two pools created out of band, and no other: the slice was taken over, not recreated.
				Check: resource.ComposeTestCheckFunc(
					clusterRequests(id.Cluster, "CreateNodePool", 2),
					clusterRequests(id.Cluster, "DeleteNodePool", 0),
				),
			},
			{
				Config:           googlePoolsConfig(false, true, slice),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
