package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// gkeAutoscaling reads the cluster's node auto-provisioning from GKE as "off", or as
// "cpu=min-max memory=min-max <accelerator>=max ... @zones", resource types sorted.
func gkeAutoscaling(name, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cluster, err := clusterOutOfBand(gke.ClusterID{Project: testProject, Location: testLocation, Name: name})
		if err != nil {
			return err
		}
		if got := describeAutoscaling(cluster.GetAutoscaling()); got != want {
			return fmt.Errorf("GKE's node auto-provisioning of %s is %q, want %q", name, got, want)
		}
		return nil
	}
}

func describeAutoscaling(a *containerpb.ClusterAutoscaling) string {
	if !a.GetEnableNodeAutoprovisioning() {
		return "off"
	}
	var parts []string
	for _, l := range a.GetResourceLimits() {
		if l.GetResourceType() == resourceCPU || l.GetResourceType() == resourceMemory {
			parts = append(parts, fmt.Sprintf("%s=%d-%d", l.GetResourceType(), l.GetMinimum(), l.GetMaximum()))
		} else {
			parts = append(parts, fmt.Sprintf("%s=%d", l.GetResourceType(), l.GetMaximum()))
		}
	}
	sort.Strings(parts)
	if len(a.GetAutoprovisioningLocations()) > 0 {
		parts = append(parts, "@"+strings.Join(a.GetAutoprovisioningLocations(), ","))
	}
	return strings.Join(parts, " ")
}

// setAutoscalingOutOfBand replaces the cluster's node auto-provisioning behind Terraform's back.
func setAutoscalingOutOfBand(t *testing.T, name string, a *containerpb.ClusterAutoscaling) {
	t.Helper()
	c := testGKEClient(t)
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	op, err := c.UpdateCluster(context.Background(), id, &containerpb.ClusterUpdate{DesiredClusterAutoscaling: a})
	if err == nil {
		err = c.WaitForOperation(context.Background(), id, op)
	}
	if err != nil {
		t.Fatalf("setting the node auto-provisioning of %s out of band: %v", id, err)
	}
}

func TestAccClusterAutoProvisioning_limits(t *testing.T) {
	t.Parallel()
	name := "acc-nap"
	const address = "raytpu_cluster.test"
	first := `auto_provisioning = {
    max_cpu       = 64
    max_memory_gb = 256
    tpu_limits    = [{ generation = "trillium", max_chips = 64 }]
  }`
	second := `auto_provisioning = {
    min_cpu       = 4
    max_cpu       = 96
    max_memory_gb = 384
    tpu_limits = [
      { generation = "v6e", max_chips = 128 },
      { generation = "v5p", max_chips = 32 },
    ]
    locations = ["` + testLocation + `"]
  }`
	limit := func(generation string, chips int64) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"generation": knownvalue.StringExact(generation), "max_chips": knownvalue.Int64Exact(chips),
		})
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: testAccClusterConfig(name, first),
				Check:  gkeAutoscaling(name, "cpu=0-64 memory=0-256 tpu-v6e-slice=64"),
				ConfigStateChecks: []statecheck.StateCheck{
					// The generation keeps the configured alias: no diff after apply.
					statecheck.ExpectKnownValue(address, tfjsonpath.New("auto_provisioning").AtMapKey("tpu_limits"),
						knownvalue.ListExact([]knownvalue.Check{limit("trillium", 64)})),
					statecheck.ExpectKnownValue(address, tfjsonpath.New("auto_provisioning").AtMapKey("locations"), knownvalue.Null()),
				},
			},
			{
				Config: testAccClusterConfig(name, second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: gkeAutoscaling(name, "cpu=4-96 memory=0-384 tpu-v5p-slice=32 tpu-v6e-slice=128 @"+testLocation),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(address, tfjsonpath.New("auto_provisioning").AtMapKey("tpu_limits"),
						knownvalue.ListExact([]knownvalue.Check{limit("v6e", 128), limit("v5p", 32)})),
					statecheck.ExpectKnownValue(address, tfjsonpath.New("auto_provisioning").AtMapKey("locations"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(testLocation)})),
				},
			},
			{
				// Limits changed outside Terraform show in the plan and are set back.
				PreConfig: func() {
					setAutoscalingOutOfBand(t, name, &containerpb.ClusterAutoscaling{
						EnableNodeAutoprovisioning: true,
						ResourceLimits: []*containerpb.ResourceLimit{
							{ResourceType: "cpu", Minimum: 4, Maximum: 96}, {ResourceType: "memory", Maximum: 384},
							{ResourceType: "tpu-v6e-slice", Maximum: 16}, {ResourceType: "tpu-v5p-slice", Maximum: 32},
						},
						AutoprovisioningLocations: []string{testLocation},
					})
				},
				Config: testAccClusterConfig(name, second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: gkeAutoscaling(name, "cpu=4-96 memory=0-384 tpu-v5p-slice=32 tpu-v6e-slice=128 @"+testLocation),
			},
			{
				// Turned off outside Terraform: the plan turns it on again.
				PreConfig: func() {
					setAutoscalingOutOfBand(t, name, &containerpb.ClusterAutoscaling{EnableNodeAutoprovisioning: false})
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check:              resource.TestCheckNoResourceAttr(address, "auto_provisioning.max_cpu"),
			},
			{
				Config: testAccClusterConfig(name, second),
				Check:  gkeAutoscaling(name, "cpu=4-96 memory=0-384 tpu-v5p-slice=32 tpu-v6e-slice=128 @"+testLocation),
			},
			{
				// Removing it turns node auto-provisioning off, in place.
				Config: testAccClusterConfig(name, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: gkeAutoscaling(name, "off"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(address, tfjsonpath.New("auto_provisioning"), knownvalue.Null()),
				},
			},
		},
	})
}

func TestAccClusterAutoProvisioning_planTimeErrors(t *testing.T) {
	t.Parallel()
	plan := func(body string, want string) resource.TestStep {
		return resource.TestStep{
			Config:      testAccClusterConfig("acc-nap-errors", "auto_provisioning = {\n"+body+"\n}"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			plan(`max_cpu = 8
max_memory_gb = 32
tpu_limits = [{ generation = "v9", max_chips = 8 }]`,
				`(?s)Unknown TPU Generation.*auto_provisioning\.tpu_limits\[0\]\.generation.*valid generations are v4, v5e, v5p, v6e, tpu7x`),
			plan(`max_cpu = 8
max_memory_gb = 32
tpu_limits = [{ generation = "v6e", max_chips = 8 }, { generation = "trillium", max_chips = 16 }]`,
				`(?s)Duplicate TPU Limit.*auto_provisioning\.tpu_limits\[0\] and.*auto_provisioning\.tpu_limits\[1\] both.*limit v6e.*tpu-v6e-slice`),
			plan(`min_cpu = 16
max_cpu = 8
max_memory_gb = 32
tpu_limits = [{ generation = "v6e", max_chips = 8 }]`,
				`(?s)Invalid Auto-provisioning Limit.*auto_provisioning\.min_cpu = 16 is above max_cpu = 8`),
			plan(`max_cpu = 8
max_memory_gb = 32
tpu_limits = [{ generation = "v6e", max_chips = 0 }]`,
				`(?s)auto_provisioning\.tpu_limits\[0\]\.max_chips.*at least 1`),
			plan(`max_cpu = 8
tpu_limits = [{ generation = "v6e", max_chips = 8 }]`,
				`(?s)max_memory_gb.*required`),
		},
	})
}
