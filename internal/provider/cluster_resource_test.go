package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

func testAccClusterConfig(name, extra string) string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "test" {
  name                = %q
  deletion_protection = false
%s
}
`, name, extra)
}

// clusterImportStep imports raytpu_cluster.test, cluster name of the test location, by its short id
// and checks that the import reads what the state holds.
func clusterImportStep(name string) resource.TestStep {
	return resource.TestStep{
		ResourceName:            "raytpu_cluster.test",
		ImportState:             true,
		ImportStateId:           testLocation + "/" + name,
		ImportStateVerify:       true,
		ImportStateVerifyIgnore: []string{"deletion_protection"},
	}
}

func TestAccCluster_lifecycle(t *testing.T) {
	t.Parallel()
	name := "acc-lifecycle"
	id := fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, name)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					// Two transient failures of the create call are retried, not reported.
					if _, err := testEmulator.InjectFault(context.Background(), emulator.Fault{
						RPC: "CreateCluster", Path: name, Status: "UNAVAILABLE", Message: "try again", Times: 2,
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: testAccClusterConfig(name, `resource_labels = { team = "ml" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("raytpu_cluster.test", tfjsonpath.New("id")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue("raytpu_cluster.test", tfjsonpath.New("id")),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("id"), knownvalue.StringExact(id)),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("endpoint"), knownvalue.StringRegexp(regexp.MustCompile(`^127\.0\.0\.1:\d+$`))),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("ca_certificate"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("release_channel"), knownvalue.StringExact("REGULAR")),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("kuberay"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"ready": knownvalue.Bool(true),
						"crds": knownvalue.ListExact([]knownvalue.Check{
							knownvalue.StringExact("rayclusters.ray.io"),
							knownvalue.StringExact("rayjobs.ray.io"),
							knownvalue.StringExact("rayservices.ray.io"),
						}),
					})),
				},
			},
			clusterImportStep(name),
			{
				Config: testAccClusterConfig(name, `resource_labels    = { team = "ml", cost = "research" }
  release_channel    = "RAPID"
  min_master_version = "1.35"
  workload_identity  = false
  ray_operator       = { logging = true, monitoring = true }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue("raytpu_cluster.test", tfjsonpath.New("id")),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("ray_operator"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"logging": knownvalue.Bool(true), "monitoring": knownvalue.Bool(true),
					})),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("release_channel"), knownvalue.StringExact("RAPID")),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("workload_identity"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("master_version"), knownvalue.StringRegexp(regexp.MustCompile(`^1\.35\.`))),
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("resource_labels"), knownvalue.MapExact(map[string]knownvalue.Check{
						"team": knownvalue.StringExact("ml"), "cost": knownvalue.StringExact("research"),
					})),
				},
			},
		},
	})
}

func TestAccCluster_planTimeErrors(t *testing.T) {
	t.Parallel()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccClusterConfig("Bad_Name", ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Attribute name must be 1 to 40 characters of lower-case letters`),
			},
			{
				Config:      testAccClusterConfig("old", `min_master_version = "1.29"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)GKE Version Too Old for Ray.*1\.30\.0-gke\.1747000`),
			},
			{
				// 1.35 is offered in RAPID only; the cluster would be in REGULAR.
				Config:      testAccClusterConfig("offer", `min_master_version = "1.35"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Unsupported GKE Version.*"1\.35" is not offered in the\s+REGULAR\s+release\s+channel.*nearest\s+offered:\s+1\.34\.1-gke\.1829001`),
			},
			{
				Config:      testAccClusterConfig("channel", `release_channel = "NIGHTLY"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)release_channel value must be one of`),
			},
		},
	})
}

