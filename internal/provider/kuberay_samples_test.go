package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// kubeRaySamples are KubeRay's own TPU RayCluster samples, in the ray-operator module go.mod pins,
// with the raytpu_slice whose nodes each sample's worker group selects. They are written for GKE:
// no toleration for the TPU taint (GKE's ExtendedResourceToleration admission plugin adds it), a
// head of 8 CPUs and 40G. (ray-cluster.tpu-v6e-256-multihost.yaml, 64 hosts, is left out for its
// size; the RayService sample runs in the emulator's own tests, rayservice_test.go.)
var kubeRaySamples = map[string]string{
	"ray-cluster.tpu-v6e-16-multihost.yaml": "v6e-4x4",
	"ray-cluster.tpu-v6e-singlehost.yaml":   "v6e-2x2",
	"ray-cluster.tpu-v4-singlehost.yaml":    "v4-2x2x1",
	"ray-cluster.tpu-v4-multihost.yaml":     "v4-2x2x2",
}

// TestAccKubeRaySamples_runOnSlices applies KubeRay's TPU samples as they are shipped to a cluster
// of raytpu slices: every worker runs on the slice of its shape, the head on the system pool.
func TestAccKubeRaySamples_runOnSlices(t *testing.T) {
	t.Parallel()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderConfig() + `
resource "raytpu_cluster" "test" {
  name                = "acc-samples"
  deletion_protection = false
  # Room for the samples' four heads of 8 CPUs and 40G each.
  system_pool = { machine_type = "n2-standard-32", node_count = 2 }
}
resource "raytpu_slice" "v6e_4x4" {
  cluster    = raytpu_cluster.test.id
  name       = "v6e-4x4"
  generation = "v6e"
  topology   = "4x4"
}
resource "raytpu_slice" "v6e_2x2" {
  cluster          = raytpu_cluster.test.id
  name             = "v6e-2x2"
  accelerator_type = "v6e-4"
}
resource "raytpu_slice" "v4_single" {
  cluster    = raytpu_cluster.test.id
  name       = "v4-2x2x1"
  generation = "v4"
  topology   = "2x2x1"
}
resource "raytpu_slice" "v4_multi" {
  cluster    = raytpu_cluster.test.id
  name       = "v4-2x2x2"
  generation = "v4"
  topology   = "2x2x2"
}
`,
			Check: samplesRunOnSlices(t),
		}},
	})
}

func samplesRunOnSlices(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		dir, err := kubeRaySamplesDir()
		if err != nil {
			return err
		}
		cluster := s.RootModule().Resources["raytpu_cluster.test"].Primary.Attributes
		k, err := kube.NewClient(kube.Cluster{Endpoint: cluster["endpoint"], CACertificateBase64: cluster["ca_certificate"], TokenSource: testTokenSource()})
		if err != nil {
			return err
		}
		defer k.Close()
		ctx := testwait.Context(t)
		names, want := map[string]string{}, map[string]int{}
		for file := range kubeRaySamples {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				return err
			}
			var rc rayv1.RayCluster
			if err := yaml.UnmarshalStrict(b, &rc); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			rc.Namespace = "default"
			if _, err := k.ApplyRayCluster(ctx, &rc); err != nil {
				return fmt.Errorf("applying %s: %w", file, err)
			}
			names[file], want[file] = rc.Name, 1
			for _, g := range rc.Spec.WorkerGroupSpecs {
				want[file] += int(*g.Replicas * g.NumOfHosts)
			}
		}
		for file, name := range names {
			pods, err := k.WaitForRayClusterPods(ctx, "default", name, func(pods []kube.RayPod) bool {
				for _, p := range pods {
					if !p.Running {
						return false
					}
				}
				return len(pods) == want[file]
			})
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			var where []string
			for _, p := range pods {
				pool := kubeRaySamples[file]
				if p.Head {
					pool = systemPoolName
				}
				if p.NodePool != pool {
					return fmt.Errorf("%s: Pod %s runs on node pool %q, want %q", file, p.Name, p.NodePool, pool)
				}
				where = append(where, p.Name+"@"+p.Node)
			}
			t.Logf("%s: %s", file, strings.Join(where, " "))
		}
		return nil
	}
}

// kubeRaySamplesDir is config/samples of the ray-operator module go.mod requires.
func kubeRaySamplesDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ray-project/kuberay/ray-operator").Output()
	if err != nil {
		return "", fmt.Errorf("locating the ray-operator module: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "samples"), nil
}
