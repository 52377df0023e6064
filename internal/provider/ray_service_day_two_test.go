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
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// testAccRayServiceGroups is a cluster with the slices and a RayService named llm with the
// worker groups given as HCL.
func testAccRayServiceGroups(cluster, slices, groups string) string {
	return testAccSliceConfig(cluster, slices+fmt.Sprintf(`
resource "raytpu_ray_service" "llm" {
  cluster_id                 = raytpu_cluster.test.id
  name                       = "llm"
  head                       = { ray_start_params = { "dashboard-host" = "0.0.0.0" } }
  worker_groups              = [%s]
  serve_config_v2            = %q
  old_cluster_deletion_delay = 5
}
`, groups, testServeConfig("llm")))
}

// inPlaceOnTheSameRayCluster are the checks of an update that KubeRay's hash of the
// rayClusterConfig does not see: an update whose plan keeps the RayCluster that serves.
func inPlaceOnTheSameRayCluster() resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionUpdate),
		plancheck.ExpectKnownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name"), knownvalue.StringRegexp(regexp.MustCompile(`^llm-`))),
	}}
}

// v6eSlices are v6eSlice of each key, of one topology.
func v6eSlices(topology, more string, keys ...string) string {
	var b strings.Builder
	for _, key := range keys {
		b.WriteString(v6eSlice(key, topology, more))
	}
	return b.String()
}

// settledOnOneRayCluster are the state checks of each step of a test whose RayService serves in
// sync and healthy from one RayCluster, the same at every step.
func settledOnOneRayCluster() func() []statecheck.StateCheck {
	same := statecheck.CompareValue(compare.ValuesSame())
	return func() []statecheck.StateCheck {
		return []statecheck.StateCheck{
			at(rayServiceAddress, "in_sync", knownvalue.Bool(true)),
			at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
			same.AddStateValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
		}
	}
}

// A multislice group's slices moved to others of the same count and shape: on the RayCluster that
// serves, replica by replica, in one apply, with the state saying where the workers run, then an
// empty plan. The change matrix (TestAccRayService_changeMatrix) moves a group of one slice, grows
// and shrinks a single-host group, adds and removes a spare and appends a group.
func TestAccRayService_multisliceGroupMoved(t *testing.T) {
	t.Parallel()
	cluster := "acc-serve-moves"
	slices := v6eSlices("2x4", "chips_per_host = 4", "a", "b", "c", "d")
	settled := settledOnOneRayCluster()
	tpu := func(slices string) string { return fmt.Sprintf(`{ name = "tpu", slices = [%s] }`, slices) }
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:            testAccRayServiceGroups(cluster, slices, tpu("raytpu_slice.a.id, raytpu_slice.b.id")),
				ConfigStateChecks: settled(),
				Check:             placementOnSlicesOf(rayServiceAddress, "tpu", 2, "slice-a", "slice-b"),
			},
			{
				// Moved: raytpu deletes the replicas on a and b, KubeRay makes them again on c and d.
				Config:            testAccRayServiceGroups(cluster, slices, tpu("raytpu_slice.c.id, raytpu_slice.d.id")),
				ConfigPlanChecks:  inPlaceOnTheSameRayCluster(),
				ConfigStateChecks: settled(),
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf(rayServiceAddress, "tpu", 2, "slice-c", "slice-d"),
					oneRayServiceCluster(t, cluster),
					sliceClaimedBy(cluster, "slice-a", "", ""), sliceClaimedBy(cluster, "slice-b", "", ""),
					sliceClaimedBy(cluster, "slice-c", "rayservice.llm", "tpu"),
				),
			},
		},
	})
}

// A slice the RayService left but could not release (its label update failed) stays in the
// record: the next refresh finds the RayService not in sync, and the next apply moves the replica
// off it and releases it.
func TestAccRayService_leftSliceReleasedByTheNextApply(t *testing.T) {
	t.Parallel()
	cluster := "acc-serve-left"
	slices := v6eSlice("a", "2x2", "") + v6eSlice("b", "2x2", "")
	onA := testAccRayServiceGroups(cluster, slices, `{ name = "tpu", slices = [raytpu_slice.a.id] }`)
	onB := testAccRayServiceGroups(cluster, slices, `{ name = "tpu", slices = [raytpu_slice.b.id] }`)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: onA, Check: placementOnSlicesOf(rayServiceAddress, "tpu", 1, "slice-a")},
			{
				PreConfig: func() {
					if err := testEmulator.FailNextOperation(context.Background(), emulator.OperationFault{
						OperationType: "UPGRADE_NODES", Target: "/clusters/" + cluster + "/nodePools/slice-a$", Status: "FAILED_PRECONDITION", Message: "node pool is busy",
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      onB,
				ExpectError: regexp.MustCompile(`Error Releasing Slices`),
			},
			{Config: onB, PlanOnly: true, ExpectNonEmptyPlan: true},
			{
				Config: onB,
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayServiceAddress, "in_sync", knownvalue.Bool(true)),
					at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
				},
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf(rayServiceAddress, "tpu", 1, "slice-b"),
					sliceClaimedBy(cluster, "slice-a", "", ""),
				),
			},
			{Config: onB, PlanOnly: true},
		},
	})
}

// An upgrade of a RayService whose groups have spares: the new RayCluster's workers select only
// the slices claimed for its generation, never the old one's free spare, and the spare is released
// with the old slices.
func TestAccRayService_upgradeLeavesTheOldSparesAlone(t *testing.T) {
	t.Parallel()
	cluster := "acc-serve-upgrade-spares"
	slices := v6eSlices("2x2", "", "a", "b", "c", "d", "e")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// KubeRay may place a replica on the spare already: it is claimed alike.
				Config:            testAccRayServiceGroups(cluster, slices, `{ name = "tpu", slices = [raytpu_slice.a.id, raytpu_slice.b.id], spare_slices = [raytpu_slice.e.id] }`),
				ConfigStateChecks: []statecheck.StateCheck{at(rayServiceAddress, "healthy", knownvalue.Bool(true))},
			},
			{
				Config: strings.Replace(testAccRayServiceGroups(cluster, slices, `{ name = "tpu", slices = [raytpu_slice.c.id, raytpu_slice.d.id] }`),
					"old_cluster_deletion_delay", "ray_version = \"2.55.1\"\n  old_cluster_deletion_delay", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayServiceAddress, "in_sync", knownvalue.Bool(true)),
					at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
				},
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf(rayServiceAddress, "tpu", 1, "slice-c", "slice-d"),
					oneRayServiceCluster(t, cluster),
					sliceClaimedBy(cluster, "slice-c", "rayservice.llm.1", "tpu"),
					sliceClaimedBy(cluster, "slice-e", "", ""), sliceClaimedBy(cluster, "slice-a", "", ""),
				),
			},
			{Config: strings.Replace(testAccRayServiceGroups(cluster, slices, `{ name = "tpu", slices = [raytpu_slice.c.id, raytpu_slice.d.id] }`),
				"old_cluster_deletion_delay", "ray_version = \"2.55.1\"\n  old_cluster_deletion_delay", 1), PlanOnly: true},
		},
	})
}
