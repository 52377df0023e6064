package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// loseNextResponse makes the emulator carry out the next request of rpc and then lose its response
// in the way lost says, as a failing front end or connection does.
func loseNextResponse(t *testing.T, rpc, lost string) {
	t.Helper()
	if _, err := testEmulator.InjectFault(context.Background(), emulator.Fault{
		RPC: rpc, Lost: lost, Status: "UNAVAILABLE", Message: "The service is currently unavailable.", Times: 1,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testEmulator.ClearFaults(context.Background()) })
}

// TestAccCreate_lostResponsesAreAdopted loses the responses of CreateCluster and CreateNodePool
// after GKE acted on them: the provider retries, meets 409 ALREADY_EXISTS, recognises its own
// cluster and pool, and records them, instead of failing with both left outside state. It injects
// faults into the shared emulator, so it does not run in parallel.
func TestAccCreate_lostResponsesAreAdopted(t *testing.T) {
	const cluster = "acc-lost"
	config := testAccSliceConfig(cluster, `
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "lost"
  generation = "v6e"
  topology   = "4x4"
}
`)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					loseNextResponse(t, "CreateCluster", emulator.LostReset)
					loseNextResponse(t, "CreateNodePool", emulator.LostError)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_cluster.test", "status", knownvalue.StringExact("RUNNING")),
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.test", "ready_hosts", knownvalue.Int64Exact(4)),
				},
				Check: resource.ComposeTestCheckFunc(nodePoolCount(cluster, 2), requestCount("CreateNodePool", 2)),
			},
		},
	})
}

// requestCount checks that the emulator saw want requests of rpc.
func requestCount(rpc string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		counters, err := testEmulator.Counters(context.Background())
		if err != nil {
			return err
		}
		if counters[rpc] < want {
			return fmt.Errorf("the emulator saw %d %s requests, want at least %d (the lost one and its retry)", counters[rpc], rpc, want)
		}
		return nil
	}
}

// TestAccSlice_poolOfAnotherToolIsNotTakenOver: a pool of the same name that raytpu did not create
// is refused with the import to run, and stays untouched.
func TestAccSlice_poolOfAnotherToolIsNotTakenOver(t *testing.T) {
	t.Parallel()
	const cluster = "acc-foreign-name"
	slice := `
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "taken"
  generation = "v6e"
  topology   = "2x2"
}
`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccSliceConfig(cluster, "")},
			{
				PreConfig: func() {
					c := testGKEClient(t)
					id := nodePoolIDFor(cluster, "taken")
					op, err := c.CreateNodePool(context.Background(), id, &containerpb.NodePool{
						Name: "taken", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
					})
					if err == nil {
						err = c.WaitForOperation(context.Background(), id.Cluster, op)
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:      testAccSliceConfig(cluster, slice),
				ExpectError: regexp.MustCompile(`(?s)already\s+exists, and raytpu did not create it.*terraform\s+import <address of this\s+raytpu_slice>\s+projects/raytpu-acc/locations/us-central2-b/clusters/acc-foreign-name/nodePools/taken`),
			},
			{
				// Imported, it is managed: same pool, no replacement.
				Config:             testAccSliceConfig(cluster, slice),
				ResourceName:       "raytpu_slice.test",
				ImportState:        true,
				ImportStateId:      "projects/raytpu-acc/locations/us-central2-b/clusters/acc-foreign-name/nodePools/taken",
				ImportStatePersist: true,
			},
			{
				Config:            testAccSliceConfig(cluster, slice),
				ConfigStateChecks: []statecheck.StateCheck{at("raytpu_slice.test", "healthy", knownvalue.Bool(true))},
				Check:             nodePoolCount(cluster, 2),
			},
		},
	})
}
