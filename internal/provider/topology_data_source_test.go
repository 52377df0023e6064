package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// expectShape checks every derived attribute of one raytpu_topology data source.
type expectShape struct {
	generation, topology, acceleratorType      string
	gkeAccelerator, machineType, placementType string
	chipsPerHost, hosts, chips                 int64
	multiHost                                  bool
	minVersion                                 string
	rayVersion, rayType, podType, headResource string
	raySupported                               bool
}

func (e expectShape) checks(address string) []statecheck.StateCheck {
	at := func(attribute string, check knownvalue.Check) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(address, tfjsonpath.New(attribute), check)
	}
	return []statecheck.StateCheck{
		at("generation", knownvalue.StringExact(e.generation)),
		at("topology", knownvalue.StringExact(e.topology)),
		at("accelerator_type", knownvalue.StringExact(e.acceleratorType)),
		at("gke_accelerator", knownvalue.StringExact(e.gkeAccelerator)),
		at("machine_type", knownvalue.StringExact(e.machineType)),
		at("chips_per_host", knownvalue.Int64Exact(e.chipsPerHost)),
		at("num_hosts", knownvalue.Int64Exact(e.hosts)),
		at("total_chips", knownvalue.Int64Exact(e.chips)),
		at("multi_host", knownvalue.Bool(e.multiHost)),
		at("placement_type", knownvalue.StringExact(e.placementType)),
		at("min_gke_version", knownvalue.StringExact(e.minVersion)),
		at("node_selector", knownvalue.MapExact(map[string]knownvalue.Check{
			"cloud.google.com/gke-tpu-accelerator": knownvalue.StringExact(e.gkeAccelerator),
			"cloud.google.com/gke-tpu-topology":    knownvalue.StringExact(e.topology),
		})),
		at("tpu_resource", knownvalue.MapExact(map[string]knownvalue.Check{
			"google.com/tpu": knownvalue.StringExact(itoa(e.chipsPerHost)),
		})),
		at("ray", knownvalue.ObjectExact(map[string]knownvalue.Check{
			"accelerator_version": knownvalue.StringExact(e.rayVersion),
			"accelerator_type":    knownvalue.StringExact(e.rayType),
			"pod_type":            knownvalue.StringExact(e.podType),
			"head_resource":       knownvalue.StringExact(e.headResource),
			"topology_supported":  knownvalue.Bool(e.raySupported),
		})),
	}
}