func TestAccCluster_deletionProtection(t *testing.T) {
	t.Parallel()
	protected := testAccProviderConfig() + `
resource "raytpu_cluster" "test" {
  name = "acc-protected"
}
`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: protected},
			{
				Config:      protected,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Cluster Deletion Protected.*deletion_protection = false`),
			},
			{Config: testAccClusterConfig("acc-protected", "")},
		},
	})
}

func TestAccCluster_disappears(t *testing.T) {
	t.Parallel()
	name := "acc-disappears"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccClusterConfig(name, "")},
			{
				PreConfig: func() { deleteClusterOutOfBand(t, name) },
				Config:    testAccClusterConfig(name, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
				},
			},
		},
	})
}

func TestAccCluster_operationErrorKeepsTheClusterInState(t *testing.T) {
	t.Parallel()
	name := "acc-operr"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					if err := testEmulator.FailNextOperation(context.Background(), emulator.OperationFault{
						OperationType: "CREATE_CLUSTER", Target: name, Status: "INTERNAL", Message: "control plane failed to start",
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      testAccClusterConfig(name, ""),
				ExpectError: regexp.MustCompile(`(?s)waiting for raytpu_cluster.*acc-operr.*control plane failed to start`),
			},
			{
				// The failed cluster is in state, tainted: the next apply replaces it.
				Config: testAccClusterConfig(name, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
				},
			},
		},
	})
}

// deleteClusterOutOfBand deletes a cluster behind Terraform's back, as another tool would.
func deleteClusterOutOfBand(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	c := testGKEClient(t)
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	op, err := c.DeleteCluster(ctx, id)
	if err == nil {
		err = c.WaitForOperation(ctx, id, op)
	}
	if err != nil {
		t.Fatalf("deleting %s out of band: %v", id, err)
	}
}

// TestAccCluster_kubeRayLag models GKE reporting the add-on enabled well before its CRDs serve:
// a create timeout shorter than the gap fails with a clear error, and the next apply recovers.
func TestAccCluster_kubeRayLag(t *testing.T) {
	t.Parallel()
	name := "acc-lag"
	setCRDDelay := func(d time.Duration) {
		setClusterLatencies(t, name, map[string]time.Duration{emulator.RayCRDsLatency: d})
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The create timeout leaves room for the cluster itself on a loaded machine, where
				// its kube-apiserver may take tens of seconds to start; the CRDs never come within
				// it, so it can only end the wait for them. The next step replaces this cluster.
				PreConfig:   func() { setCRDDelay(time.Hour) },
				Config:      testAccClusterConfig(name, `timeouts = { create = "2m" }`),
				ExpectError: regexp.MustCompile(`(?s)KubeRay Not Ready.*waiting for KubeRay in raytpu_cluster.*rayclusters\.ray\.io.*raise\s+the\s+timeouts`),
			},
			{
				PreConfig: func() { setCRDDelay(500 * time.Millisecond) },
				Config:    testAccClusterConfig(name, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("raytpu_cluster.test", tfjsonpath.New("kuberay").AtMapKey("ready"), knownvalue.Bool(true)),
				},
			},
		},
	})
}

// TestAccCluster_reconcilingIsNotKubeRayGone: while GKE reconciles a cluster (an upgrade, another
// tool's change) its API server still serves, and the plan must not take KubeRay for not ready and
// plan a wait on every run.
func TestAccCluster_reconcilingIsNotKubeRayGone(t *testing.T) {
	t.Parallel()
	const name = "acc-reconciling"
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	setUpdateLatency := func(d time.Duration) {
		setClusterLatencies(t, name, map[string]time.Duration{"UPDATE_CLUSTER": d})
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccClusterConfig(name, "")},
			{
				PreConfig: func() {
					setUpdateLatency(20 * time.Second)
					c := testGKEClient(t)
					cluster, err := c.GetCluster(context.Background(), id, gke.Fresh)
					if err == nil {
						_, err = c.SetResourceLabels(context.Background(), id, cluster.GetResourceLabels(), cluster.GetLabelFingerprint())
					}
					if err != nil {
						t.Fatal(err)
					}
					if cluster, err := c.GetCluster(context.Background(), id, gke.Fresh); err != nil || cluster.GetStatus().String() != "RECONCILING" {
						t.Fatalf("cluster %s while updated: %v, %v; want RECONCILING", id, cluster.GetStatus(), err)
					}
				},
				Config:   testAccClusterConfig(name, ""),
				PlanOnly: true,
			},
		},
	})
}
