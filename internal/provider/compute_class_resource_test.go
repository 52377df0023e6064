package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// computeClassFallback is the v6e 2x4 chain of Google's reference class (accelerated-platforms'
// custom-compute-tpu-v6e-2x4.yaml): a reservation, on demand, flex-start for 7 days, Spot.
const computeClassFallback = `priorities = [
    { generation = "v6e", topology = "2x4", capacity = "reservation", reservation = "tpu-v6e-specific" },
    { generation = "v6e", topology = "2x4", capacity = "on-demand" },
    { generation = "v6e", topology = "2x4", capacity = "flex-start", max_run_duration_seconds = 604800, node_recycling_lead_time_seconds = 3600 },
    { generation = "v6e", topology = "2x4", capacity = "spot" },
  ]`

func testAccComputeClassConfig(cluster, more string) string {
	if !strings.Contains(more, "priorities") {
		more = computeClassFallback + "\n  " + more
	}
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_compute_class" "test" {
  cluster_id = %q
  name       = "v6e-2x4"
  %s
}
`, cluster, more)
}

// computeClassIs checks the class the cluster has.
func computeClassIs(t *testing.T, cluster string, check func(kube.ComputeClass) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		k := testKubeClient(t, cluster)
		defer k.Close()
		cc, err := k.GetComputeClass(context.Background(), "v6e-2x4")
		if err != nil {
			return err
		}
		return check(cc)
	}
}

// A ComputeClass is created as the cluster's object, with its priorities in order and their
// capacity, imported, brought back in line after a change outside Terraform, and deleted.
func TestAccComputeClass_lifecycleImportDrift(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-compute-class", "")
	const res = "raytpu_compute_class.test"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			k := testKubeClient(t, id.Name)
			defer k.Close()
			if _, err := k.GetComputeClass(context.Background(), "v6e-2x4"); err == nil {
				return fmt.Errorf("the ComputeClass is still there")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: testAccComputeClassConfig(id.String(), ""),
				Check: computeClassIs(t, id.Name, func(cc kube.ComputeClass) error {
					want := []kube.ComputeClassPriority{
						{TPUType: "tpu-v6e-slice", Chips: 8, Topology: "2x4", MachineType: "ct6e-standard-8t", Reservation: "tpu-v6e-specific"},
						{TPUType: "tpu-v6e-slice", Chips: 8, Topology: "2x4", MachineType: "ct6e-standard-8t"},
						{TPUType: "tpu-v6e-slice", Chips: 8, Topology: "2x4", MachineType: "ct6e-standard-8t", FlexStart: true,
							MaxRunDurationSeconds: 604800, NodeRecyclingLeadTimeSeconds: 3600},
						{TPUType: "tpu-v6e-slice", Chips: 8, Topology: "2x4", MachineType: "ct6e-standard-8t", Spot: true},
					}
					if fmt.Sprint(cc.Priorities) != fmt.Sprint(want) || !cc.AutoCreation || cc.WhenUnsatisfiable != "DoNotScaleUp" {
						return fmt.Errorf("the cluster's ComputeClass is %+v, want priorities %+v, auto-creation, DoNotScaleUp", cc, want)
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("id"), knownvalue.StringExact(id.String()+"/computeClasses/v6e-2x4")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("node_selector"),
						knownvalue.MapExact(map[string]knownvalue.Check{"cloud.google.com/compute-class": knownvalue.StringExact("v6e-2x4")})),
				},
			},
			{ResourceName: res, ImportState: true, ImportStateId: id.String() + "/v6e-2x4", ImportStateVerify: true},
			{
				// Spot moved first outside Terraform: the plan puts the configured order back.
				PreConfig: func() {
					k := testKubeClient(t, id.Name)
					defer k.Close()
					cc, err := k.GetComputeClass(context.Background(), "v6e-2x4")
					if err != nil {
						t.Fatal(err)
					}
					ps := cc.Priorities
					cc.Priorities = append([]kube.ComputeClassPriority{ps[3]}, ps[:3]...)
					if err := k.ApplyComputeClass(context.Background(), cc); err != nil {
						t.Fatal(err)
					}
				},
				Config: testAccComputeClassConfig(id.String(), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(res, tfjsonpath.New("priorities").AtSliceIndex(0).AtMapKey("capacity"), knownvalue.StringExact("reservation")),
				}},
				Check: computeClassIs(t, id.Name, func(cc kube.ComputeClass) error {
					if cc.Priorities[0].Reservation != "tpu-v6e-specific" || !cc.Priorities[3].Spot {
						return fmt.Errorf("the order was not put back: %+v", cc.Priorities)
					}
					return nil
				}),
			},
		},
	})
}

// Each priority GKE would not take is refused at plan, naming the priority and what is valid.
func TestAccComputeClass_planTimeErrors(t *testing.T) {
	t.Parallel()
	const cluster = "projects/" + testProject + "/locations/" + testLocation + "/clusters/no-such"
	step := func(priority, want string) resource.TestStep {
		return resource.TestStep{
			Config:      testAccComputeClassConfig(cluster, "priorities = [\n    "+priority+",\n  ]"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(`{ generation = "v6e", topology = "3x3", capacity = "on-demand" }`, `(?s)Invalid TPU Slice.*priorities\[0\].*3x3`),
			step(`{ generation = "v6e", topology = "2x4", chips_per_host = 2, capacity = "spot" }`, `(?s)chips_per_host = 2 does not fit v6e\s+2x4.*valid\s+values\s+are\s+8,\s+4`),
			step(`{ generation = "v6e", topology = "2x4", capacity = "reservation" }`, `(?s)Reservation Needed.*set\s+reservation\s+to\s+its\s+name`),
			step(`{ generation = "v6e", topology = "2x4", capacity = "spot", reservation = "r" }`, `(?s)Reservation Without Reservation Capacity.*asks\s+for\s+spot`),
			step(`{ generation = "v6e", topology = "2x4", capacity = "on-demand", max_run_duration_seconds = 3600 }`,
				`(?s)Flex-Start Setting Without Flex-Start.*max_run_duration_seconds`),
			step(`{ generation = "v4", topology = "2x2x1", capacity = "flex-start" }`, `(?s)No Flex-Start For The Generation.*TPU v3 and v4 are not\s+supported`),
			step(`{ generation = "v6e", topology = "2x4", capacity = "flex-start", max_run_duration_seconds = 3600, node_recycling_lead_time_seconds = 3600 }`,
				`(?s)Lead Time Not Within The Run.*less\s+than\s+max_run_duration_seconds\s+=\s+3600`),
			step(`{ generation = "v6e", topology = "2x4", capacity = "flex-start", max_run_duration_seconds = 700000 }`, `(?s)between 1 and\s+604800`),
			step(`{ generation = "tpu7x", topology = "2x2x2", capacity = "on-demand" }`, `(?s)Slice Needs A Workload Policy.*workload policy`),
			step(`{ generation = "v6e", topology = "2x4", capacity = "queued" }`, `(?s)value must be one of`),
		},
	})
}
