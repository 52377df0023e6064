package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// testAccSparesConfig is a multislice group on two v6e 4x4 slices with a third as its spare, and a
// single-host slice of another shape beside them.
func testAccSparesConfig(cluster string, replaceUnhealthy bool, spares string) string {
	more := fmt.Sprintf("replace_unhealthy = %t", replaceUnhealthy)
	return testAccSliceConfig(cluster, v6eSlice("a", "4x4", more)+v6eSlice("b", "4x4", more)+v6eSlice("c", "4x4", more)+
		v6eSlice("small", "2x2", "")+fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = raytpu_cluster.test.id
  name          = "standby"
  worker_groups = [
    { name = "multi", slices = [raytpu_slice.a.id, raytpu_slice.b.id], spare_slices = %s },
  ]
}
`, spares))
}

func groupSlicesAre(state string, active, spare, failed int) knownvalue.Check {
	return knownvalue.MapExact(map[string]knownvalue.Check{"multi": knownvalue.ObjectExact(map[string]knownvalue.Check{
		"state": knownvalue.StringExact(state), "active": knownvalue.ListSizeExact(active),
		"spare": knownvalue.ListSizeExact(spare), "failed": knownvalue.ListSizeExact(failed),
	})})
}

// A multislice group with a warm standby slice survives a failed host with no apply: KubeRay
// recreates the replica whole and it starts on the spare; the next apply replaces the failed slice,
// which becomes the spare.
func TestAccRayCluster_spareSlicesSurviveAFailedHost(t *testing.T) {
	t.Parallel()
	cluster := "acc-spares"
	clusterID := fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, cluster)
	var failed string
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: testAccSparesConfig(cluster, false, "[raytpu_slice.c.id]"),
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayClusterAddress, "healthy", knownvalue.Bool(true)),
					at(rayClusterAddress, "worker_group_slices", groupSlicesAre("Healthy", 2, 1, 0)),
					at(rayClusterAddress, "worker_group_settings", knownvalue.MapPartial(map[string]knownvalue.Check{
						"multi": knownvalue.ObjectPartial(map[string]knownvalue.Check{"num_slices": knownvalue.Int64Exact(2)}),
					})),
				},
				Check: placementOnSlices("multi", 4, "slice-", "slice-"),
			},
			{
				// A host of an active slice fails: the replica runs again on the spare, whole, with
				// no apply in between.
				PreConfig: func() {
					failed = failActiveSlice(t, clusterID, cluster)
				},
				RefreshState: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(rayClusterAddress, "healthy", "true"),
					resource.TestCheckResourceAttr(rayClusterAddress, "worker_group_slices.multi.state", "Degraded"),
					resource.TestCheckResourceAttr(rayClusterAddress, "worker_group_slices.multi.active.#", "2"),
					resource.TestCheckResourceAttr(rayClusterAddress, "worker_group_slices.multi.spare.#", "0"),
					func(s *terraform.State) error {
						return resource.TestCheckResourceAttr(rayClusterAddress, "worker_group_slices.multi.failed.0", failed)(s)
					},
					placementOnSlices("multi", 4, "slice-", "slice-"),
				),
			},
			{
				Config:      testAccSparesConfig(cluster, false, "[raytpu_slice.a.id]"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Slice Listed Twice.*slice-a.*is already in worker_groups\[0\]`),
			},
			{
				Config:      testAccSparesConfig(cluster, false, "[raytpu_slice.small.id]"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Spare Slice Of Another Shape.*worker group "multi": its spare slices are v6e 2x2`),
			},
			{
				// The next apply replaces the failed slice, and claims it again: it is the spare.
				Config: testAccSparesConfig(cluster, true, "[raytpu_slice.c.id]"),
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayClusterAddress, "healthy", knownvalue.Bool(true)),
					at(rayClusterAddress, "in_sync", knownvalue.Bool(true)),
					at(rayClusterAddress, "worker_group_slices", groupSlicesAre("Healthy", 2, 1, 0)),
				},
				Check: func(s *terraform.State) error {
					a := s.RootModule().Resources[rayClusterAddress].Primary.Attributes
					if got := a["worker_group_slices.multi.spare.0"]; got != failed {
						return fmt.Errorf("spare slice %q, want the replaced %q (%s, active %s %s, failed %s)", got, failed,
							a["worker_group_slices.multi.state"], a["worker_group_slices.multi.active.0"], a["worker_group_slices.multi.active.1"], a["worker_group_slices.multi.failed.0"])
					}
					return nil
				},
			},
			{
				ResourceName:            rayClusterAddress,
				ImportState:             true,
				ImportStateId:           clusterID + "/default/standby",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// failActiveSlice fails host 1 of a slice that runs a replica of group multi, then waits until
// every replica runs again, whole, off that slice. It returns the failed slice.
func failActiveSlice(t *testing.T, clusterID, cluster string) string {
	t.Helper()
	k := testKubeClient(t, cluster)
	ctx := testwait.Context(t)
	pods, err := k.RayClusterPods(ctx, "default", "standby")
	if err != nil {
		t.Fatal(err)
	}
	pool := ""
	for _, p := range pods {
		if p.Group == "multi" && p.NodePool != "" {
			pool = p.NodePool
			break
		}
	}
	if pool == "" {
		t.Fatal("no worker of group multi is placed")
	}
	t.Logf("failing host 1 of %s, which runs a replica", pool)
	if err := testEmulator.FailHost(ctx, emulator.HostFailure{Cluster: clusterID, NodePool: pool, Worker: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = k.WaitForRayClusterPods(ctx, "default", "standby", func(pods []kube.RayPod) bool {
		running := 0
		for _, p := range pods {
			if p.Head {
				continue
			}
			if !p.Running || p.NodePool == pool {
				return false
			}
			running++
		}
		return running == 8
	})
	if err != nil {
		t.Fatalf("the replica on failed slice %s never ran again elsewhere: %v", pool, err)
	}
	return pool
}
