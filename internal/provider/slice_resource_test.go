package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// testAccSliceConfig is a raytpu_cluster named cluster plus the given slices.
func testAccSliceConfig(cluster, slices string) string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "test" {
  name                = %q
  deletion_protection = false
}
%s
`, cluster, slices)
}

func at(address, attribute string, check knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(address, tfjsonpath.New(attribute), check)
}

func TestAccSlice_everyGeneration(t *testing.T) {
	t.Parallel()
	createWorkloadPolicyOutOfBand(t, "ironwood-policy", "2x2x2")
	slices := `
resource "raytpu_slice" "v6e_multi" {
  cluster    = raytpu_cluster.test.id
  name       = "v6e-4x4"
  generation = "v6e"
  topology   = "4x4"
}
resource "raytpu_slice" "v6e_single" {
  cluster          = raytpu_cluster.test.id
  name             = "v6e-2x4"
  accelerator_type = "v6e-8"
}
resource "raytpu_slice" "v5e" {
  cluster    = raytpu_cluster.test.id
  name       = "v5e-2x2"
  generation = "v5litepod"
  topology   = "2x2"
}
resource "raytpu_slice" "v5p" {
  cluster    = raytpu_cluster.test.id
  name       = "v5p-2x2x2"
  generation = "v5p"
  topology   = "2x2x2"
}
resource "raytpu_slice" "v4" {
  cluster    = raytpu_cluster.test.id
  name       = "v4-2x2x1"
  generation = "v4"
  topology   = "2x2x1"
}
resource "raytpu_slice" "tpu7x" {
  cluster               = raytpu_cluster.test.id
  name                  = "ironwood-2x2x2"
  generation            = "tpu7x"
  topology              = "2x2x2"
  placement_policy_name = "ironwood-policy"
}
`
	type want struct {
		address, machineType, placement string
		hosts                           int64
	}
	wants := []want{
		{"raytpu_slice.v6e_multi", "ct6e-standard-4t", "COMPACT", 4},
		{"raytpu_slice.v6e_single", "ct6e-standard-8t", "NONE", 1},
		{"raytpu_slice.v5e", "ct5lp-hightpu-4t", "NONE", 1},
		{"raytpu_slice.v5p", "ct5p-hightpu-4t", "COMPACT", 2},
		{"raytpu_slice.v4", "ct4p-hightpu-4t", "NONE", 1},
		{"raytpu_slice.tpu7x", "tpu7x-standard-4t", "WORKLOAD_POLICY", 2},
	}
	var planChecks []plancheck.PlanCheck
	var stateChecks []statecheck.StateCheck
	for _, w := range wants {
		// Everything derived is known in the plan, before the cluster exists.
		planChecks = append(planChecks,
			plancheck.ExpectKnownValue(w.address, tfjsonpath.New("machine_type"), knownvalue.StringExact(w.machineType)),
			plancheck.ExpectKnownValue(w.address, tfjsonpath.New("num_hosts"), knownvalue.Int64Exact(w.hosts)),
			plancheck.ExpectKnownValue(w.address, tfjsonpath.New("kuberay_worker_group"), knownvalue.NotNull()),
		)
		stateChecks = append(stateChecks,
			at(w.address, "placement_type", knownvalue.StringExact(w.placement)),
			at(w.address, "status", knownvalue.StringExact("RUNNING")),
			at(w.address, "healthy", knownvalue.Bool(true)),
			at(w.address, "ready_hosts", knownvalue.Int64Exact(w.hosts)),
			at(w.address, "hosts", knownvalue.ListSizeExact(int(w.hosts))),
		)
	}
	stateChecks = append(stateChecks,
		at("raytpu_slice.v6e_multi", "node_selector", knownvalue.MapExact(map[string]knownvalue.Check{
			"cloud.google.com/gke-tpu-accelerator": knownvalue.StringExact("tpu-v6e-slice"),
			"cloud.google.com/gke-tpu-topology":    knownvalue.StringExact("4x4"),
			"cloud.google.com/gke-nodepool":        knownvalue.StringExact("v6e-4x4"),
		})),
		at("raytpu_slice.v6e_multi", "ray", knownvalue.ObjectExact(map[string]knownvalue.Check{
			"accelerator_version": knownvalue.StringExact("v6e"),
			"accelerator_type":    knownvalue.StringExact("TPU-V6E"),
			"pod_type":            knownvalue.StringExact("v6e-16"),
			"head_resource":       knownvalue.StringExact("TPU-v6e-16-head"),
			"topology_supported":  knownvalue.Bool(true),
			"image":               knownvalue.StringExact("rayproject/ray:2.55.0-py310-tpu"),
			"version":             knownvalue.StringExact("2.55.0"),
		})),
		at("raytpu_slice.v6e_multi", "slice_placement_group", knownvalue.ObjectExact(map[string]knownvalue.Check{
			"topology":            knownvalue.StringExact("4x4"),
			"accelerator_version": knownvalue.StringExact("v6e"),
			"chips_per_vm":        knownvalue.Null(), // Ray 2.55 has no such parameter
			"num_slices":          knownvalue.Int64Exact(1),
		})),
		at("raytpu_slice.v6e_multi", "tpu_resource", knownvalue.MapExact(map[string]knownvalue.Check{
			"google.com/tpu": knownvalue.StringExact("4"),
		})),
		at("raytpu_slice.v6e_single", "generation", knownvalue.StringExact("v6e")),
		at("raytpu_slice.v6e_single", "topology", knownvalue.StringExact("2x4")),
		at("raytpu_slice.v5e", "generation", knownvalue.StringExact("v5litepod")),
		at("raytpu_slice.v5e", "accelerator_type", knownvalue.StringExact("v5litepod-4")),
	)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:            testAccSliceConfig("acc-gens", slices),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: planChecks},
				ConfigStateChecks: stateChecks,
				Check:             workerGroupAcceptedByKubeRay("raytpu_cluster.test", "raytpu_slice.v6e_multi", "raytpu_slice.tpu7x"),
			},
			{
				Config:           testAccSliceConfig("acc-gens", slices),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

func TestAccSlice_updateReplaceImportDisappear(t *testing.T) {
	t.Parallel()
	slice := func(topology, labels string) string {
		return fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "workers"
  generation = "v6e"
  topology   = %q
  labels     = { %s }
}
`, topology, labels)
	}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	newID := statecheck.CompareValue(compare.ValuesDiffer())
	hosts := statecheck.CompareValue(compare.ValuesDiffer())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: testAccSliceConfig("acc-update", slice("4x4", `team = "a"`)),
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue("raytpu_slice.test", tfjsonpath.New("id")),
					hosts.AddStateValue("raytpu_slice.test", tfjsonpath.New("hosts")),
				},
			},
			{
				// Labels change in place: same pool, same hosts.
				Config: testAccSliceConfig("acc-update", slice("4x4", `team = "b"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue("raytpu_slice.test", tfjsonpath.New("id")),
					at("raytpu_slice.test", "labels", knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("b")})),
				},
			},
			{
				ResourceName:      "raytpu_slice.test",
				ImportState:       true,
				ImportStateId:     fmt.Sprintf("%s/acc-update/workers", testLocation),
				ImportStateVerify: true,
			},
			{
				// A new topology is a new slice.
				Config: testAccSliceConfig("acc-update", slice("4x8", `team = "b"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue("raytpu_slice.test", tfjsonpath.New("num_hosts"), knownvalue.Int64Exact(8)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					hosts.AddStateValue("raytpu_slice.test", tfjsonpath.New("hosts")),
					at("raytpu_slice.test", "ready_hosts", knownvalue.Int64Exact(8)),
				},
			},
			{
				// Deleted behind Terraform's back: planned as a create.
				PreConfig: func() { deleteNodePoolOutOfBand(t, "acc-update", "workers") },
				Config:    testAccSliceConfig("acc-update", slice("4x8", `team = "b"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					newID.AddStateValue("raytpu_slice.test", tfjsonpath.New("status")),
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
				},
			},
		},
	})
}

func TestAccSlice_planTimeErrors(t *testing.T) {
	t.Parallel()
	cluster := fmt.Sprintf("projects/%s/locations/%s/clusters/none", testProject, testLocation)
	slice := func(body string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster = %q
  name    = "s"
%s
}
`, cluster, body)
	}
	step := func(body, pattern string) resource.TestStep {
		return resource.TestStep{Config: slice(body), PlanOnly: true, ExpectError: regexp.MustCompile(pattern)}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(`generation = "v6e"
  topology = "3x3"`, `(?s)Invalid TPU Topology.*3x3 is not a v6e slice shape`),
			step(`generation = "v6e"
  topology = "4x4"
  node_version = "1.31.1-gke.2105000"`, `(?s)GKE Version Too Old for TPU Generation.*1\.31\.1-gke\.2105000 is below\s+1\.31\.2-gke\.1115000`),
			step(`generation = "v6e"
  topology = "4x4"
  placement_policy_name = "p"`, `(?s)Placement Policy Not Applicable`),
			step(`generation = "tpu7x"
  topology = "1x1x1"
  placement_policy_name = "p"`, `(?s)Placement Policy Not Applicable.*one\s+host.*"TPU\s+topology\s+can't\s+be\s+specified\s+with\s+single-host\s+TPU\s+slice\s+pool"`),
			step(`generation = "v6e"
  topology = "4x4"
  spot = true
  queued_provisioning = true`, `(?s)Conflicting Capacity Options`),
			step(`accelerator_type = "v6e-16"
  topology = "4x4"`, `(?s)Conflicting TPU Shape Attributes`),
			step(`generation = "v4"
  topology = "2x2x2"
  queued_provisioning = true`, `(?s)Flex-Start Not Offered.*queued\s+provisioning.*TPU\s+v4`),
			step(`generation = "v6e"
  topology = "4x4"
  queued_provisioning = true
  node_version = "1.31.2-gke.1115000"`, `(?s)GKE Version Too Old for Flex-Start.*1\.33\.0-gke\.1712000`),
			step(`accelerator_type = "v6e-32"
  generation = "v6e"
  topology = "4x4"`, `(?s)Conflicting TPU Shape Attributes.*"v6e-32" does not name the slice.*\(v6e-16\)`),
			{
				// GKE provisions it, Ray's placement helper does not take it: a warning, not an error.
				Config:             slice("generation = \"tpu7x\"\n  topology = \"4x4x12\"\n  placement_policy_name = \"p\""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

func TestAccSlice_versionGate(t *testing.T) {
	t.Parallel()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccSliceConfig("acc-version", `
resource "raytpu_slice" "test" {
  cluster      = raytpu_cluster.test.id
  name         = "pinned"
  generation   = "v6e"
  topology     = "2x2"
  node_version = "1.31.2-gke.1115000"
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				at("raytpu_slice.test", "node_version", knownvalue.StringExact("1.31.2-gke.1115000")),
				at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
			},
		}},
	})
}

// The tests below change settings of the shared emulator, so they do not run in parallel (Go runs
// them before the parallel ones start).

func TestAccSlice_stockoutLeavesNothingBehind(t *testing.T) {
	cluster := "acc-stockout"
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccSliceConfig(cluster, "")},
			{
				PreConfig: func() {
					if err := testEmulator.FailNextOperation(context.Background(), emulator.OperationFault{
						OperationType: "CREATE_NODE_POOL", Status: "RESOURCE_EXHAUSTED", Reason: "GCE_STOCKOUT",
						Message: "The zone 'projects/raytpu-acc/zones/us-central2-b' does not have enough resources available to fulfill the request.",
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: testAccSliceConfig(cluster, `
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "big"
  generation = "v6e"
  topology   = "8x8"
}
`),
				ExpectError: regexp.MustCompile(`(?s)creating raytpu_slice.*does\s+not\s+have\s+enough\s+resources.*Try\s+another\s+zone,\s+a\s+reservation.*Nothing\s+was\s+left\s+behind`),
			},
			{
				Config: testAccSliceConfig(cluster, ""),
				Check:  nodePoolAbsent(cluster, "big"),
			},
		},
	})
}

func TestAccSlice_interruptedCreateIsReplaced(t *testing.T) {
	t.Parallel()
	cluster := "acc-interrupt"
	slice := func(timeout string) string {
		return fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "slow"
  generation = "v6e"
  topology   = "4x4"
  timeouts   = { create = %q }
}
`, timeout)
	}
	setPoolLatency := func(d time.Duration) {
		setClusterLatencies(t, cluster, map[string]time.Duration{"CREATE_NODE_POOL": d})
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccSliceConfig(cluster, "")},
			{
				// The timeout leaves room for the create's requests on a loaded machine, and ends
				// while GKE, taking twice as long, still creates the pool.
				PreConfig:   func() { setPoolLatency(40 * time.Second) },
				Config:      testAccSliceConfig(cluster, slice("20s")),
				ExpectError: regexp.MustCompile(`(?s)waiting for the node pool.*keeps running in GKE.*terraform\s+untaint`),
			},
			{
				// The pool GKE accepted is in state: the next apply replaces it, never a second pool.
				PreConfig: func() { setPoolLatency(200 * time.Millisecond) },
				Config:    testAccSliceConfig(cluster, slice("10m")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at("raytpu_slice.test", "healthy", knownvalue.Bool(true))},
				Check:             nodePoolCount(cluster, 2), // system and slow
			},
		},
	})
}

func TestAccSlice_unhealthyHost(t *testing.T) {
	t.Parallel()
	cluster := "acc-health"
	slice := func(replace bool) string {
		return fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster           = raytpu_cluster.test.id
  name              = "fragile"
  generation        = "v5p"
  topology          = "2x2x4"
  replace_unhealthy = %t
}
`, replace)
	}
	failHost := func() {
		if err := testEmulator.FailHost(context.Background(), emulator.HostFailure{
			Cluster: fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, cluster), NodePool: "fragile", Worker: 2,
		}); err != nil {
			t.Fatal(err)
		}
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccSliceConfig(cluster, slice(false))},
			{
				// Without replace_unhealthy the failure is reported, not acted on.
				PreConfig: failHost,
				Config:    testAccSliceConfig(cluster, slice(false)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "healthy", knownvalue.Bool(false)),
					at("raytpu_slice.test", "ready_hosts", knownvalue.Int64Exact(3)),
					at("raytpu_slice.test", "status", knownvalue.StringExact("RUNNING_WITH_ERROR")),
					at("raytpu_slice.test", "failed_hosts", knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringRegexp(regexp.MustCompile(`^gke-acc-health-fragile-[0-9a-f]{8}-0+2$`)),
					})),
				},
			},
			{
				Config: testAccSliceConfig(cluster, slice(true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.test", "ready_hosts", knownvalue.Int64Exact(4)),
					at("raytpu_slice.test", "failed_hosts", knownvalue.ListSizeExact(0)),
				},
			},
		},
	})
}

// TestAccSlice_upgradingSliceIsNotReplaced refreshes, with replace_unhealthy, a slice whose node
// pool GKE is upgrading (RECONCILING, so not healthy): a slice in transition is left alone. It
// slows its own cluster's node pool upgrades.
func TestAccSlice_upgradingSliceIsNotReplaced(t *testing.T) {
	t.Parallel()
	const cluster = "acc-upgrading"
	setLatency := func(d time.Duration) {
		setClusterLatencies(t, cluster, map[string]time.Duration{"UPGRADE_NODES": d})
	}
	config := testAccSliceConfig(cluster, `
resource "raytpu_slice" "test" {
  cluster           = raytpu_cluster.test.id
  name              = "upgrading"
  generation        = "v6e"
  topology          = "4x4"
  replace_unhealthy = true
}
`)
	id := nodePoolIDFor(cluster, "upgrading")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				// GKE upgrades the pool's nodes, to the version they run, as an auto-upgrade would.
				// The upgrade outlasts this step's plan and apply on a loaded machine, the step
				// seeing the pool RECONCILING throughout; the next step waits for its end.
				PreConfig: func() {
					setLatency(2 * time.Minute)
					if _, err := testGKEClient(t).UpdateNodePool(context.Background(), &containerpb.UpdateNodePoolRequest{Name: id.String(), NodeVersion: "-"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_slice.test", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "status", knownvalue.StringExact("RECONCILING")),
					at("raytpu_slice.test", "healthy", knownvalue.Bool(false)),
				},
			},
			{
				PreConfig: func() { setLatency(200 * time.Millisecond) },
				Config:    config,
				Check: func(*terraform.State) error {
					// The upgrade ends on its own, and the slice is the one it was.
					return waitPoolRunning(t, id)
				},
			},
		},
	})
}

// waitPoolRunning waits for node pool id to be RUNNING, logging each status it sees on the way.
func waitPoolRunning(t *testing.T, id gke.NodePoolID) error {
	c, err := newTestGKEClient()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := testwait.Context(t)
	var status containerpb.NodePool_Status
	testwait.For(t, fmt.Sprintf("node pool %s to be RUNNING", id), func() bool {
		var pool *containerpb.NodePool
		pool, err = c.GetNodePool(ctx, id)
		if err == nil && pool.GetStatus() != status {
			status = pool.GetStatus()
			t.Logf("node pool %s is %s", id, status)
		}
		return err != nil || status == containerpb.NodePool_RUNNING
	})
	return err
}

// workerGroupAcceptedByKubeRay puts each slice's kuberay_worker_group into a RayCluster and has the
// cluster's real API server validate it against the KubeRay CRD (a server-side dry run).
func workerGroupAcceptedByKubeRay(clusterAddress string, sliceAddresses ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var groups []json.RawMessage
		for _, address := range sliceAddresses {
			groups = append(groups, json.RawMessage(s.RootModule().Resources[address].Primary.Attributes["kuberay_worker_group"]))
		}
		manifest, err := json.Marshal(map[string]any{
			"apiVersion": "ray.io/v1", "kind": "RayCluster",
			"metadata": map[string]any{"name": "tpu", "namespace": "default"},
			"spec": map[string]any{
				"rayVersion": "2.55.0",
				"headGroupSpec": map[string]any{
					"rayStartParams": map[string]any{},
					"template": map[string]any{"spec": map[string]any{
						"containers": []any{map[string]any{"name": "ray-head", "image": "rayproject/ray:2.55.0-py310"}},
					}},
				},
				"workerGroupSpecs": groups,
			},
		})
		if err != nil {
			return err
		}
		k, err := stateKubeClient(s, clusterAddress)
		if err != nil {
			return err
		}
		defer k.Close()
		return k.DryRunRayCluster(context.Background(), "default", manifest)
	}
}

// stateKubeClient is a client of the API server of the cluster at clusterAddress in s, reached as
// its endpoint and CA certificate say.
func stateKubeClient(s *terraform.State, clusterAddress string) (*kube.Client, error) {
	cluster := s.RootModule().Resources[clusterAddress].Primary.Attributes
	return kube.NewClient(kube.Cluster{Endpoint: cluster["endpoint"], CACertificateBase64: cluster["ca_certificate"], TokenSource: testTokenSource()})
}

func nodePoolIDFor(cluster, pool string) gke.NodePoolID {
	return gke.NodePoolID{Cluster: gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster}, Name: pool}
}

func deleteNodePoolOutOfBand(t *testing.T, cluster, pool string) {
	t.Helper()
	id := nodePoolIDFor(cluster, pool)
	if err := deleteNodePool(context.Background(), testGKEClient(t), id); err != nil {
		t.Fatalf("deleting %s out of band: %v", id, err)
	}
}

func nodePoolAbsent(cluster, pool string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		id := nodePoolIDFor(cluster, pool)
		if _, err := c.GetNodePool(context.Background(), id); !gke.IsNotFound(err) {
			return fmt.Errorf("node pool %s: got %v, want it absent", id, err)
		}
		return nil
	}
}

func nodePoolCount(cluster string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := clusterOutOfBand(gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster})
		if err != nil {
			return err
		}
		if n := len(got.GetNodePools()); n != want {
			return fmt.Errorf("cluster %s has %d node pools, want %d", cluster, n, want)
		}
		return nil
	}
}

func TestAccSlice_capacityOptionsAndClustersInParallel(t *testing.T) {
	t.Parallel()
	if err := testEmulator.CreateReservation(context.Background(), emulator.Reservation{
		Project: "shared-capacity", Zone: testLocation, Name: "tpu-v5p", Generation: "v5p", MachineType: "ct5p-hightpu-4t", Chips: 8, SpecificOnly: true,
	}); err != nil {
		t.Fatal(err)
	}
	config := testAccProviderConfig() + `
resource "raytpu_cluster" "a" {
  name                = "acc-cap-a"
  deletion_protection = false
}
resource "raytpu_cluster" "b" {
  name                = "acc-cap-b"
  deletion_protection = false
}
resource "raytpu_slice" "spot" {
  cluster    = raytpu_cluster.a.id
  name       = "spot"
  generation = "v6e"
  topology   = "2x2"
  spot       = true
}
resource "raytpu_slice" "reserved" {
  cluster     = raytpu_cluster.a.id
  name        = "reserved"
  generation  = "v5p"
  topology    = "2x2x2"
  reservation = { name = "tpu-v5p", project = "shared-capacity" }
}
resource "raytpu_slice" "queued" {
  cluster             = raytpu_cluster.b.id
  name                = "queued"
  generation          = "v6e"
  topology            = "4x4"
  queued_provisioning = true
}
`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.spot", "spot", knownvalue.Bool(true)),
					at("raytpu_slice.spot", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.reserved", "reservation", knownvalue.ObjectExact(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("tpu-v5p"), "project": knownvalue.StringExact("shared-capacity"),
						"consume": knownvalue.Null(), "block": knownvalue.Null(),
					})),
					at("raytpu_slice.reserved", "ready_hosts", knownvalue.Int64Exact(2)),
					// Queued provisioning: the pool starts empty; nodes come with ProvisioningRequests.
					at("raytpu_slice.queued", "num_hosts", knownvalue.Int64Exact(4)),
					at("raytpu_slice.queued", "hosts", knownvalue.ListSizeExact(0)),
					at("raytpu_slice.queued", "status", knownvalue.StringExact("RUNNING")),
				},
			},
			{ResourceName: "raytpu_slice.spot", ImportState: true, ImportStateVerify: true},
			{ResourceName: "raytpu_slice.reserved", ImportState: true, ImportStateVerify: true},
			{ResourceName: "raytpu_slice.queued", ImportState: true, ImportStateVerify: true},
		},
	})
}
