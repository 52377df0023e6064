package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"golang.org/x/oauth2"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// testTokenSource yields the token the emulator accepts.
func testTokenSource() oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testEmulator.Token()})
}

// newTestGKEClient is a GKE client on the emulator, for arranging and checking what Terraform sees.
func newTestGKEClient() (*gke.Client, error) {
	return gke.New(context.Background(), gke.Config{
		Endpoint: testEmulator.Endpoint(), ComputeEndpoint: testEmulator.ComputeEndpoint(), TokenSource: testTokenSource(),
	})
}

// clusterOutOfBand reads a cluster as GKE reports it, with a client of its own.
func clusterOutOfBand(id gke.ClusterID) (*containerpb.Cluster, error) {
	c, err := newTestGKEClient()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.GetCluster(context.Background(), id, gke.Fresh)
}

func testGKEClient(t *testing.T) *gke.Client {
	t.Helper()
	c, err := newTestGKEClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// createClusterOutOfBand creates a plain cluster, as another tool would, and returns its id.
func createClusterOutOfBand(t *testing.T, name, version string) gke.ClusterID {
	t.Helper()
	return createClusterOutOfBandAt(t, gke.ClusterID{Project: testProject, Location: testLocation, Name: name}, version)
}

// createClusterOutOfBandAt is createClusterOutOfBand in any project and location; the cluster is
// deleted when the test ends.
func createClusterOutOfBandAt(t *testing.T, id gke.ClusterID, version string) gke.ClusterID {
	t.Helper()
	ctx := context.Background()
	c := testGKEClient(t)
	op, err := c.CreateCluster(ctx, id, &containerpb.Cluster{
		Name: id.Name, InitialClusterVersion: version,
		NodePools: []*containerpb.NodePool{{Name: "default", InitialNodeCount: 1}},
	})
	if err == nil {
		err = c.WaitForOperation(ctx, id, op)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", id, err)
	}
	t.Cleanup(func() {
		if op, err := c.DeleteCluster(ctx, id); err == nil {
			_ = c.WaitForOperation(ctx, id, op)
		}
	})
	return id
}

// setRayAddonOutOfBand turns the add-on on or off behind Terraform's back.
func setRayAddonOutOfBand(t *testing.T, id gke.ClusterID, enabled bool) {
	t.Helper()
	setAddonsOutOfBand(t, id, &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: enabled}})
	if !enabled {
		waitKubeRayRemoved(t, testGKEClient(t), id)
	}
}

// setAddonsOutOfBand sets the add-ons addons configures on id, the others left as they are.
func setAddonsOutOfBand(t *testing.T, id gke.ClusterID, addons *containerpb.AddonsConfig) {
	t.Helper()
	ctx := context.Background()
	c := testGKEClient(t)
	op, err := c.SetAddons(ctx, id, addons)
	if err == nil {
		err = c.WaitForOperation(ctx, id, op)
	}
	if err != nil {
		t.Fatalf("setting the add-ons of %s to %v: %v", id, addons, err)
	}
}

// waitKubeRayRemoved waits until the cluster serves no KubeRay CRD (each deleted or being deleted),
// as after GKE has finished disabling the add-on: a change made before that could take a CRD whose
// deletion is still on its way for one that serves.
func waitKubeRayRemoved(t *testing.T, c *gke.Client, id gke.ClusterID) {
	t.Helper()
	ctx := testwait.Context(t)
	for {
		cluster, err := c.GetCluster(ctx, id, gke.Fresh)
		if err != nil {
			t.Fatalf("reading %s: %v", id, err)
		}
		k, err := kubeClient(c, accessOf(cluster))
		if err != nil {
			t.Fatal(err)
		}
		status, err := k.KubeRayStatus(ctx)
		k.Close()
		if err == nil && len(status.Established) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the KubeRay CRDs of %s are still served after disabling the add-on: %+v %v", id, status, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func rayAddonEnabled(id gke.ClusterID, want bool) resource.TestCheckFunc {
	return addonEnabled(id, "Ray Operator add-on", func(a *containerpb.AddonsConfig) bool { return a.GetRayOperatorConfig().GetEnabled() }, want)
}

// addonEnabled checks that GKE reports the add-on named what of id enabled as want, as enabled reads it.
func addonEnabled(id gke.ClusterID, what string, enabled func(*containerpb.AddonsConfig) bool, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cluster, err := clusterOutOfBand(id)
		if err != nil {
			return err
		}
		if got := enabled(cluster.GetAddonsConfig()); got != want {
			return fmt.Errorf("%s of %s enabled = %v, want %v", what, id, got, want)
		}
		return nil
	}
}

