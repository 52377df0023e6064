package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccProviderConfig_problemsReportedTogether(t *testing.T) {
	t.Parallel()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
provider "raytpu" {
  credentials             = "{\"type\": \"service_account\"}"
  access_token            = "token"
  container_endpoint      = "http://10.1.2.3:8080"
  operation_poll_interval = "fast"
}
data "raytpu_topology" "x" {
  accelerator_type = "v6e-16"
}
`,
				// All three problems in one run, each on its attribute.
				ExpectError: regexp.MustCompile(`(?s)Conflicting Credentials.*Invalid Container Endpoint.*plain\s+http\s+on\s+a\s+non-loopback\s+host.*Invalid Operation Poll Interval.*"fast"\s+is\s+not\s+a\s+positive\s+duration`),
			},
			{
				Config: `
provider "raytpu" {
  credentials = "/nonexistent/key.json"
}
data "raytpu_topology" "x" {
  accelerator_type = "v6e-16"
}
`,
				ExpectError: regexp.MustCompile(`(?s)Invalid Credentials.*reading credentials file`),
			},
		},
	})
}

// TestAccProviderConfig_noCredentialsNeededForTopology shows raytpu_topology working with no
// provider configuration at all.
func TestAccProviderConfig_noCredentialsNeededForTopology(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `data "raytpu_topology" "x" { accelerator_type = "v5p-128" }`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.raytpu_topology.x", tfjsonpath.New("topology"), knownvalue.StringExact("4x4x4")),
			},
		}},
	})
}
