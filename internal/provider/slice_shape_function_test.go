package provider

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

func TestAccSliceShapeFunction_matchesDataSource(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.ProviderFunctions)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "raytpu_topology" "v4" {
  generation = "v4"
  topology   = "2x2x2"
}
data "raytpu_topology" "v5e" {
  generation = "v5litepod"
  topology   = "2x2"
}
data "raytpu_topology" "v5p" {
  generation = "v5p"
  topology   = "2x2x1"
}
data "raytpu_topology" "v6e" {
  generation = "v6e"
  topology   = "8x16"
}
data "raytpu_topology" "tpu7x" {
  generation = "tpu7x"
  topology   = "2x2x4"
}

output "same_as_data_source" {
  value = alltrue([
    provider::raytpu::slice_shape("v4", "2x2x2") == data.raytpu_topology.v4,
    provider::raytpu::slice_shape("v5litepod", "2x2") == data.raytpu_topology.v5e,
    provider::raytpu::slice_shape("v5p", "2x2x1") == data.raytpu_topology.v5p,
    provider::raytpu::slice_shape("v6e", "8x16") == data.raytpu_topology.v6e,
    provider::raytpu::slice_shape("tpu7x", "2x2x4") == data.raytpu_topology.tpu7x,
  ])
}

output "differs_from_other_shape" {
  value = provider::raytpu::slice_shape("v6e", "4x4") == data.raytpu_topology.v6e
}

output "v6e" {
  value = provider::raytpu::slice_shape("trillium", "8x16")
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("same_as_data_source", knownvalue.Bool(true)),
				statecheck.ExpectKnownOutputValue("differs_from_other_shape", knownvalue.Bool(false)),
				statecheck.ExpectKnownOutputValue("v6e", knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"generation":       knownvalue.StringExact("v6e"),
					"accelerator_type": knownvalue.StringExact("v6e-128"),
					"machine_type":     knownvalue.StringExact("ct6e-standard-4t"),
					"num_hosts":        knownvalue.Int64Exact(32),
					"total_chips":      knownvalue.Int64Exact(128),
				})),
			},
		}},
	})
}

func TestAccSliceShapeFunction_invalidArguments(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.ProviderFunctions)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      `output "x" { value = provider::raytpu::slice_shape("v9", "4x4") }`,
				ExpectError: regexp.MustCompile(`(?s)unknown TPU generation "v9"`),
			},
			{
				Config:      `output "x" { value = provider::raytpu::slice_shape("v5p", "4x4x6") }`,
				ExpectError: regexp.MustCompile(`(?s)4x4x6 is not a v5p slice shape`),
			},
		},
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
