package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccSlice_partialNodeVersion writes node versions the way users do. The emulator's cluster
// runs 1.34.0-gke.2201000 (REGULAR's default) while 1.34.1-gke.1829001 is offered too: "1.34"
// must resolve to the newest 1.34 the control plane allows, state must keep "1.34", and later
// plans must be empty.
func TestAccSlice_partialNodeVersion(t *testing.T) {
	t.Parallel()
	const cluster = "acc-versions"
	slice := func(version string) string {
		return testAccSliceConfig(cluster, fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster      = raytpu_cluster.test.id
  name         = "versioned"
  generation   = "v6e"
  topology     = "2x2"
  node_version = %q
}
`, version))
	}
	current := func(version string) statecheck.StateCheck {
		return at("raytpu_slice.test", "current_node_version", knownvalue.StringExact(version))
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The cluster is created in the same apply: resolved at apply time.
				Config: slice("1.34"),
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "node_version", knownvalue.StringExact("1.34")),
					current("1.34.0-gke.2201000"),
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
				},
			},
			{
				Config:           slice("1.34"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// "latest" is the same version for nodes of this control plane: no replacement.
				Config: slice("latest"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("raytpu_slice.test", tfjsonpath.New("current_node_version"), knownvalue.StringExact("1.34.0-gke.2201000")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{current("1.34.0-gke.2201000")},
			},
			{
				// Another release is another version, resolved at plan time: the nodes change in place.
				Config: slice("1.33"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("raytpu_slice.test", tfjsonpath.New("current_node_version"), knownvalue.StringExact("1.33.5-gke.1308000")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{current("1.33.5-gke.1308000")},
			},
			{
				ResourceName:            "raytpu_slice.test",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"node_version"},
			},
			{
				Config:      slice("1.33.3"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Unsupported GKE Version.*"1\.33\.3" is not offered for nodes.*nearest\s+offered:\s+1\.33\.5-gke\.1308000,\s+1\.33\.2-gke\.1240000`),
			},
			{
				Config:      slice("1.35"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Unsupported GKE Version.*newer\s+than\s+the\s+control\s+plane's\s+1\.34\.0-gke\.2201000`),
			},
		},
	})
}
