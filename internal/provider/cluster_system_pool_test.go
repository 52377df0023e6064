package provider

import (
	"context"
	"fmt"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// TestAccCluster_systemPoolInPlace changes the system pool's node count, then its machine type, each
// alone: the cluster and its slice stay, and a resize made outside Terraform shows in the next plan.
func TestAccCluster_systemPoolInPlace(t *testing.T) {
	t.Parallel()
	const name = "acc-system-pool"
	pool := gke.NodePoolID{Cluster: gke.ClusterID{Project: testProject, Location: testLocation, Name: name}, Name: systemPoolName}
	const slice = `
resource "raytpu_slice" "one" {
  cluster    = raytpu_cluster.test.id
  name       = "slice-one"
  generation = "v6e"
  topology   = "2x2"
}
`
	config := testAccSliceConfig(name, slice)
	grown := testAccClusterConfig(name, `system_pool = { machine_type = "e2-standard-8", node_count = 2 }`) + slice
	resized := testAccClusterConfig(name, `system_pool = { machine_type = "e2-standard-4", node_count = 2 }`) + slice
	systemPool := func(machineType string, nodes int64) statecheck.StateCheck {
		return at("raytpu_cluster.test", "system_pool", knownvalue.ObjectExact(map[string]knownvalue.Check{
			"machine_type": knownvalue.StringExact(machineType), "node_count": knownvalue.Int64Exact(nodes),
		}))
	}
	sameCluster := statecheck.CompareValue(compare.ValuesSame())
	sameSlice := statecheck.CompareValue(compare.ValuesSame())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					systemPool("e2-standard-8", 1),
					sameCluster.AddStateValue("raytpu_cluster.test", tfjsonpath.New("endpoint")),
					sameSlice.AddStateValue("raytpu_slice.one", tfjsonpath.New("hosts")),
				},
			},
			{
				// The node count alone.
				Config: grown,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					systemPool("e2-standard-8", 2),
					sameCluster.AddStateValue("raytpu_cluster.test", tfjsonpath.New("endpoint")),
				},
				Check: poolNodes("raytpu_cluster.test", systemPoolName, 2, "e2-standard-8"),
			},
			{
				// The machine type alone.
				Config: resized,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("raytpu_slice.one", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					systemPool("e2-standard-4", 2),
					sameCluster.AddStateValue("raytpu_cluster.test", tfjsonpath.New("endpoint")),
					sameSlice.AddStateValue("raytpu_slice.one", tfjsonpath.New("hosts")),
				},
				Check: poolNodes("raytpu_cluster.test", systemPoolName, 2, "e2-standard-4"),
			},
			clusterImportStep(name),
			{
				// Resized outside Terraform: the plan sizes it back.
				PreConfig: func() {
					c := testGKEClient(t)
					if err := mutateNodePool(context.Background(), c, pool, func(ctx context.Context) (*containerpb.Operation, error) {
						return c.SetNodePoolSize(ctx, pool, 3)
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: resized,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{systemPool("e2-standard-4", 2)},
				Check:             poolNodes("raytpu_cluster.test", systemPoolName, 2, "e2-standard-4"),
			},
		},
	})
}

// poolNodes checks, in the cluster's API server, that node pool pool has want nodes of machineType.
func poolNodes(clusterAddress, pool string, want int, machineType string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		k, err := stateKubeClient(s, clusterAddress)
		if err != nil {
			return err
		}
		defer k.Close()
		hosts, err := k.SliceHosts(context.Background(), pool)
		if err != nil {
			return err
		}
		if len(hosts) != want {
			return fmt.Errorf("node pool %s has %d nodes, want %d", pool, len(hosts), want)
		}
		for _, h := range hosts {
			if got := h.Labels[corev1.LabelInstanceTypeStable]; got != machineType {
				return fmt.Errorf("node %s is a %s, want %s", h.Name, got, machineType)
			}
		}
		return nil
	}
}
