package provider

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccSlice_labelsOthersAdd: a Kubernetes label another writer puts on the pool (as GKE or a
// tool does) is none of raytpu_slice's, so the plan stays empty and an update keeps it; a label the
// configuration sets, changed or removed outside Terraform, shows in the plan and is set again.
func TestAccSlice_labelsOthersAdd(t *testing.T) {
	t.Parallel()
	const cluster, pool = "acc-labels", "labelled"
	config := testAccSliceConfig(cluster, fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = %q
  generation = "v6e"
  topology   = "2x2"
  labels     = { team = "ml" }
}
`, pool))
	const other, otherValue = "tools.example.com/owner", "scheduler"
	own := knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("ml")})
	replanned := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionUpdate),
		plancheck.ExpectKnownValue("raytpu_slice.test", tfjsonpath.New("labels"), own),
	}}
	want := map[string]string{"team": "ml", other: otherValue}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, ConfigStateChecks: []statecheck.StateCheck{at("raytpu_slice.test", "labels", own)}},
			{
				PreConfig:         func() { setNodeLabelsOutOfBand(t, cluster, pool, want) },
				Config:            config,
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{at("raytpu_slice.test", "labels", own)},
			},
			{
				// Changed outside Terraform: set back, the other label kept.
				PreConfig: func() {
					setNodeLabelsOutOfBand(t, cluster, pool, map[string]string{"team": "infra", other: otherValue})
				},
				Config:           config,
				ConfigPlanChecks: replanned,
				Check:            nodeLabelsAre(cluster, pool, want),
			},
			{
				// Removed outside Terraform: set again, the other label kept.
				PreConfig:        func() { setNodeLabelsOutOfBand(t, cluster, pool, map[string]string{other: otherValue}) },
				Config:           config,
				ConfigPlanChecks: replanned,
				Check:            nodeLabelsAre(cluster, pool, want),
			},
		},
	})
}

// setNodeLabelsOutOfBand replaces the Kubernetes labels of a node pool, as another writer would.
func setNodeLabelsOutOfBand(t *testing.T, cluster, pool string, labels map[string]string) {
	t.Helper()
	id := nodePoolIDFor(cluster, pool)
	if err := editNodeLabels(context.Background(), testGKEClient(t), id, func(map[string]string) map[string]string { return labels }); err != nil {
		t.Fatalf("setting the labels of %s out of band: %v", id, err)
	}
}

func nodeLabelsAre(cluster, pool string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := nodePoolOutOfBand(cluster, pool)
		if err != nil {
			return err
		}
		if !maps.Equal(got.GetConfig().GetLabels(), want) {
			return fmt.Errorf("node pool %s has labels %v, want %v", pool, got.GetConfig().GetLabels(), want)
		}
		return nil
	}
}

// nodePoolOutOfBand is node pool pool of cluster as GKE reports it.
func nodePoolOutOfBand(cluster, pool string) (*containerpb.NodePool, error) {
	c, err := newTestGKEClient()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.GetNodePool(context.Background(), nodePoolIDFor(cluster, pool))
}
