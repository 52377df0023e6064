package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// googleClusterConfig is a cluster as the google provider recorded it, with the Ray Operator
// add-on enabled.
func googleClusterConfig(id gke.ClusterID) string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "google_container_cluster" "ray" {
  project             = %q
  location            = %q
  name                = %q
  deletion_protection = false
  addons_config {
    ray_operator_config {
      enabled = true
    }
  }
}
`, id.Project, id.Location, id.Name)
}

// TestAccRayOperator_movedFromGoogle moves the add-on of a cluster recorded by
// google_container_cluster into raytpu_ray_operator: Read fills it in from GKE, the plan changes
// only the logging the configuration turns on, and the cluster stays.
func TestAccRayOperator_movedFromGoogle(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.MovedFromGoogle)
	id := createClusterOutOfBand(t, "acc-op-moved", "")
	moved := testAccProviderConfig() + fmt.Sprintf(`
moved {
  from = google_container_cluster.ray
  to   = raytpu_ray_operator.ray
}
resource "raytpu_ray_operator" "ray" {
  cluster = %q
  logging = true
}
`, id.String())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccMoveProviderFactories,
		CheckDestroy:             rayAddonEnabled(id, false),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { setRayAddonOutOfBand(t, id, true) },
				Config:    googleClusterConfig(id),
			},
			{
				Config: moved,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_ray_operator.ray", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("raytpu_ray_operator.ray", tfjsonpath.New("logging"), knownvalue.Bool(true)),
				}},
				Check: rayAddonEnabled(id, true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_ray_operator.ray", tfjsonpath.New("id"), knownvalue.StringExact(id.String())),
					statecheck.ExpectKnownValue("raytpu_ray_operator.ray", tfjsonpath.New("kuberay").AtMapKey("ready"), knownvalue.Bool(true)),
				},
			},
			{
				Config:           moved,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
