package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// GKE answers with more than it was sent (the emulator's package doc lists each behaviour and
// its source): a node pool's reserved goog-gke-* resource labels, Cluster.network and .subnetwork as
// names whatever form was sent, OAuth scopes in its own order. Each apply below would otherwise
// end in "Provider produced inconsistent result after apply", and the next plan show a change.
func TestAccGKEAnswers_labelsNetworksScopes(t *testing.T) {
	t.Parallel()
	network := fmt.Sprintf("projects/%s/global/networks/default", testProject)
	subnetwork := fmt.Sprintf("https://www.googleapis.com/compute/v1/projects/%s/regions/us-central2/subnetworks/default", testProject)
	config := func(labels string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "test" {
  name                = "acc-answers"
  deletion_protection = false
  network             = %q
  subnetwork          = %q
}

resource "raytpu_slice" "test" {
  cluster          = raytpu_cluster.test.id
  name             = "workers"
  accelerator_type = "v6e-4"
  oauth_scopes     = ["https://www.googleapis.com/auth/logging.write", "https://www.googleapis.com/auth/devstorage.read_only"]
  %s
}

resource "raytpu_slice" "bare" {
  cluster          = raytpu_cluster.test.id
  name             = "bare"
  accelerator_type = "v6e-4"
}
`, network, subnetwork, labels)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(`resource_labels = { goog-gke-node-pool-provisioning-model = "spot" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Reserved Resource Label.*goog-gke-node-pool-provisioning-model`),
			},
			{
				Config: config(`resource_labels = { team = "ml" }`),
				Check:  reservedLabelsAt("acc-answers", "workers", "bare"),
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_cluster.test", "network", knownvalue.StringExact(network)),
					at("raytpu_cluster.test", "subnetwork", knownvalue.StringExact(subnetwork)),
					at("raytpu_slice.test", "resource_labels", knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("ml")})),
					at("raytpu_slice.bare", "resource_labels", knownvalue.Null()),
				},
			},
			{
				// Changed in place; GKE keeps its own labels, raytpu leaves them out.
				Config: config(`resource_labels = { team = "infra" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionNoop),
				}},
				Check: reservedLabelsAt("acc-answers", "workers"),
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "resource_labels", knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("infra")})),
				},
			},
		},
	})
}

// reservedLabelsAt checks that GKE holds its reserved provisioning-model label on each pool, so that
// the state checks above test raytpu reading past it.
func reservedLabelsAt(cluster string, pools ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		for _, pool := range pools {
			np, err := c.GetNodePool(context.Background(), nodePoolIDFor(cluster, pool))
			if err != nil {
				return err
			}
			if got := np.GetConfig().GetResourceLabels()["goog-gke-node-pool-provisioning-model"]; got != "on-demand" {
				return fmt.Errorf("node pool %s: GKE's goog-gke-node-pool-provisioning-model label is %q, want on-demand", pool, got)
			}
		}
		return nil
	}
}
