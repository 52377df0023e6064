package provider

import (
	"context"
	"fmt"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// TestAccCluster_minMasterVersionIsAMinimum lets GKE upgrade the control plane past
// min_master_version, as its automatic upgrades do, and then changes the release channel and
// min_master_version: a control plane at or above the minimum is left where it is, one below it
// is upgraded.
func TestAccCluster_minMasterVersionIsAMinimum(t *testing.T) {
	t.Parallel()
	const name = "acc-minimum"
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	config := func(channel, minimum string) string {
		return testAccClusterConfig(name, fmt.Sprintf(`release_channel    = %q
  min_master_version = %q`, channel, minimum))
	}
	masterVersion := func(want string) statecheck.StateCheck {
		return at("raytpu_cluster.test", "master_version", knownvalue.StringExact(want))
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:            config("REGULAR", "1.34.0"),
				ConfigStateChecks: []statecheck.StateCheck{masterVersion("1.34.0-gke.2201000")},
			},
			{
				// GKE upgrades the control plane past the minimum; then the channel changes.
				PreConfig: func() {
					c := testGKEClient(t)
					if err := mutateCluster(context.Background(), c, id, func(ctx context.Context) (*containerpb.Operation, error) {
						return c.UpdateCluster(ctx, id, &containerpb.ClusterUpdate{DesiredMasterVersion: "1.34.1-gke.1829001"})
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("RAPID", "1.34.0"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					masterVersion("1.34.1-gke.1829001"),
					at("raytpu_cluster.test", "release_channel", knownvalue.StringExact("RAPID")),
				},
			},
			{
				// A lower minimum, which RAPID does not offer: the control plane stays.
				Config:            config("RAPID", "1.33"),
				ConfigStateChecks: []statecheck.StateCheck{masterVersion("1.34.1-gke.1829001")},
			},
			{
				// A higher one upgrades it, to the newest version of the channel that matches.
				Config:            config("RAPID", "1.35"),
				ConfigStateChecks: []statecheck.StateCheck{masterVersion("1.35.0-gke.1795000")},
			},
		},
	})
}
