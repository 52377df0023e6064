package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testAccHeadServiceConfig(cluster, head string) string {
	return testAccSliceConfig(cluster, v6eSlice("one", "2x2", "")+fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = raytpu_cluster.test.id
  name          = "svc"
  head          = { %s }
  worker_groups = [{ name = "one", slices = [raytpu_slice.one.id] }]
}
`, head))
}

// The head service, in front of Ray's dashboard, Jobs API and client, is ClusterIP by default,
// an internal load balancer with GKE's annotation on request, and an external one only with
// source ranges; a change reaches the Service, which KubeRay never changes, and not the Pods.
func TestAccRayCluster_headService(t *testing.T) {
	t.Parallel()
	cluster := "acc-ray-svc"
	var headUID string
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccHeadServiceConfig(cluster, `service_type = "LoadBalancer"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`External Load Balancer Needs Source Ranges`),
			},
			{
				Config:      testAccHeadServiceConfig(cluster, `service_type = "LoadBalancer", load_balancer_source_ranges = ["0.0.0.0/0"]`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`External Load Balancer Open To All`),
			},
			{
				Config:      testAccHeadServiceConfig(cluster, `load_balancer_source_ranges = ["10.0.0.0/8"]`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Source Ranges Without A Load Balancer`),
			},
			{
				Config: testAccHeadServiceConfig(cluster, ``),
				Check: resource.ComposeTestCheckFunc(
					headService(t, cluster, "svc-head-svc", "ClusterIP", "", nil),
					func(*terraform.State) error { headUID = string(rayPodsOf(t, cluster, "svc", "")[0].UID); return nil },
				),
			},
			{
				Config: testAccHeadServiceConfig(cluster, `service_type = "InternalLoadBalancer", load_balancer_source_ranges = ["10.0.0.0/8"]`),
				Check:  resource.ComposeTestCheckFunc(headService(t, cluster, "svc-head-svc", "LoadBalancer", "Internal", []string{"10.0.0.0/8"}), headKept(t, cluster, &headUID)),
			},
			{
				Config: testAccHeadServiceConfig(cluster, `service_type = "LoadBalancer", load_balancer_source_ranges = ["203.0.113.0/24"]`),
				Check:  resource.ComposeTestCheckFunc(headService(t, cluster, "svc-head-svc", "LoadBalancer", "", []string{"203.0.113.0/24"}), headKept(t, cluster, &headUID)),
			},
		},
	})
}

// headService checks the type, GKE's load balancer type annotation and source ranges of the
// Service name (a head Service) in namespace default.
func headService(t *testing.T, cluster, name, typ, lbType string, ranges []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		svc, err := testClientset(t, cluster).CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(svc.Spec.Type) != typ || svc.Annotations["networking.gke.io/load-balancer-type"] != lbType ||
			!slices.Equal(svc.Spec.LoadBalancerSourceRanges, ranges) {
			return fmt.Errorf("head Service: type %s, load balancer %q, ranges %v; want %s, %q, %v", svc.Spec.Type,
				svc.Annotations["networking.gke.io/load-balancer-type"], svc.Spec.LoadBalancerSourceRanges, typ, lbType, ranges)
		}
		return nil
	}
}

// headKept checks that the head Pod is still the one of UID uid.
func headKept(t *testing.T, cluster string, uid *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := string(rayPodsOf(t, cluster, "svc", "")[0].UID); got != *uid {
			return fmt.Errorf("the head Pod restarted (%s, was %s) for a change of its Service", got, *uid)
		}
		return nil
	}
}
