package provider

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// TestAccQuickstart applies and destroys examples/quickstart as written (its terraform block aside,
// which names the registry address), with the provider configured from the environment as a user
// of the emulator would. It sets environment variables, so it does not run in parallel.
func TestAccQuickstart(t *testing.T) {
	config, err := os.ReadFile("../../examples/quickstart/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("RAYTPU_CONTAINER_ENDPOINT", testEmulator.Endpoint())
	t.Setenv("RAYTPU_COMPUTE_ENDPOINT", testEmulator.ComputeEndpoint())
	t.Setenv("GOOGLE_OAUTH_ACCESS_TOKEN", testEmulator.Token())
	slice := func(acceleratorType string, hosts int) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"accelerator_type": knownvalue.StringExact(acceleratorType),
			"num_hosts":        knownvalue.Int64Exact(int64(hosts)),
			"hosts":            knownvalue.ListSizeExact(hosts),
			"healthy":          knownvalue.Bool(true),
		})
	}
	resource.Test(t, resource.TestCase{
		IsUnitTest:               true,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: string(config),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("slices", knownvalue.MapExact(map[string]knownvalue.Check{
					"trillium-0":      slice("v6e-16", 4),
					"trillium-1":      slice("v6e-16", 4),
					"trillium-single": slice("v6e-8", 1),
				})),
				statecheck.ExpectKnownOutputValueAtPath("cluster", tfjsonpath.New("kuberay_ready"), knownvalue.Bool(true)),
			},
			Check: rayClusterManifestAccepted,
		}},
	})
}

// rayClusterManifestAccepted has the quickstart's cluster validate its RayCluster output against
// the real KubeRay CRD.
func rayClusterManifestAccepted(s *terraform.State) error {
	outputs := s.RootModule().Outputs
	manifest, ok := outputs["ray_cluster_manifest"].Value.(string)
	if !ok {
		return fmt.Errorf("ray_cluster_manifest output is %T", outputs["ray_cluster_manifest"].Value)
	}
	cluster, ok := outputs["cluster"].Value.(map[string]any)
	if !ok {
		return fmt.Errorf("cluster output is %T", outputs["cluster"].Value)
	}
	endpoint, _ := cluster["endpoint"].(string)
	ca, _ := cluster["ca_certificate"].(string)
	k, err := kube.NewClient(kube.Cluster{Endpoint: endpoint, CACertificateBase64: ca, TokenSource: testTokenSource()})
	if err != nil {
		return err
	}
	defer k.Close()
	return k.DryRunRayCluster(context.Background(), "default", []byte(manifest))
}