func TestAccTopologyDataSource_everyGeneration(t *testing.T) {
	t.Parallel()
	shapes := map[string]expectShape{
		"data.raytpu_topology.v4": {
			"v4", "2x2x4", "v4-32", "tpu-v4-podslice", "ct4p-hightpu-4t", "COMPACT", 4, 4, 16, true,
			"1.26.1-gke.1500", "v4", "TPU-V4", "v4-32", "TPU-v4-32-head", true,
		},
		"data.raytpu_topology.v5e": {
			"v5e", "4x4", "v5litepod-16", "tpu-v5-lite-podslice", "ct5lp-hightpu-4t", "COMPACT", 4, 4, 16, true,
			"1.27.2-gke.2100", "v5litepod", "TPU-V5LITEPOD", "v5litepod-16", "TPU-v5litepod-16-head", true,
		},
		"data.raytpu_topology.v5p": {
			"v5p", "4x4x4", "v5p-128", "tpu-v5p-slice", "ct5p-hightpu-4t", "COMPACT", 4, 16, 64, true,
			"1.28.3-gke.1024000", "v5p", "TPU-V5P", "v5p-128", "TPU-v5p-128-head", true,
		},
		"data.raytpu_topology.v6e_two_vms": {
			"v6e", "2x4", "v6e-8", "tpu-v6e-slice", "ct6e-standard-4t", "COMPACT", 4, 2, 8, true,
			"1.31.2-gke.1115000", "v6e", "TPU-V6E", "v6e-8", "TPU-v6e-8-head", true,
		},
		"data.raytpu_topology.v6e_single": {
			"v6e", "2x4", "v6e-8", "tpu-v6e-slice", "ct6e-standard-8t", "NONE", 8, 1, 8, false,
			"1.31.2-gke.1115000", "v6e", "TPU-V6E", "v6e-8", "TPU-v6e-8-head", true,
		},
		"data.raytpu_topology.tpu7x": {
			"tpu7x", "4x4x12", "tpu7x-384", "tpu7x", "tpu7x-standard-4t", "WORKLOAD_POLICY", 4, 48, 192, true,
			"1.34.0-gke.2201000", "v7x", "TPU-V7X", "v7x-384", "TPU-v7x-384-head", false,
		},
	}
	var checks []statecheck.StateCheck
	for address, shape := range shapes {
		checks = append(checks, shape.checks(address)...)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "raytpu_topology" "v4" {
  generation = "v4"
  topology   = "2x2x4"
}
data "raytpu_topology" "v5e" {
  accelerator_type = "v5litepod-16"
}
data "raytpu_topology" "v5p" {
  accelerator_type = "v5p-128"
}
data "raytpu_topology" "v6e_two_vms" {
  generation     = "trillium"
  topology       = "2x4"
  chips_per_host = 4
}
data "raytpu_topology" "v6e_single" {
  generation = "v6e"
  topology   = "2x4"
}
data "raytpu_topology" "tpu7x" {
  generation = "ironwood"
  topology   = "4x4x12"
}
`,
			ConfigStateChecks: checks,
		}},
	})
}

func TestAccTopologyDataSource_invalidInput(t *testing.T) {
	t.Parallel()
	step := func(body, pattern string) resource.TestStep {
		return resource.TestStep{
			Config:      "data \"raytpu_topology\" \"x\" {\n" + body + "\n}\n",
			ExpectError: regexp.MustCompile(pattern),
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(`generation = "v3"
topology = "4x4"`, `(?s)Invalid TPU Generation.*unknown TPU generation "v3".*v4, v5e, v5p, v6e, tpu7x`),
			step(`generation = "v6e"
topology = "3x3"`, `(?s)Invalid TPU Topology.*3x3 is not a v6e slice shape.*2x4 \(8 chips\), 4x4 \(16 chips\)`),
			step(`generation = "v5p"
topology = "8x4x4"`, `(?s)Invalid TPU Topology.*non-decreasing order: write 4x4x8`),
			step(`generation = "v6e"
topology = "4X4"`, `(?s)Invalid TPU Topology.*upper-case X`),
			step(`generation = "v6e"
topology = "4x4"
chips_per_host = 8`, `(?s)Invalid Chips Per Host.*chips_per_host = 8 does not fit v6e 4x4: valid values\s+are 4`),
			step(`accelerator_type = "v6e-12"`, `(?s)Invalid TPU Accelerator Type.*v6e has no slice of 12 chips`),
			step(`accelerator_type = "v6e-16"
generation = "v6e"`, `(?s)Conflicting TPU Shape Attributes.*accelerator_type cannot be combined with generation or\s+topology`),
			step(`generation = "v6e"`, `(?s)Missing TPU Topology.*topology is required with generation`),
			step(``, `(?s)Missing TPU Shape.*generation and topology.*or accelerator_type`),
		},
	})
}

// TestAccTopologyDataSource_unknownUntilApply checks that an input known only at apply time is
// validated then instead of failing the plan.
func TestAccTopologyDataSource_unknownUntilApply(t *testing.T) {
	t.Parallel()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "raytpu_topology" "first" {
  accelerator_type = "v6e-16"
}
data "raytpu_topology" "derived" {
  generation = data.raytpu_topology.first.generation
  topology   = data.raytpu_topology.first.topology == "4x4" ? "4x8" : "1x1"
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.raytpu_topology.derived", tfjsonpath.New("num_hosts"), knownvalue.Int64Exact(8)),
			},
		}},
	})
}
