package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"google.golang.org/api/option"
)

// TestAccSlice_parallelOnOneCluster creates four slices of one cluster in one apply and checks in
// the emulator's operation records that GKE created their pools side by side, then changes the
// cluster, a slice and adds a slice in one apply: cluster-level and node pool operations of one
// cluster wait for each other in the provider instead of failing.
func TestAccSlice_parallelOnOneCluster(t *testing.T) {
	t.Parallel()
	const poolLatency = 3 * time.Second
	const cluster = "acc-parallel"
	setClusterLatencies(t, cluster, map[string]time.Duration{"CREATE_NODE_POOL": poolLatency})
	clusterID := fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, cluster)
	config := func(label string, extra bool) string {
		slices := fmt.Sprintf(`
resource "raytpu_slice" "test" {
  count      = 4
  cluster    = raytpu_cluster.test.id
  name       = "slice-${count.index}"
  generation = "v6e"
  topology   = "4x4"
  labels     = { team = %q }
}
`, label)
		if extra {
			// Named by id, not by reference: Terraform creates it while it updates the cluster.
			slices += fmt.Sprintf(`
resource "raytpu_slice" "extra" {
  cluster    = %q
  name       = "extra"
  generation = "v6e"
  topology   = "2x2"
}
`, clusterID)
		}
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "test" {
  name                = %q
  deletion_protection = false
  resource_labels     = { phase = %q }
}
%s`, cluster, label, slices)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("a", false),
				Check:  poolCreationsOverlapped(clusterID, 4),
			},
			{
				Config: config("b", true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("raytpu_slice.test[0]", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("raytpu_slice.extra", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_cluster.test", "resource_labels", knownvalue.MapExact(map[string]knownvalue.Check{"phase": knownvalue.StringExact("b")})),
					at("raytpu_slice.test[3]", "labels", knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("b")})),
					at("raytpu_slice.extra", "healthy", knownvalue.Bool(true)),
				},
			},
			{
				Config:           config("b", true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// poolCreationsOverlapped checks the emulator's records of the cluster's CREATE_NODE_POOL
// operations started since the check was made: want of them, all running at one moment. How long
// they took together is not held to a bound: on a loaded machine registering their nodes takes
// what it takes.
func poolCreationsOverlapped(clusterID string, want int) resource.TestCheckFunc {
	since := time.Now()
	return func(*terraform.State) error {
		ctx := context.Background()
		c, err := container.NewClusterManagerRESTClient(ctx, option.WithEndpoint(testEmulator.Endpoint()), option.WithTokenSource(testTokenSource()))
		if err != nil {
			return err
		}
		defer c.Close()
		ops, err := c.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: fmt.Sprintf("projects/%s/locations/%s", testProject, testLocation)})
		if err != nil {
			return err
		}
		var starts, ends []time.Time
		for _, op := range ops.GetOperations() {
			if op.GetOperationType() != containerpb.Operation_CREATE_NODE_POOL || !strings.Contains(op.GetTargetLink(), clusterID+"/nodePools/slice-") {
				continue
			}
			start, err1 := time.Parse(time.RFC3339Nano, op.GetStartTime())
			end, err2 := time.Parse(time.RFC3339Nano, op.GetEndTime())
			if err1 != nil || err2 != nil {
				return fmt.Errorf("operation %s has times %q and %q", op.GetName(), op.GetStartTime(), op.GetEndTime())
			}
			if start.Before(since) {
				continue // a run of the test before this one
			}
			starts, ends = append(starts, start), append(ends, end)
		}
		if len(starts) != want {
			return fmt.Errorf("%d node pool creations on %s, want %d", len(starts), clusterID, want)
		}
		// All ran at once: the last to start started before the first to end ended.
		latestStart, earliestEnd := starts[0], ends[0]
		for i := range starts {
			if starts[i].After(latestStart) {
				latestStart = starts[i]
			}
			if ends[i].Before(earliestEnd) {
				earliestEnd = ends[i]
			}
		}
		if !latestStart.Before(earliestEnd) {
			return fmt.Errorf("the %d node pool creations did not all run at once: the last started at %s, the first ended at %s",
				want, latestStart.Format(time.StampMilli), earliestEnd.Format(time.StampMilli))
		}
		return nil
	}
}