func testAccRayOperatorConfig(cluster, settings string) string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_operator" "test" {
  cluster = %q
%s
}
`, cluster, settings)
}

func TestAccRayOperator_lifecycle(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-byo", "")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             rayAddonEnabled(id, false),
		Steps: []resource.TestStep{
			{
				Config: testAccRayOperatorConfig(id.String(), "logging = true"),
				Check:  rayAddonEnabled(id, true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_ray_operator.test", tfjsonpath.New("id"), knownvalue.StringExact(id.String())),
					statecheck.ExpectKnownValue("raytpu_ray_operator.test", tfjsonpath.New("kuberay").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("raytpu_ray_operator.test", tfjsonpath.New("kuberay").AtMapKey("crds"), knownvalue.ListSizeExact(3)),
				},
			},
			{
				ResourceName:      "raytpu_ray_operator.test",
				ImportState:       true,
				ImportStateId:     id.String(),
				ImportStateVerify: true,
			},
			{
				Config: testAccRayOperatorConfig(id.String(), "logging = false\n  monitoring = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_ray_operator.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_ray_operator.test", tfjsonpath.New("monitoring"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("raytpu_ray_operator.test", tfjsonpath.New("logging"), knownvalue.Bool(false)),
				},
			},
			{
				// Disabled outside Terraform: the next plan enables it again.
				PreConfig: func() { setRayAddonOutOfBand(t, id, false) },
				Config:    testAccRayOperatorConfig(id.String(), "logging = false\n  monitoring = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_ray_operator.test", plancheck.ResourceActionCreate),
				}},
				Check: rayAddonEnabled(id, true),
			},
		},
	})
}

func TestAccRayOperator_refusesOldClusters(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-old", "1.29.15-gke.1218000")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccRayOperatorConfig(id.String(), ""),
				ExpectError: regexp.MustCompile(`(?s)runs GKE 1\.29\.15-gke\.1218000, below 1\.30\.0-gke\.1747000.*upgrade the\s+control plane first`),
			},
			{
				Config:      testAccRayOperatorConfig("my-cluster", ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Cluster ID.*projects/\{project\}/locations/\{location\}/clusters/\{name\}`),
			},
		},
	})
}

// TestAccRayOperator_destroyAfterTheClusterIsGone: a cluster deleted between the refresh and the
// destroy answers the add-on change with 404, which is the add-on gone with it, not an error. It
// injects a fault into the shared emulator, so it does not run in parallel.
func TestAccRayOperator_destroyAfterTheClusterIsGone(t *testing.T) {
	id := createClusterOutOfBand(t, "acc-byo-gone", "")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccRayOperatorConfig(id.String(), "")},
			{
				PreConfig: func() {
					if _, err := testEmulator.InjectFault(context.Background(), emulator.Fault{
						RPC: "SetAddonsConfig", Path: "/clusters/acc-byo-gone", Status: "NOT_FOUND",
						Message: "Not found: " + id.String() + ".",
					}); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = testEmulator.ClearFaults(context.Background()) })
				},
				Config:  testAccRayOperatorConfig(id.String(), ""),
				Destroy: true,
			},
		},
	})
}

// createWorkloadPolicyOutOfBand creates a HIGH_THROUGHPUT workload policy for multi-host tpu7x
// slices in the tests' region, through the Compute Engine API, as google_compute_resource_policy
// would, and deletes it when the test ends.
func createWorkloadPolicyOutOfBand(t *testing.T, name, topology string) {
	t.Helper()
	c, region := testGKEClient(t), gke.Region(testLocation)
	if err := c.CreateWorkloadPolicy(context.Background(), testProject, region, name, topology); err != nil {
		t.Fatalf("creating workload policy %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.DeleteWorkloadPolicy(context.Background(), testProject, region, name) })
}
