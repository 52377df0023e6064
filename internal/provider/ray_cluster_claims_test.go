package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// testAccClaimsConfig is three v6e 4x4 slices and the RayClusters the caller writes.
func testAccClaimsConfig(cluster, rayClusters string) string {
	return testAccClaimsConfigLabelled(cluster, "{}", rayClusters)
}

// testAccClaimsConfigLabelled gives slice-c the Kubernetes labels labels.
func testAccClaimsConfigLabelled(cluster, labels, rayClusters string) string {
	return testAccSliceConfig(cluster, v6eSlice("a", "4x4", "")+v6eSlice("b", "4x4", "")+v6eSlice("c", "4x4", "labels = "+labels)+rayClusters)
}

const (
	multiRayCluster = `
resource "raytpu_ray_cluster" "multi" {
  cluster_id    = raytpu_cluster.test.id
  name          = "multi"
  worker_groups = [{ name = "multi", slices = [raytpu_slice.a.id, raytpu_slice.b.id] }]
}
`
	singleRayCluster = `
resource "raytpu_ray_cluster" "single" {
  cluster_id    = raytpu_cluster.test.id
  name          = "single"
  worker_groups = [{ name = "one", slices = [raytpu_slice.c.id] }]
}
`
)

// A multislice group and a single-slice group of two RayClusters never take each other's slices,
// whatever order their Pods are scheduled in: GKE's TPU webhook drops the node affinity of a
// multi-host Pod, so only the node selector on the labels raytpu puts on each group's slices holds
// the groups apart.
func TestAccRayCluster_groupsNeverTakeAnothersSlice(t *testing.T) {
	t.Parallel()
	cluster := "acc-ray-claims"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccClaimsConfig(cluster, "")},
			{
				// slice-a cannot take Pods for a while: the multislice group's second replica must wait
				// for it, not take slice-c, the only other free slice of its shape.
				PreConfig: func() {
					if err := cordonSlice(cluster, "slice-a", true); err != nil {
						t.Fatal(err)
					}
					uncordonOnceReplicaWaits(t, cluster)
				},
				Config: testAccClaimsConfig(cluster, multiRayCluster),
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf("raytpu_ray_cluster.multi", "multi", 4, "slice-a", "slice-b"),
					sliceClaimedBy(cluster, "slice-a", "multi", "multi"),
					sliceClaimedBy(cluster, "slice-c", "", ""),
				),
			},
			{
				Config: testAccClaimsConfig(cluster, multiRayCluster+singleRayCluster),
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf("raytpu_ray_cluster.single", "one", 4, "slice-c"),
					sliceClaimedBy(cluster, "slice-c", "single", "one"),
				),
			},
			{
				// Every worker of both at once: KubeRay makes them again and the scheduler takes
				// them in its own order.
				PreConfig: func() {
					since := time.Now()
					restartWorkersOutOfBand(t, cluster, "multi", "single")
					waitRayClusterRunning(t, cluster, "multi", 8, since)
					waitRayClusterRunning(t, cluster, "single", 4, since)
				},
				RefreshState: true,
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf("raytpu_ray_cluster.multi", "multi", 4, "slice-a", "slice-b"),
					placementOnSlicesOf("raytpu_ray_cluster.single", "one", 4, "slice-c"),
				),
			},
			{
				// The slice's own labels change in place and leave the claim as it is.
				Config: testAccClaimsConfigLabelled(cluster, `{ team = "ml" }`, multiRayCluster+singleRayCluster),
				Check:  sliceClaimedBy(cluster, "slice-c", "single", "one"),
			},
			{
				// A third RayCluster on a claimed slice fails at plan time, naming the group and the slice.
				Config: testAccClaimsConfig(cluster, multiRayCluster+singleRayCluster+`
resource "raytpu_ray_cluster" "thief" {
  cluster_id    = raytpu_cluster.test.id
  name          = "thief"
  worker_groups = [{ name = "more", slices = [raytpu_slice.c.id] }]
}
`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Slice Claimed By Another Worker Group.*worker group "more" cannot run on slice slice-c: it is claimed by worker\s+group "one" of RayCluster default/single`),
			},
			{
				// Destroyed, a RayCluster gives its slices back.
				Config: testAccClaimsConfig(cluster, singleRayCluster),
				Check:  sliceClaimedBy(cluster, "slice-a", "", ""),
			},
		},
	})
}

// uncordonOnceReplicaWaits uncordons slice-a once the scheduler has decided on every worker of
// RayCluster multi (two slices of four hosts), one replica's worth of them on a node and the rest
// finding none, however long the apply takes to get there. Had the rest found slice-c, that is
// when they would have.
func uncordonOnceReplicaWaits(t *testing.T, cluster string) {
	k := testKubeClient(t, cluster)
	released := make(chan struct{})
	t.Cleanup(func() { <-released })
	// Registered after the wait above, its end comes first (cleanups run last first) and ends the
	// goroutine's wait.
	ctx := testwait.Context(t)
	go func() {
		defer close(released)
		_, err := k.WaitForRayClusterPods(ctx, "default", "multi", func(pods []kube.RayPod) bool {
			placed, waiting := 0, 0
			for _, p := range pods {
				switch {
				case p.Head:
				case p.Node != "":
					placed++
				case p.Unschedulable != "":
					waiting++
				}
			}
			return placed >= 4 && placed+waiting == 8
		})
		if err != nil {
			t.Logf("slice-a stays cordoned: %v", err) // the test ended, or reached its deadline, first
			return
		}
		if err := cordonSlice(cluster, "slice-a", false); err != nil {
			t.Error(err)
		}
	}()
}

// sliceClaimedBy checks the claim labels on every node of a slice (empty: none).
func sliceClaimedBy(cluster, pool, rayCluster, group string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		k, err := testClientsetE(cluster)
		if err != nil {
			return err
		}
		nodes, err := k.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool=" + pool})
		if err != nil {
			return err
		}
		if len(nodes.Items) == 0 {
			return fmt.Errorf("slice %s has no nodes", pool)
		}
		for _, n := range nodes.Items {
			if n.Labels["raytpu.dev/ray-cluster"] != rayCluster || n.Labels["raytpu.dev/ray-group"] != group {
				return fmt.Errorf("node %s of %s: claim %q/%q, want %q/%q", n.Name, pool,
					n.Labels["raytpu.dev/ray-cluster"], n.Labels["raytpu.dev/ray-group"], rayCluster, group)
			}
		}
		return nil
	}
}
