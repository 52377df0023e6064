package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testAccRayHistoryConfig is a cluster with one single-host v6e 2x2 slice, a History Server, and
// RayCluster tpu on the slice with history (its history_server attribute, or none); without the
// RayCluster when history is "destroyed".
func testAccRayHistoryConfig(cluster, history string) string {
	rayCluster := fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = raytpu_cluster.test.id
  name          = "tpu"
  worker_groups = [{ name = "one", slices = [raytpu_slice.one.id] }]
  %s
}
`, history)
	if history == "destroyed" {
		rayCluster = ""
	}
	return testAccSliceConfig(cluster, v6eSlice("one", "2x2", "")+fmt.Sprintf(`
resource "raytpu_ray_history_server" "history" {
  cluster_id             = raytpu_cluster.test.id
  bucket                 = "ray-runs"
  google_service_account = "ray-history@%s.iam.gserviceaccount.com"
}
`, testProject)+rayCluster)
}

// historyBlock is a history_server attribute writing to the History Server's bucket, with more
// attributes written out.
func historyBlock(more string) string {
	return fmt.Sprintf(`history_server = {
    bucket                 = raytpu_ray_history_server.history.bucket
    google_service_account = "ray-writer@%s.iam.gserviceaccount.com"
    %s
  }`, testProject, more)
}

// A RayCluster with history_server runs the collector on its head and worker, as a service account
// raytpu makes bound to the Google one, beside a running History Server; the block is imported
// back, the service account put back when changed outside Terraform, and removing the block
// restarts the Pods without the collector and deletes the service account; added back under
// another name, destroying the RayCluster deletes it.
func TestAccRayCluster_historyServer(t *testing.T) {
	t.Parallel()
	cluster := "acc-history-block"
	seen := &podRecord{}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: testAccRayHistoryConfig(cluster, historyBlock("")),
				Check: resource.ComposeTestCheckFunc(
					historyServerRuns(t, cluster, "ray-runs"),
					collectorsOn(t, cluster, rayClusterAddress, "tpu-ray-history", "ray-runs"),
					serviceAccountBound(t, cluster, "tpu-ray-history"),
					seen.record(t, cluster),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayClusterAddress, "history_server", knownvalue.ObjectExact(map[string]knownvalue.Check{
						"bucket": knownvalue.StringExact("ray-runs"), "google_service_account": knownvalue.StringExact(historyWriter),
						"collector_image":            knownvalue.StringExact("quay.io/kuberay/collector:v1.7.0"),
						"kubernetes_service_account": knownvalue.StringExact("tpu-ray-history"),
					})),
					at(rayClusterAddress, "healthy", knownvalue.Bool(true)),
				},
			},
			{
				// history_server comes back from the RayCluster's annotations.
				ResourceName:            rayClusterAddress,
				ImportState:             true,
				ImportStateId:           fmt.Sprintf("projects/%s/locations/%s/clusters/%s/default/tpu", testProject, testLocation, cluster),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// The service account bound to another Google service account outside Terraform: the
				// next apply binds it back, and no Pod restarts.
				PreConfig: func() {
					bindServiceAccountOutOfBand(t, cluster, "tpu-ray-history", "else@"+testProject+".iam.gserviceaccount.com")
				},
				Config: testAccRayHistoryConfig(cluster, historyBlock("")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayClusterAddress, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					serviceAccountBound(t, cluster, "tpu-ray-history"),
					seen.restarted(t, cluster),
				),
			},
			{
				// Removed: KubeRay recreates no Pod for a template change, so raytpu restarts them.
				Config: testAccRayHistoryConfig(cluster, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayClusterAddress, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					seen.restarted(t, cluster, "head", "one"),
					collectorsOn(t, cluster, rayClusterAddress, "", ""),
					serviceAccountGone(t, cluster, "tpu-ray-history"),
					resource.TestCheckNoResourceAttr(rayClusterAddress, "history_server"),
					seen.record(t, cluster),
				),
			},
			{
				// Added back, as a service account of another name.
				Config: testAccRayHistoryConfig(cluster, historyBlock(`kubernetes_service_account = "ray-writer"`)),
				Check: resource.ComposeTestCheckFunc(
					seen.restarted(t, cluster, "head", "one"),
					collectorsOn(t, cluster, rayClusterAddress, "ray-writer", "ray-runs"),
					serviceAccountBound(t, cluster, "ray-writer"),
				),
			},
			{
				Config: testAccRayHistoryConfig(cluster, "destroyed"),
				Check:  serviceAccountGone(t, cluster, "ray-writer"),
			},
		},
	})
}

// A RayService's RayCluster archives its runs as raytpu_ray_cluster's does, its service account
// made for the RayService and deleted with it. A RayCluster of the RayService's name is refused
// before anything of it is made: KubeRay would give both one head Service, and raytpu one service
// account.
func TestAccRayService_historyServer(t *testing.T) {
	t.Parallel()
	cluster := "acc-history-service"
	slices := v6eSlice("one", "2x2", "") + v6eSlice("two", "2x2", "")
	config := func(more string) string {
		return testAccRayServiceOn(cluster, slices, "one", testServeConfig("chat"), more)
	}
	history := fmt.Sprintf(`history_server = {
    bucket                 = "ray-runs"
    google_service_account = %q
  }`, historyWriter)
	namesake := `
