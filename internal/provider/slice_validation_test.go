package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccSlice_planTimeMistakes plans slices with mistakes a user makes that only the plan should
// catch: no zone on a regional cluster, a Ray version that is none, and Python 3.10 unquoted.
func TestAccSlice_planTimeMistakes(t *testing.T) {
	t.Parallel()
	slice := func(cluster, body string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = %q
  name       = "mistaken"
  generation = "v6e"
  topology   = "4x4"
%s
}
`, cluster, body)
	}
	zonal := fmt.Sprintf("projects/%s/locations/%s/clusters/none", testProject, testLocation)
	regional := fmt.Sprintf("projects/%s/locations/us-central2/clusters/none", testProject)
	step := func(cluster, body, want string) resource.TestStep {
		return resource.TestStep{Config: slice(cluster, body), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)` + want)}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(regional, "", `Missing Zone.*`+phrase("us-central2/clusters/none is a regional cluster: set zone to one of the zones of us-central2 that offers TPU Trillium (v6e)")),
			step(zonal, `ray_version = "latest"`, `Invalid Ray Version.*"latest" is not major.minor.patch`),
			step(zonal, `python_version = 3.10`, `Unsupported Python Version.*`+phrase(`If you wrote 3.10 without quotes, HCL read it as the number 3.1: write python_version = "3.10".`)),
			step(zonal, `python_version = "3.10.4"`, `Invalid Python Version`),
			{
				// A Python Ray runs on without an official TPU image: a warning, and the plan goes on.
				Config:             slice(zonal, `python_version = "3.12"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
