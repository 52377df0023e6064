package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

const rayServiceAddress = "raytpu_ray_service.llm"

// testServeConfig is a Serve config of the named applications, each with one deployment whose
// replica takes one host's four chips.
func testServeConfig(apps ...string) string {
	var b strings.Builder
	b.WriteString("applications:\n")
	for _, app := range apps {
		fmt.Fprintf(&b, "  - name: %[1]s\n    import_path: serve_%[1]s:app\n    route_prefix: /%[1]s\n    deployments:\n"+
			"      - name: Server\n        num_replicas: 1\n        ray_actor_options:\n          resources: {TPU: 4}\n", app)
	}
	return b.String()
}

func TestAccRayService_planTimeErrors(t *testing.T) {
	t.Parallel()
	mine := fmt.Sprintf("projects/%s/locations/%s/clusters/mine", testProject, testLocation)
	config := func(name, groups, serveConfig string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_service" "llm" {
  cluster_id      = %q
  name            = %q
  worker_groups   = [%s]
  serve_config_v2 = %q
}
`, mine, name, groups, serveConfig)
	}
	shape := `{ name = "g", generation = "v6e", topology = "4x4" }`
	steps := []struct{ name, groups, serve, want string }{
		{"llm", shape, "applications: []", `(?s)Invalid Serve Config.*it has no applications`},
		{"llm", shape, "applications:\n  - name: llm\n", `(?s)Invalid Serve Config.*applications\[0\] \("llm"\) has no\s+import_path`},
		{"llm", shape, testServeConfig("llm", "llm"), `(?s)Invalid Serve Config.*applications\[0\] and applications\[1\] are both\s+named "llm"`},
		{"llm", shape, "applications:\n  - import_path: a:app\n  - name: b\n    import_path: b:app\n", `(?s)Invalid Serve Config.*applications "default" and "b" share\s+route_prefix "/"`},
		{"llm", shape, "{nope", `(?s)Invalid Serve Config.*not a YAML mapping`},
		// KubeRay names the RayCluster <name>-<5 characters>, which must stay within 40.
		{strings.Repeat("a", 35), shape, testServeConfig("llm"), `(?s)Invalid Attribute Value Match.*at most 34\s+characters`},
		// The worker groups are checked as raytpu_ray_cluster's are.
		{"llm", `{ name = "g" }`, testServeConfig("llm"), `Missing Worker Group Source`},
		{"llm", `{ name = "g", generation = "v6e", topology = "3x3" }`, testServeConfig("llm"), `Invalid Worker Group Shape`},
	}
	var ts []resource.TestStep
	for _, s := range steps {
		ts = append(ts, resource.TestStep{Config: config(s.name, s.groups, s.serve), PlanOnly: true, ExpectError: regexp.MustCompile(s.want)})
	}
	resource.UnitTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: ts})
}