resource "raytpu_ray_cluster" "llm" {
  cluster_id    = raytpu_cluster.test.id
  name          = "llm"
  worker_groups = [{ name = "one", slices = [raytpu_slice.two.id] }]
  ` + history + `
}
`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(history),
				Check: resource.ComposeTestCheckFunc(
					collectorsOn(t, cluster, rayServiceAddress, "llm-ray-history", "ray-runs"),
					serviceAccountBound(t, cluster, "llm-ray-history"),
					resource.TestCheckResourceAttr(rayServiceAddress, "healthy", "true"),
				),
			},
			{
				ResourceName:            rayServiceAddress,
				ImportState:             true,
				ImportStateId:           fmt.Sprintf("projects/%s/locations/%s/clusters/%s/default/llm", testProject, testLocation, cluster),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config:      config(history) + namesake,
				ExpectError: regexp.MustCompile(`(?s)RayCluster Named As A RayService.*already has a RayService named "llm".*head Service of\s+both\s+llm-head-svc`),
			},
			{
				Config: testAccSliceConfig(cluster, slices),
				Check:  serviceAccountGone(t, cluster, "llm-ray-history"),
			},
		},
	})
}

// What history_server cannot go with is refused at plan time, naming the attribute.
func TestAccRayCluster_historyServerPlanTimeErrors(t *testing.T) {
	t.Parallel()
	config := func(bucket, group string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = "projects/%s/locations/%s/clusters/none"
  name          = "tpu"
  worker_groups = [{ name = "one", generation = "v6e", topology = "2x2", %s }]
  history_server = {
    bucket                 = %q
    google_service_account = "ray-writer@p.iam.gserviceaccount.com"
  }
}
`, testProject, testLocation, group, bucket)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config("ray-runs", `service_account_name = "ray-jobs"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)worker_groups\[0\].service_account_name.*is set together with history_server.*Remove\s+service_account_name`),
			},
			{
				Config:      config("ray-runs", `env = { RAY_enable_ray_event = "false" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)worker_groups\[0\].env "RAY_enable_ray_event" is set by\s+history_server`),
			},
			{
				Config:      config("ray-runs", `volumes = [{ name = "tmp", mount_path = "/tmp/ray", empty_dir = {} }]`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)worker_groups\[0\].volumes\[0\].*mount path /tmp/ray of\s+history_server`),
			},
			{
				Config:      config("gs://ray-runs", ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)history_server.bucket.*must be a Cloud Storage bucket name`),
			},
		},
	})
}

