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
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// createPoolOutOfBand creates a node pool the way another tool would, and waits for it.
func createPoolOutOfBand(t *testing.T, cluster string, pool *containerpb.NodePool) {
	t.Helper()
	createPoolOutOfBandIn(t, nodePoolIDFor(cluster, "").Cluster, pool)
}

// createPoolOutOfBandIn is createPoolOutOfBand in a cluster of any project and location.
func createPoolOutOfBandIn(t *testing.T, cluster gke.ClusterID, pool *containerpb.NodePool) {
	t.Helper()
	c := testGKEClient(t)
	id := gke.NodePoolID{Cluster: cluster, Name: pool.GetName()}
	op, err := c.CreateNodePool(context.Background(), id, pool)
	if err == nil {
		err = c.WaitForOperation(context.Background(), id.Cluster, op)
	}
	if err != nil {
		t.Fatalf("creating %s out of band: %v", id, err)
	}
}

// TestAccSlice_importPoolsOfOtherTools reads what GKE holds, not only what raytpu creates: xpk's
// v5litepod-8 (2x4 on two ct5lp-hightpu-4t hosts) imports as a slice with chips_per_host = 4 and a
// configuration generated from the import that is valid and plans nothing; a CPU node pool imports
// with its TPU shape unknown.
func TestAccSlice_importPoolsOfOtherTools(t *testing.T) {
	t.Parallel()
	const cluster = "acc-foreign"
	xpk := testAccSliceConfig(cluster, `
resource "raytpu_slice" "xpk" {
  cluster          = raytpu_cluster.test.id
  name             = "xpk-v5e-8"
  accelerator_type = "v5litepod-8"
  chips_per_host   = 4
}
`)
	poolID := func(name string) string { return nodePoolIDFor(cluster, name).String() }
	steps := []resource.TestStep{
		{Config: testAccSliceConfig(cluster, "")},
		{
			// The pools another tool made.
			Config: testAccSliceConfig(cluster, ""),
			PreConfig: func() {
				createPoolOutOfBand(t, cluster, &containerpb.NodePool{
					Name: "xpk-v5e-8", InitialNodeCount: 2,
					Config:          &containerpb.NodeConfig{MachineType: "ct5lp-hightpu-4t"},
					PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "2x4"},
				})
				createPoolOutOfBand(t, cluster, &containerpb.NodePool{
					Name: "cpu", InitialNodeCount: 2, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"},
				})
			},
		},
	}
	t.Log(testCLI.Gate(acctest.ImportConfigGeneration))
	if testCLI.Supports(acctest.ImportConfigGeneration) {
		steps = append(steps, resource.TestStep{
			// terraform plan -generate-config-out: the generated configuration validates and the
			// import plans nothing more.
			Config:          testAccSliceConfig(cluster, ""),
			ResourceName:    "raytpu_slice.xpk",
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   poolID("xpk-v5e-8"),
			GenerateConfig:  true,
		})
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: append(steps, []resource.TestStep{
			{
				Config:             xpk,
				ResourceName:       "raytpu_slice.xpk",
				ImportState:        true,
				ImportStateId:      poolID("xpk-v5e-8"),
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					return wantAttributes(states, poolID("xpk-v5e-8"), map[string]string{
						"generation": "v5e", "topology": "2x4", "chips_per_host": "4", "num_hosts": "2", "multi_host": "true",
						"machine_type": "ct5lp-hightpu-4t",
					})
				},
			},
			{
				Config:           xpk,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.xpk", "hosts", knownvalue.ListSizeExact(2)),
					at("raytpu_slice.xpk", "healthy", knownvalue.Bool(true)),
				},
			},
			{
				// The configuration a CPU pool is imported into still needs a TPU shape to validate.
				Config: xpk + `
resource "raytpu_slice" "cpu" {
  cluster    = raytpu_cluster.test.id
  name       = "cpu"
  generation = "v6e"
  topology   = "2x2"
}
`,
				ResourceName:  "raytpu_slice.cpu",
				ImportState:   true,
				ImportStateId: poolID("cpu"),
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					return wantAttributes(states, poolID("cpu"), map[string]string{
						"generation": "", "topology": "", "accelerator_type": "", "machine_type": "e2-standard-4", "num_hosts": "2",
						"status": "RUNNING", "ready_hosts": "2",
					})
				},
			},
		}...),
	})
}

// wantAttributes checks flat attributes ("" for null) of the imported state whose id is id.
func wantAttributes(states []*terraform.InstanceState, id string, want map[string]string) error {
	for _, s := range states {
		if s.ID != id {
			continue
		}
		for key, value := range want {
			if got := s.Attributes[key]; got != value {
				return fmt.Errorf("imported %s = %q, want %q", key, got, value)
			}
		}
		return nil
	}
	return fmt.Errorf("no state of %s among the %d imported", id, len(states))
}
