package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// actionsCluster is the cluster of TestAccSliceActions: one v6e 2x4 slice on two hosts, and a
// RayCluster with a worker group on it.
const actionsCluster = "acc-actions"

func actionsConfig(actions string) string {
	return testAccSliceConfig(actionsCluster, `
resource "raytpu_slice" "test" {
  cluster        = raytpu_cluster.test.id
  name           = "trillium"
  generation     = "v6e"
  topology       = "2x4"
  chips_per_host = 4
}

resource "raytpu_ray_cluster" "test" {
  cluster_id    = raytpu_cluster.test.id
  name          = "actions"
  worker_groups = [{ name = "workers", slices = [raytpu_slice.test.id] }]
}
`+actions)
}

// trigger is a terraform_data that invokes action when it is created, and again whenever input
// changes: how a configuration runs an action in an apply (`terraform apply -invoke` runs one
// ad hoc, which terraform-plugin-testing does not).
func trigger(name, action, input string) string {
	return fmt.Sprintf(`
resource "terraform_data" %q {
  input = %q
  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [%s]
    }
  }
}
`, name, input, action)
}

// recreateAction is raytpu_recreate_slice on the slice, only when it is unhealthy.
const recreateAction = `
action "raytpu_recreate_slice" "repair" {
  config {
    slice             = raytpu_slice.test.id
    only_if_unhealthy = true
  }
}
`

// TestAccSliceActions runs each action on one slice, in turn: raytpu_recreate_slice replaces the
// slice after a host failed (new hosts, and the next plan is empty) and leaves a healthy one
// alone; raytpu_drain_slice refuses a Pod no controller manages, then evicts the Ray workers,
// which KubeRay recreates and the cordoned slice keeps away; raytpu_uncordon_slice lets them back.
func TestAccSliceActions(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.Actions)
	var before, after []string
	repair := actionsConfig(recreateAction + trigger("repair", "action.raytpu_recreate_slice.repair", "1"))
	drain := func(input, force string) string {
		return repair + fmt.Sprintf(`
action "raytpu_drain_slice" "maintenance" {
  config {
    slice = raytpu_slice.test.id
    force = %s
  }
}
`, force) + trigger("maintenance", "action.raytpu_drain_slice.maintenance", input)
	}
	uncordon := drain("2", "true") + `
action "raytpu_uncordon_slice" "resume" {
  config {
    slice = raytpu_slice.test.id
  }
}
` + trigger("resume", "action.raytpu_uncordon_slice.resume", "1")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: actionsConfig(""), Check: sliceHostsInto(&before)},
			{
				// A host fails: the slice is unhealthy, and the action recreates it.
				PreConfig: func() {
					if err := testEmulator.FailHost(context.Background(), emulator.HostFailure{
						Cluster: nodePoolIDFor(actionsCluster, "").Cluster.String(), NodePool: "trillium", Worker: 1,
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: repair,
			},
			{
				// The next plan is empty, and the slice runs on new hosts.
				Config:           repair,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.test", "status", knownvalue.StringExact("RUNNING")),
					at("raytpu_slice.test", "ready_hosts", knownvalue.Int64Exact(2)),
				},
				Check: resource.ComposeTestCheckFunc(sliceHostsInto(&after), func(*terraform.State) error {
					if len(after) != 2 || slices.ContainsFunc(after, func(h string) bool { return slices.Contains(before, h) }) {
						return fmt.Errorf("hosts after the recreation %v, want two hosts none of which were there before (%v)", after, before)
					}
					return nil
				}),
			},
			{
				// Invoked again on a healthy slice, it leaves it as it is.
				Config: actionsConfig(recreateAction + trigger("repair", "action.raytpu_recreate_slice.repair", "2")),
				Check: func(s *terraform.State) error {
					var now []string
					if err := sliceHostsInto(&now)(s); err != nil {
						return err
					}
					if !slices.Equal(now, after) {
						return fmt.Errorf("hosts %v after the action on a healthy slice, want them unchanged (%v)", now, after)
					}
					return nil
				},
			},
			{
				// A Pod that nothing would recreate stops the drain before anything changes.
				PreConfig:   func() { createBarePodOnSlice(t, actionsCluster, "trillium") },
				Config:      drain("1", "false"),
				ExpectError: regexp.MustCompile(`(?s)Error Draining Slice.*no controller manages the Pods default/bare, so nothing would\s+recreate them.*Nothing\s+was\s+changed`),
			},
			{
				// Forced, the drain evicts it and the Ray workers, which KubeRay recreates off the slice.
				Config: drain("2", "true"),
				Check:  rayWorkers(t, "drained", func(w kube.RayPod) bool { return !w.Running && w.Node == "" }),
			},
			{
				// Uncordoned, the slice takes its workers back.
				Config: uncordon,
				Check:  rayWorkers(t, "back on the slice", func(w kube.RayPod) bool { return w.Running && w.NodePool == "trillium" }),
			},
		},
	})
}

// sliceHostsInto keeps the hosts raytpu_slice.test has in state.
func sliceHostsInto(hosts *[]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources["raytpu_slice.test"]
		if rs == nil {
			return fmt.Errorf("no raytpu_slice.test in state")
		}
		*hosts = nil
		for k, v := range rs.Primary.Attributes {
			if strings.HasPrefix(k, "hosts.") && k != "hosts.#" {
				*hosts = append(*hosts, v)
			}
		}
		slices.Sort(*hosts)
		return nil
	}
}

// rayWorkers waits until the two workers of the RayCluster actions are as want says.
func rayWorkers(t *testing.T, what string, want func(kube.RayPod) bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var last []kube.RayPod
		_, err := testKubeClient(t, actionsCluster).WaitForRayClusterPods(testwait.Context(t), "default", "actions", func(pods []kube.RayPod) bool {
			last = pods
			workers := 0
			for _, p := range pods {
				if p.Head {
					continue
				}
				if !want(p) {
					return false
				}
				workers++
			}
			return workers == 2
		})
		if err != nil {
			return fmt.Errorf("the Ray workers are not %s: %w (%+v)", what, err, last)
		}
		return nil
	}
}

// createBarePodOnSlice runs a Pod that no controller manages on the first host of pool, as
// `kubectl run` would, straight through the cluster's API server.
func createBarePodOnSlice(t *testing.T, cluster, pool string) {
	t.Helper()
	ctx := context.Background()
	hosts, err := testKubeClient(t, cluster).SliceHosts(ctx, pool)
	if err != nil || len(hosts) == 0 {
		t.Fatalf("hosts of %s: %v, %v", pool, hosts, err)
	}
	cl, err := testGKEClient(t).GetCluster(ctx, nodePoolIDFor(cluster, pool).Cluster)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := base64.StdEncoding.DecodeString(cl.GetMasterAuth().GetClusterCaCertificate())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host: "https://" + cl.GetEndpoint(), TLSClientConfig: rest.TLSClientConfig{CAData: ca}, BearerToken: testEmulator.Token(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare"},
		Spec: corev1.PodSpec{NodeName: hosts[0].Name, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Key: "google.com/tpu", Operator: corev1.TolerationOpExists}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
