package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccCluster_replacedWithItsSlices replaces a cluster under the same name: GKE deletes its
// node pools, and the RayClusters with its API server, so the slice and the RayCluster on it are
// replaced in the same apply, and the apply leaves nothing for the next plan to do.
func TestAccCluster_replacedWithItsSlices(t *testing.T) {
	t.Parallel()
	config := func(description string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "test" {
  name                = "acc-replaced"
  description         = %q
  deletion_protection = false
}
resource "raytpu_slice" "one" {
  cluster    = raytpu_cluster.test.id
  name       = "slice-one"
  generation = "v6e"
  topology   = "2x2"
}
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = raytpu_cluster.test.id
  name          = "tpu"
  worker_groups = [{ name = "one", slices = [raytpu_slice.one.id] }]
}
`, description)
	}
	endpoints := statecheck.CompareValue(compare.ValuesDiffer())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("first"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// Unknown until created, as the google provider's ids are.
					plancheck.ExpectUnknownValue("raytpu_cluster.test", tfjsonpath.New("id")),
					plancheck.ExpectUnknownValue("raytpu_slice.one", tfjsonpath.New("id")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					endpoints.AddStateValue("raytpu_cluster.test", tfjsonpath.New("endpoint")),
				},
			},
			{
				// A new description is a new cluster.
				Config: config("second"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectUnknownValue("raytpu_cluster.test", tfjsonpath.New("id")),
					plancheck.ExpectResourceAction("raytpu_slice.one", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("raytpu_ray_cluster.tpu", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					endpoints.AddStateValue("raytpu_cluster.test", tfjsonpath.New("endpoint")),
					at("raytpu_slice.one", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.one", "hosts", knownvalue.ListSizeExact(1)),
					at("raytpu_ray_cluster.tpu", "healthy", knownvalue.Bool(true)),
				},
			},
		},
	})
}
