package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// What a slice hands to Ray follows its ray_version's row of raytpu's Ray table: chips_per_vm
// only for a release whose slice_placement_group takes it, and tpu7x named as that release does.
func TestAccSlice_rayOutputsFollowRayVersion(t *testing.T) {
	t.Parallel()
	slice := func(name, generation, topology, rayVersion string) string {
		return fmt.Sprintf(`
resource "raytpu_slice" %[1]q {
  cluster        = "projects/%[5]s/locations/%[6]s/clusters/nowhere"
  name           = %[1]q
  generation     = %[2]q
  topology       = %[3]q
  chips_per_host = 4
  ray_version    = %[4]q
}
`, name, generation, topology, rayVersion, testProject, testLocation)
	}
	config := testAccProviderConfig() +
		slice("v6e-255", "v6e", "2x4", "2.55.0") + slice("v6e-256", "v6e", "2x4", "2.56.0") +
		slice("tpu7x-254", "tpu7x", "2x2x1", "2.54.0") + slice("tpu7x-255", "tpu7x", "2x2x1", "2.55.0")
	args := func(chipsPerVM knownvalue.Check) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"topology": knownvalue.StringExact("2x4"), "accelerator_version": knownvalue.StringExact("v6e"),
			"chips_per_vm": chipsPerVM, "num_slices": knownvalue.Int64Exact(1),
		})
	}
	names := func(podType string) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"pod_type": knownvalue.StringExact(podType), "head_resource": knownvalue.StringExact("TPU-" + podType + "-head"),
		})
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             config,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				// Ray 2.55's slice_placement_group has no chips_per_vm (ray#62526 came after its cut).
				plancheck.ExpectKnownValue("raytpu_slice.v6e-255", tfjsonpath.New("slice_placement_group"), args(knownvalue.Null())),
				plancheck.ExpectKnownValue("raytpu_slice.v6e-256", tfjsonpath.New("slice_placement_group"), args(knownvalue.Int64Exact(4))),
				// ray#60338 normalised tpu7x-N to v7x-N before 2.55.
				plancheck.ExpectKnownValue("raytpu_slice.tpu7x-254", tfjsonpath.New("ray"), names("tpu7x-8")),
				plancheck.ExpectKnownValue("raytpu_slice.tpu7x-255", tfjsonpath.New("ray"), names("v7x-8")),
			}},
		}},
	})
}
