package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// TestAccKubernetesProvider_deploymentRuns applies a Deployment through the kubernetes provider,
// configured from the ephemeral raytpu_cluster_credentials as the kubernetes-and-helm guide does:
// the cluster's controllers make its Pods, the scheduler places them on the system pool, and the
// provider's rollout wait ends.
func TestAccKubernetesProvider_deploymentRuns(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.EphemeralResources)
	acctest.RequireProvider(t, "hashicorp/kubernetes")
	cluster := testAccClusterConfig("acc-k8s-provider", "")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cluster},
			{
				Config: cluster + `
ephemeral "raytpu_cluster_credentials" "test" {
  cluster = raytpu_cluster.test.id
}

provider "kubernetes" {
  host                   = ephemeral.raytpu_cluster_credentials.test.endpoint
  cluster_ca_certificate = ephemeral.raytpu_cluster_credentials.test.cluster_ca_certificate
  token                  = ephemeral.raytpu_cluster_credentials.test.token
}

resource "kubernetes_namespace_v1" "web" {
  metadata {
    name = "web"
  }
}

resource "kubernetes_deployment_v1" "web" {
  metadata {
    name      = "web"
    namespace = kubernetes_namespace_v1.web.metadata[0].name
  }
  spec {
    replicas = 2
    selector {
      match_labels = { app = "web" }
    }
    template {
      metadata {
        labels = { app = "web" }
      }
      spec {
        container {
          name  = "web"
          image = "nginx:1.27"
        }
      }
    }
  }
}
`,
				// The provider waits for the rollout (wait_for_rollout, its default) before the check.
				Check: podsOnSystemPool("raytpu_cluster.test", "web", 2),
			},
		},
	})
}

// podsOnSystemPool checks, in the cluster's own API server, that namespace holds want running Pods
// on the system pool's nodes.
func podsOnSystemPool(clusterAddress, namespace string, want int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		attrs := s.RootModule().Resources[clusterAddress].Primary.Attributes
		ca, err := base64.StdEncoding.DecodeString(attrs["ca_certificate"])
		if err != nil {
			return err
		}
		k, err := kubernetes.NewForConfig(&rest.Config{Host: attrs["endpoint"], BearerToken: testEmulator.Token(),
			TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
		if err != nil {
			return err
		}
		ctx := context.Background()
		pods, err := k.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			n, err := k.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("Pod %s on node %q: %w", p.Name, p.Spec.NodeName, err)
			}
			if p.Status.Phase == "Running" && n.Labels["cloud.google.com/gke-nodepool"] == systemPoolName {
				running++
			}
		}
		if running != want {
			return fmt.Errorf("%d Pods of %d running on the system pool, want %d", running, len(pods.Items), want)
		}
		return nil
	}
}
