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
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func testAccHistoryServerConfig(cluster, bucket string) string {
	return testAccHistoryServerConfigWith(cluster, bucket, "")
}

// testAccHistoryServerConfigWith is testAccHistoryServerConfig with more attributes.
func testAccHistoryServerConfigWith(cluster, bucket, more string) string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_history_server" "test" {
  cluster_id             = %q
  bucket                 = %q
  google_service_account = "ray-history@%s.iam.gserviceaccount.com"
  %s
}
`, cluster, bucket, testProject, more)
}

// A History Server is created with its Pod running, imported, updated in place, brought back in
// line after a change outside Terraform, and created again once deleted outside it; requests in
// text the API server writes otherwise keep their text, with nothing to plan.
func TestAccRayHistoryServer_lifecycleImportDriftDisappears(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-history", "")
	const res = "raytpu_ray_history_server.test"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             historyServerGone(t, id.Name),
		Steps: []resource.TestStep{
			{
				Config: testAccHistoryServerConfig(id.String(), "runs-a"),
				Check:  historyServerRuns(t, id.Name, "runs-a"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("id"), knownvalue.StringExact(id.String()+"/historyServers/default/historyserver")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("address"), knownvalue.StringExact("http://historyserver.default.svc.cluster.local:30080")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("kubernetes_service_account"), knownvalue.StringExact("historyserver")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("image"), knownvalue.StringExact(defaultHistoryServerImage)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("port_forward_command"),
						knownvalue.StringExact("kubectl port-forward -n default svc/historyserver 8080:30080")),
				},
			},
			{
				ResourceName:            res,
				ImportState:             true,
				ImportStateId:           id.String() + "/default/historyserver",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: testAccHistoryServerConfig(id.String(), "runs-b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
				}},
				Check: historyServerRuns(t, id.Name, "runs-b"),
			},
			{
				// The bucket changed outside Terraform: the plan puts it back.
				PreConfig: func() { setHistoryServerBucket(t, id.Name, "elsewhere") },
				Config:    testAccHistoryServerConfig(id.String(), "runs-b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(res, tfjsonpath.New("bucket"), knownvalue.StringExact("runs-b")),
				}},
				Check: historyServerRuns(t, id.Name, "runs-b"),
			},
			{
				// Deleted outside Terraform: the plan creates it again.
				PreConfig: func() {
					err := testClientset(t, id.Name).AppsV1().Deployments("default").Delete(context.Background(), "historyserver", metav1.DeleteOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: testAccHistoryServerConfig(id.String(), "runs-b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(res, plancheck.ResourceActionCreate),
				}},
				Check: historyServerRuns(t, id.Name, "runs-b"),
			},
			{
				// The defaults' quantities (500m, 2Gi) in other text, which the API server gives back
				// canonical: the configured text stays in the state.
				Config: testAccHistoryServerConfigWith(id.String(), "runs-b", defaultRequestsOtherwise),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("cpu"), knownvalue.StringExact("0.5")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("memory"), knownvalue.StringExact("2048Mi")),
				},
				Check: resource.ComposeTestCheckFunc(historyServerRuns(t, id.Name, "runs-b"), historyServerRequests(t, id.Name, "500m", "2Gi")),
			},
			{
				// Read again, the same quantities: nothing to plan, and the configured text stays.
				Config:           testAccHistoryServerConfigWith(id.String(), "runs-b", defaultRequestsOtherwise),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("cpu"), knownvalue.StringExact("0.5")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("memory"), knownvalue.StringExact("2048Mi")),
				},
			},
		},
	})
}

// defaultRequestsOtherwise are the default requests (500m, 2Gi) in text other than the API
// server's.
const defaultRequestsOtherwise = `cpu = "0.5"
  memory = "2048Mi"`

func TestAccRayHistoryServer_planTimeErrors(t *testing.T) {
	t.Parallel()
	cluster := "projects/" + testProject + "/locations/" + testLocation + "/clusters/none"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccHistoryServerConfig(cluster, "gs://runs"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)bucket.*must be a Cloud Storage bucket name.*without\s+the gs:// prefix`),
			},
			{
				Config: testAccProviderConfig() + `
resource "raytpu_ray_history_server" "test" {
  cluster_id             = "` + cluster + `"
  bucket                 = "runs"
  google_service_account = "ray-history"
}`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)google_service_account.*must be a Google service account email`),
			},
			{
				Config: testAccProviderConfig() + `
resource "raytpu_ray_history_server" "test" {
  cluster_id             = "` + cluster + `"
  bucket                 = "runs"
  google_service_account = "ray-history@p.iam.gserviceaccount.com"
  cpu                    = "half"
}`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Quantity.*cpu\s+"half"\s+is\s+not\s+a\s+Kubernetes\s+quantity.*500m`),
			},
		},
	})
}

// historyServerRuns checks that the server's Pod runs with the bucket and that its service account
// is bound to the Google service account.
func historyServerRuns(t *testing.T, cluster, bucket string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		k := testClientset(t, cluster)
		pods, err := k.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=historyserver"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podEnv(p, "GCS_BUCKET") == bucket {
				running++
			}
		}
		if running != 1 {
			return fmt.Errorf("%d running History Server Pods with bucket %s, want 1: %v", running, bucket, pods.Items)
		}
		sa, err := k.CoreV1().ServiceAccounts("default").Get(ctx, "historyserver", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := sa.Annotations["iam.gke.io/gcp-service-account"]; got != "ray-history@"+testProject+".iam.gserviceaccount.com" {
			return fmt.Errorf("the service account is bound to %q", got)
		}
		return nil
	}
}

// historyServerRequests checks the requests of the server's Deployment, as the API server writes
// them.
func historyServerRequests(t *testing.T, cluster, cpu, memory string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := testClientset(t, cluster).AppsV1().Deployments("default").Get(context.Background(), "historyserver", metav1.GetOptions{})
		if err != nil {
			return err
		}
		requests := d.Spec.Template.Spec.Containers[0].Resources.Requests
		if got, want := fmt.Sprint(requests.Cpu(), " ", requests.Memory()), cpu+" "+memory; got != want {
			return fmt.Errorf("the History Server requests %s (cpu, memory), want %s", got, want)
		}
		return nil
	}
}

func podEnv(p corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

func setHistoryServerBucket(t *testing.T, cluster, bucket string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"historyserver","env":[{"name":"GCS_BUCKET","value":%q}]}]}}}}`, bucket)
	_, err := testClientset(t, cluster).AppsV1().Deployments("default").Patch(context.Background(), "historyserver", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func historyServerGone(t *testing.T, cluster string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		k := testClientset(t, cluster)
		_, err := k.AppsV1().Deployments("default").Get(context.Background(), "historyserver", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the History Server's Deployment is still there (%v)", err)
		}
		_, err = k.RbacV1().ClusterRoleBindings().Get(context.Background(), "raytpu-default-historyserver-raycluster-reader", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the History Server's ClusterRoleBinding is still there (%v)", err)
		}
		return nil
	}
}