// collectorsOn checks every Pod of the RayCluster of address (raytpu_ray_cluster's, or the one a
// raytpu_ray_service serves from): with a service account, each carries the collector writing to
// bucket, the shared session folder and Ray's event export, and runs as the service account; with
// none, none carries a collector and each runs as the namespace's default.
func collectorsOn(t *testing.T, cluster, address, account, bucket string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		res, ok := s.RootModule().Resources[address]
		if !ok {
			return fmt.Errorf("%s is not in the state", address)
		}
		name := res.Primary.Attributes["ray_cluster_name"]
		if name == "" {
			name = res.Primary.Attributes["name"]
		}
		list, err := testClientset(t, cluster).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/cluster=" + name})
		if err != nil {
			return err
		}
		heads := 0
		for _, p := range list.Items {
			if p.Labels["ray.io/node-type"] == "head" {
				heads++
			}
		}
		if heads != 1 || len(list.Items) != 2 {
			return fmt.Errorf("RayCluster %s: %d heads and %d Pods, want a head and a worker", name, heads, len(list.Items))
		}
		for _, p := range list.Items {
			var (
				collector *corev1.Container
				names     []string
			)
			for i, c := range p.Spec.Containers {
				if names = append(names, c.Name); c.Name == "collector" {
					collector = &p.Spec.Containers[i]
				}
			}
			shared := false
			for _, v := range p.Spec.Volumes {
				shared = shared || (v.Name == "historyserver" && v.EmptyDir != nil)
			}
			if account == "" {
				if collector != nil || shared || (p.Spec.ServiceAccountName != "" && p.Spec.ServiceAccountName != "default") {
					return fmt.Errorf("Pod %s still archives: collector %v, volume %v, service account %q", p.Name, collector != nil, shared, p.Spec.ServiceAccountName)
				}
				continue
			}
			switch {
			case collector == nil || collector.Image != defaultCollectorImage:
				return fmt.Errorf("Pod %s: no collector of %s among its containers %v", p.Name, defaultCollectorImage, names)
			case podEnv(corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{*collector}}}, "GCS_BUCKET") != bucket:
				return fmt.Errorf("Pod %s: the collector writes elsewhere than %s: %+v", p.Name, bucket, collector.Env)
			case !shared:
				return fmt.Errorf("Pod %s: no historyserver emptyDir among its %d volumes", p.Name, len(p.Spec.Volumes))
			case envOf(p, "RAY_enable_ray_event") != "true":
				return fmt.Errorf("Pod %s: RAY_enable_ray_event is %q", p.Name, envOf(p, "RAY_enable_ray_event"))
			case p.Spec.ServiceAccountName != account:
				return fmt.Errorf("Pod %s runs as %q, want %q", p.Name, p.Spec.ServiceAccountName, account)
			}
		}
		return nil
	}
}

// historyWriter is the Google service account of historyBlock.
const historyWriter = "ray-writer@" + testProject + ".iam.gserviceaccount.com"

// serviceAccountBound checks that the Kubernetes service account name is bound to historyWriter.
func serviceAccountBound(t *testing.T, cluster, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		sa, err := testClientset(t, cluster).CoreV1().ServiceAccounts("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := sa.Annotations["iam.gke.io/gcp-service-account"]; got != historyWriter {
			return fmt.Errorf("ServiceAccount %s is bound to %q, want %q", name, got, historyWriter)
		}
		return nil
	}
}

func serviceAccountGone(t *testing.T, cluster, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := testClientset(t, cluster).CoreV1().ServiceAccounts("default").Get(context.Background(), name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("ServiceAccount %s is still there (%v)", name, err)
		}
		return nil
	}
}

func bindServiceAccountOutOfBand(t *testing.T, cluster, name, google string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"iam.gke.io/gcp-service-account":%q}}}`, google)
	_, err := testClientset(t, cluster).CoreV1().ServiceAccounts("default").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
