package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccSlice_planTimeMistakes plans slices with mistakes a user makes that only the plan should
// catch: no zone on a regional cluster.
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
	regional := fmt.Sprintf("projects/%s/locations/us-central2/clusters/none", testProject)
	step := func(cluster, body, want string) resource.TestStep {
		return resource.TestStep{Config: slice(cluster, body), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)` + want)}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(regional, "", `Missing Zone.*`+phrase("us-central2/clusters/none is a regional cluster: set zone to one of the zones of us-central2 that offers TPU Trillium (v6e)")),
		},
	})
}
