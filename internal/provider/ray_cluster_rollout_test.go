package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rollout is what the steps of TestAccRayCluster_changesReachThePods vary.
type rollout struct {
	rayVersion, env, multiSlices, oneSlices, oneSlice string
}

func (r rollout) config(cluster string) string {
	return testAccSliceConfig(cluster, v6eSlice("a", "4x4", "")+v6eSlice("b", "4x4", "")+r.oneSlice+v6eSlice("two", "2x2", "")+fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = raytpu_cluster.test.id
  name          = "tpu"
  ray_version   = %q
  worker_groups = [
    { name = "multi", slices = %s },
    { name = "one", slices = %s, env = { STEP = %q } },
  ]
}
`, r.rayVersion, r.multiSlices, r.oneSlices, r.env))
}

// KubeRay v1.5 recreates no Pod whose template changed; raytpu replaces them, whole replicas at a
// time, so that what the state says runs: a ray_version change restarts every Pod, a group's env
// only that group's, a slice taken from a group of single-host slices only the replica on it,
// one taken from a group of multi-host slices every replica (MEGASCALE_NUM_SLICES changes), and a
// slice of another shape reshapes its group.
func TestAccRayCluster_changesReachThePods(t *testing.T) {
	t.Parallel()
	cluster := "acc-ray-rollout"
	r := rollout{rayVersion: "2.55.0", env: "1", multiSlices: "[raytpu_slice.a.id, raytpu_slice.b.id]",
		oneSlices: "[raytpu_slice.one.id, raytpu_slice.two.id]", oneSlice: v6eSlice("one", "2x2", "")}
	seen := &podRecord{}
	step := func(change func(*rollout)) rollout { change(&r); return r }
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: r.config(cluster),
				Check:  seen.record(t, cluster),
			},
			{
				Config: step(func(r *rollout) { r.rayVersion = "2.56.0" }).config(cluster),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayClusterAddress, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					seen.restarted(t, cluster, "head", "multi", "one"),
					imagesAre(t, cluster, "rayproject/ray:2.56.0-py310-tpu"),
					placementOnSlices("multi", 4, "slice-a", "slice-b"),
					placementOnSlices("one", 1, "slice-one", "slice-two"),
					resource.TestCheckResourceAttr(rayClusterAddress, "healthy", "true"),
					seen.record(t, cluster),
				),
			},
			{
				Config: step(func(r *rollout) { r.env = "2" }).config(cluster),
				Check: resource.ComposeTestCheckFunc(
					seen.restarted(t, cluster, "one"),
					func(*terraform.State) error {
						if env := envOf(rayPodsOf(t, cluster, "tpu", "one")[0], "STEP"); env != "2" {
							return fmt.Errorf("STEP = %q in group one's Pod, want 2", env)
						}
						return nil
					},
					seen.record(t, cluster),
				),
			},
			{
				// slice-two leaves its group of single-host slices: its replica stops, the one on
				// slice-one runs on, and slice-two is released.
				Config: step(func(r *rollout) { r.oneSlices = "[raytpu_slice.one.id]" }).config(cluster),
				Check: resource.ComposeTestCheckFunc(
					seen.stoppedOn(t, cluster, "one", "slice-two"),
					seen.restarted(t, cluster),
					placementOnSlices("one", 1, "slice-one"),
					sliceClaimedBy(cluster, "slice-two", "", ""),
					seen.record(t, cluster),
				),
			},
			{
				// slice-b leaves the multislice group: MEGASCALE_NUM_SLICES changes, so the replica on
				// slice-a restarts too, whole, on slice-a; slice-b is released.
				Config: step(func(r *rollout) { r.multiSlices = "[raytpu_slice.a.id]" }).config(cluster),
				Check: resource.ComposeTestCheckFunc(
					seen.restarted(t, cluster, "multi"),
					placementOnSlices("multi", 4, "slice-a"),
					sliceClaimedBy(cluster, "slice-b", "", ""),
					seen.record(t, cluster),
				),
			},
			{
				// slice-one becomes a v6e 2x4 of two 4-chip hosts: the slice is replaced, its id is
				// unknown at plan, and the RayCluster is updated in the same apply (numOfHosts 2,
				// its selector, the new pool's claim).
				Config: step(func(r *rollout) { r.oneSlice = v6eSlice("one", "2x4", "chips_per_host = 4") }).config(cluster),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.one", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(rayClusterAddress, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					placementOnSlices("one", 2, "slice-one"),
					placementOnSlices("multi", 4, "slice-a"),
					sliceClaimedBy(cluster, "slice-one", "tpu", "one"),
					resource.TestCheckResourceAttr(rayClusterAddress, "healthy", "true"),
					resource.TestCheckResourceAttr(rayClusterAddress, "in_sync", "true"),
				),
			},
		},
	})
}

// podRecord remembers the Pods of RayCluster tpu between steps: group ("head" for the head) →
// UIDs, and UID → the node pool it ran on.
type podRecord struct {
	uids  map[string]map[string]bool
	pools map[string]string
}

func (r *podRecord) record(t *testing.T, cluster string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		r.uids, r.pools = map[string]map[string]bool{}, map[string]string{}
		for group, pods := range rayClusterPods(t, cluster) {
			r.uids[group] = map[string]bool{}
			for _, p := range pods {
				r.uids[group][string(p.UID)] = true
				r.pools[string(p.UID)] = nodePool(t, cluster, p.Spec.NodeName)
			}
		}
		return nil
	}
}

// restarted checks that every Pod of the groups is new and every Pod of the others is not.
func (r *podRecord) restarted(t *testing.T, cluster string, groups ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for group, pods := range rayClusterPods(t, cluster) {
			want := false
			for _, g := range groups {
				want = want || g == group
			}
			for _, p := range pods {
				if old := r.uids[group][string(p.UID)]; old == want {
					return fmt.Errorf("group %s: Pod %s restarted %v, want %v", group, p.Name, !old, want)
				}
			}
		}
		return nil
	}
}

// stoppedOn checks that the group's Pods on pool are gone and its others are the same Pods.
func (r *podRecord) stoppedOn(t *testing.T, cluster, group, pool string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		now := map[string]bool{}
		for _, p := range rayClusterPods(t, cluster)[group] {
			now[string(p.UID)] = true
		}
		for uid := range r.uids[group] {
			if on := r.pools[uid]; (on == pool) == now[uid] {
				return fmt.Errorf("group %s: the Pod %s that ran on %s is there %v", group, uid, on, now[uid])
			}
		}
		return nil
	}
}

// rayClusterPods are the Pods of RayCluster tpu by group ("head" for the head).
func rayClusterPods(t *testing.T, cluster string) map[string][]corev1.Pod {
	pods, err := testClientset(t, cluster).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/cluster=tpu"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		group := p.Labels["ray.io/group"]
		if p.Labels["ray.io/node-type"] == "head" {
			group = "head"
		}
		out[group] = append(out[group], p)
	}
	return out
}

func nodePool(t *testing.T, cluster, node string) string {
	n, err := testClientset(t, cluster).CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return n.Labels["cloud.google.com/gke-nodepool"]
}

// imagesAre checks the image of every Ray container of RayCluster tpu.
func imagesAre(t *testing.T, cluster, image string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for group, pods := range rayClusterPods(t, cluster) {
			for _, p := range pods {
				if got := p.Spec.Containers[0].Image; got != image {
					return fmt.Errorf("group %s: Pod %s runs %s, want %s", group, p.Name, got, image)
				}
			}
		}
		return nil
	}
}
