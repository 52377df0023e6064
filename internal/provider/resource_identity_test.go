package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// TestAccResourceIdentity_importByIdentity checks the identity of each resource and imports each
// by an import block that names its identity.
func TestAccResourceIdentity_importByIdentity(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.ImportByIdentity)
	byo := createClusterOutOfBand(t, "acc-identity-byo", "")
	config := testAccSliceConfig("acc-identity", `
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "v6e-2x2"
  generation = "v6e"
  topology   = "2x2"
}

resource "raytpu_ray_operator" "test" {
  cluster = "`+byo.String()+`"
}

resource "raytpu_ray_cluster" "test" {
  cluster_id    = raytpu_cluster.test.id
  namespace     = "default"
  name          = "identity"
  worker_groups = [{ name = "g", slices = [raytpu_slice.test.id] }]
}
`)
	str := knownvalue.StringExact
	importStep := func(address, config string) resource.TestStep {
		return resource.TestStep{
			Config:          config,
			ResourceName:    address,
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithResourceIdentity,
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("raytpu_cluster.test", map[string]knownvalue.Check{
						"project": str(testProject), "location": str(testLocation), "name": str("acc-identity"),
					}),
					statecheck.ExpectIdentity("raytpu_slice.test", map[string]knownvalue.Check{
						"project": str(testProject), "location": str(testLocation), "cluster": str("acc-identity"), "name": str("v6e-2x2"),
					}),
					statecheck.ExpectIdentity("raytpu_ray_operator.test", map[string]knownvalue.Check{
						"project": str(testProject), "location": str(testLocation), "cluster": str("acc-identity-byo"),
					}),
					statecheck.ExpectIdentity("raytpu_ray_cluster.test", map[string]knownvalue.Check{
						"project": str(testProject), "location": str(testLocation), "cluster": str("acc-identity"),
						"namespace": str("default"), "name": str("identity"),
					}),
				},
			},
			// An imported cluster is deletion protected: the configuration it is imported into says so.
			importStep("raytpu_cluster.test", strings.Replace(config, "deletion_protection = false", "deletion_protection = true", 1)),
			importStep("raytpu_slice.test", config),
			importStep("raytpu_ray_operator.test", config),
			importStep("raytpu_ray_cluster.test", config),
		},
	})
}
