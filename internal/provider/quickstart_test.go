package provider

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccQuickstart applies and destroys examples/quickstart as written (its terraform block aside,
// which names the registry address), with the provider configured from the environment as a user
// of the emulator would. It sets environment variables, so it does not run in parallel.
func TestAccQuickstart(t *testing.T) {
	config, err := os.ReadFile("../../examples/quickstart/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("RAYTPU_CONTAINER_ENDPOINT", testEmulator.Endpoint())
	t.Setenv("RAYTPU_COMPUTE_ENDPOINT", testEmulator.ComputeEndpoint())
	t.Setenv("GOOGLE_OAUTH_ACCESS_TOKEN", testEmulator.Token())
	slice := func(acceleratorType string, hosts int) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"accelerator_type": knownvalue.StringExact(acceleratorType),
			"num_hosts":        knownvalue.Int64Exact(int64(hosts)),
			"hosts":            knownvalue.ListSizeExact(hosts),
			"healthy":          knownvalue.Bool(true),
		})
	}
	resource.Test(t, resource.TestCase{
		IsUnitTest:               true,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: string(config),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("slices", knownvalue.MapExact(map[string]knownvalue.Check{
					"trillium-0":      slice("v6e-16", 4),
					"trillium-1":      slice("v6e-16", 4),
					"trillium-single": slice("v6e-4", 1),
				})),
				statecheck.ExpectKnownOutputValueAtPath("cluster", tfjsonpath.New("kuberay_ready"), knownvalue.Bool(true)),
				statecheck.ExpectKnownOutputValueAtPath("ray_cluster", tfjsonpath.New("healthy"), knownvalue.Bool(true)),
				// One replica per 4x4 slice, four hosts each; one single host; one auto-provisioned
				// 2x4 of two hosts.
				statecheck.ExpectKnownOutputValueAtPath("ray_cluster", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
					"multislice":  replicas(4, 4),
					"single-host": replicas(1),
					"on-demand":   replicas(2),
				})),
			},
			Check: quickstartPlacementOnSlices,
		}},
	})
}

// replicas checks a worker group's placement: one replica per argument, of that many hosts.
func replicas(hosts ...int) knownvalue.Check {
	checks := make([]knownvalue.Check, len(hosts))
	for i, n := range hosts {
		checks[i] = knownvalue.ListSizeExact(n)
	}
	return knownvalue.ListExact(checks)
}

// quickstartPlacementOnSlices checks each group's replicas against the slices they should take:
// the multislice replicas on the two trillium slices, the single host on its slice, and the
// on-demand replica on a node pool that node auto-provisioning created.
func quickstartPlacementOnSlices(s *terraform.State) error {
	rc, ok := s.RootModule().Outputs["ray_cluster"].Value.(map[string]any)
	if !ok {
		return fmt.Errorf("ray_cluster output is %T", s.RootModule().Outputs["ray_cluster"].Value)
	}
	placement, _ := rc["placement"].(map[string]any)
	pools := func(group string) []string {
		var out []string
		replicas, _ := placement[group].([]any)
		for _, r := range replicas {
			hosts, _ := r.([]any)
			seen := ""
			for _, h := range hosts {
				pool, _ := h.(map[string]any)["node_pool"].(string)
				if seen != "" && pool != seen {
					return append(out, "mixed:"+seen+","+pool)
				}
				seen = pool
			}
			out = append(out, seen)
		}
		sort.Strings(out)
		return out
	}
	if got := pools("multislice"); !slices.Equal(got, []string{"trillium-0", "trillium-1"}) {
		return fmt.Errorf("multislice replicas on %v, want one on each trillium slice", got)
	}
	if got := pools("single-host"); !slices.Equal(got, []string{"trillium-single"}) {
		return fmt.Errorf("single-host worker on %v", got)
	}
	if got := pools("on-demand"); len(got) != 1 || !strings.HasPrefix(got[0], "nap-ct6e-standa-4t-") {
		return fmt.Errorf("on-demand replica on %v, want an auto-provisioned v6e pool", got)
	}
	return nil
}
