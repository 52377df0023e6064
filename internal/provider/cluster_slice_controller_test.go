package provider

import (
	"fmt"
	"regexp"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// GKE's requirements of the slice controller, refused at plan with the attribute to change: the
// Rapid channel, and a version at or above 1.35.2-gke.1842000 whether written, resolved in the
// channel or the channel's default.
func TestAccCluster_sliceControllerRequirements(t *testing.T) {
	t.Parallel()
	step := func(extra, want string) resource.TestStep {
		return resource.TestStep{
			Config: testAccClusterConfig("acc-slices-plan", extra), PlanOnly: true, ExpectError: regexp.MustCompile(want),
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step("slice_controller = true", `(?s)Slice Controller Needs the Rapid Channel.*release_channel is\s+"REGULAR".*Set\s+release_channel\s+=\s+"RAPID"`),
			step("release_channel = \"RAPID\"\nmin_master_version = \"1.35.0-gke.1795000\"\nslice_controller = true",
				`(?s)GKE Version Too Old for the Slice Controller.*1\.35\.2-gke\.1842000 or later.*min_master_version\s+"1\.35\.0-gke\.1795000"\s+resolves.*Set\s+min_master_version\s+=\s+"1\.35\.2-gke\.1842000"`),
			step("release_channel = \"RAPID\"\nslice_controller = true",
				`(?s)GKE Version Too Old for the Slice Controller.*RAPID\s+channel's\s+default,\s+1\.35\.0-gke\.1795000`),
			step("release_channel = \"RAPID\"\nmin_master_version = \"1.34\"\nslice_controller = true",
				`(?s)GKE Version Too Old for the Slice Controller.*resolves\s+in\s+the\s+RAPID\s+channel\s+to\s+1\.34\.1-gke\.1829001`),
		},
	})
}

// The slice controller on a cluster that meets GKE's requirements: turned on in place, turned off
// behind Terraform's back (the next plan turns it on again), and turned off by the configuration.
func TestAccCluster_sliceController(t *testing.T) {
	t.Parallel()
	const name = "acc-slices"
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	config := func(on bool) string {
		return testAccClusterConfig(name, fmt.Sprintf("release_channel = \"RAPID\"\nmin_master_version = \"1.36\"\nslice_controller = %v", on))
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
	}}
	state := func(on bool) []statecheck.StateCheck {
		return []statecheck.StateCheck{at("raytpu_cluster.test", "slice_controller", knownvalue.Bool(on))}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(false), ConfigStateChecks: state(false), Check: sliceControllerEnabled(id, false)},
			{Config: config(true), ConfigPlanChecks: update, ConfigStateChecks: state(true), Check: sliceControllerEnabled(id, true)},
			{
				PreConfig: func() {
					setAddonsOutOfBand(t, id, &containerpb.AddonsConfig{SliceControllerConfig: &containerpb.SliceControllerConfig{}})
				},
				Config:            config(true),
				ConfigPlanChecks:  update,
				ConfigStateChecks: state(true),
				Check:             resource.ComposeTestCheckFunc(sliceControllerEnabled(id, true), rayAddonEnabled(id, true)),
			},
			{Config: config(false), ConfigPlanChecks: update, ConfigStateChecks: state(false), Check: sliceControllerEnabled(id, false)},
		},
	})
}

func sliceControllerEnabled(id gke.ClusterID, want bool) resource.TestCheckFunc {
	return addonEnabled(id, "slice controller", func(a *containerpb.AddonsConfig) bool { return a.GetSliceControllerConfig().GetEnabled() }, want)
}
