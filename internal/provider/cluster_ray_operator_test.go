package provider

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// TestAccCluster_rayOperatorDisabledOutsideTerraform turns the Ray Operator add-on off behind
// Terraform's back, its logging and monitoring left at their defaults: the next plan shows it, and
// the apply turns it on again and waits for KubeRay.
func TestAccCluster_rayOperatorDisabledOutsideTerraform(t *testing.T) {
	t.Parallel()
	const name = "acc-ray-off"
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	config := testAccClusterConfig(name, "")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() { setRayAddonOutOfBand(t, id, false) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_cluster.test", "ray_operator", knownvalue.ObjectExact(map[string]knownvalue.Check{
						"logging": knownvalue.Bool(false), "monitoring": knownvalue.Bool(false),
					})),
					at("raytpu_cluster.test", "kuberay", knownvalue.ObjectPartial(map[string]knownvalue.Check{"ready": knownvalue.Bool(true)})),
				},
				Check: rayAddonEnabled(id, true),
			},
		},
	})
}

// TestKubeRayStateDoesNotWaitForADisabledAddon: GKE installs KubeRay with the add-on, so a wait
// for its CRDs on a cluster without it ends at once and says why.
func TestKubeRayStateDoesNotWaitForADisabledAddon(t *testing.T) {
	cluster := &containerpb.Cluster{Name: "off", Status: containerpb.Cluster_RUNNING,
		AddonsConfig: &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: false}}}
	// Done already: a wait would end at once, with its own failure instead of the reason it need
	// not wait, however fast or slow the machine.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, diags := kubeRayState(ctx, nil, cluster, true, kubePollInterval, "raytpu_cluster (off)")
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), "add-on is disabled") {
		t.Errorf("diagnostics %v, want an error saying the add-on is disabled", diags)
	}
}
