package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

const rayClusterAddress = "raytpu_ray_cluster.tpu"

// testAccRayClusterConfig is a cluster with two v6e 4x4 slices and a single-host v6e 2x2, and a
// RayCluster whose groups the caller writes.
func testAccRayClusterConfig(cluster, groups string) string {
	return testAccSliceConfig(cluster, v6eSlice("a", "4x4", "")+v6eSlice("b", "4x4", "")+v6eSlice("one", "2x2", "")+fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id = raytpu_cluster.test.id
  name       = "tpu"
  head = {
    ray_start_params = { "dashboard-host" = "0.0.0.0" }
  }
  worker_groups = [%s]
}
`, groups))
}

// v6eSlice is raytpu_slice.<key>, a v6e slice named slice-<key> of raytpu_cluster.test, with more
// attributes written out.
func v6eSlice(key, topology, more string) string {
	return fmt.Sprintf(`
resource "raytpu_slice" %[1]q {
  cluster    = raytpu_cluster.test.id
  name       = "slice-%[1]s"
  generation = "v6e"
  topology   = %[2]q
  %[3]s
}
`, key, topology, more)
}

const multisliceGroups = `
    { name = "multi", slices = [raytpu_slice.a.id, raytpu_slice.b.id] },
    { name = "one", slices = [raytpu_slice.one.id] },`

func TestAccRayCluster_slicesPlacementImportDriftFailedHost(t *testing.T) {
	t.Parallel()
	cluster := "acc-ray"
	clusterID := fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, cluster)
	config := testAccRayClusterConfig(cluster, multisliceGroups)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayClusterAddress, "id", knownvalue.StringExact(clusterID+"/rayClusters/default/tpu")),
					at(rayClusterAddress, "image", knownvalue.StringExact("rayproject/ray:2.55.0-py310-tpu")),
					at(rayClusterAddress, "head_service", knownvalue.StringExact("tpu-head-svc")),
					at(rayClusterAddress, "dashboard_address", knownvalue.StringExact("tpu-head-svc.default.svc.cluster.local:8265")),
					at(rayClusterAddress, "client_address", knownvalue.StringExact("ray://tpu-head-svc.default.svc.cluster.local:10001")),
					at(rayClusterAddress, "healthy", knownvalue.Bool(true)),
					at(rayClusterAddress, "in_sync", knownvalue.Bool(true)),
					at(rayClusterAddress, "ray", knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"table_version": knownvalue.StringExact("2.55.0"), "chips_per_vm": knownvalue.Bool(false),
						"single_host_slices": knownvalue.Bool(false),
					})),
					at(rayClusterAddress, "worker_group_settings", knownvalue.MapExact(map[string]knownvalue.Check{
						"multi": knownvalue.ObjectExact(map[string]knownvalue.Check{
							"num_slices": knownvalue.Int64Exact(2), "hosts_per_slice": knownvalue.Int64Exact(4),
							"chips_per_host": knownvalue.Int64Exact(4), "num_workers": knownvalue.Int64Exact(8),
							"topology": knownvalue.StringExact("4x4"), "accelerator_type": knownvalue.StringExact("TPU-V6E"),
							"pod_type": knownvalue.StringExact("v6e-16"),
							"slice_placement_group": knownvalue.ObjectExact(map[string]knownvalue.Check{
								"topology": knownvalue.StringExact("4x4"), "accelerator_version": knownvalue.StringExact("v6e"),
								"chips_per_vm": knownvalue.Null(), "num_slices": knownvalue.Int64Exact(2),
							}),
							"megascale": knownvalue.MapExact(map[string]knownvalue.Check{
								"MEGASCALE_NUM_SLICES":          knownvalue.StringExact("2"),
								"MEGASCALE_COORDINATOR_ADDRESS": knownvalue.StringExact("multi-0-0.tpu-headless"),
								"MEGASCALE_PORT":                knownvalue.StringExact("8081"),
							}),
						}),
						"one": knownvalue.ObjectPartial(map[string]knownvalue.Check{
							"num_slices": knownvalue.Int64Exact(1), "hosts_per_slice": knownvalue.Int64Exact(1),
							"num_workers": knownvalue.Int64Exact(1), "megascale": knownvalue.Null(),
						}),
					})),
				},
				Check: resource.ComposeTestCheckFunc(
					placementOnSlices("multi", 4, "slice-a", "slice-b"),
					placementOnSlices("one", 1, "slice-one"),
					resource.TestCheckResourceAttr(rayClusterAddress, "status", "ready"),
					megascaleFromTheWebhook(t, cluster, "tpu", "multi", 2),
				),
			},
			{
				// A multislice group of a 4x4 and a 2x2 fails at plan time, read from GKE.
				Config:      testAccRayClusterConfig(cluster, `{ name = "multi", slices = [raytpu_slice.a.id, raytpu_slice.one.id] },`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Multislice Group Mixes Shapes`),
			},
			{
				// An auto-provisioned 4x4 beside the 4x4 slices: the TPU webhook drops the node
				// affinity that would keep its workers off them, so the plan refuses it.
				Config: testAccRayClusterConfig(cluster, multisliceGroups+`
    { name = "more", generation = "v6e", topology = "4x4" },`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Worker Group Shape Matches A Slice.*worker group "more" asks node auto-provisioning for v6e 4x4.*slice slice-a of worker group "multi"`),
			},
			{
				ResourceName:            rayClusterAddress,
				ImportState:             true,
				ImportStateId:           clusterID + "/default/tpu",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Changed outside Terraform: the plan applies it again.
				PreConfig: func() { patchRayClusterOutOfBand(t, cluster, "tpu") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayClusterAddress, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at(rayClusterAddress, "in_sync", knownvalue.Bool(true))},
			},
			{
				// Deleted outside Terraform: removed from state, then created again.
				PreConfig: func() { deleteRayClusterOutOfBand(t, cluster, "tpu") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayClusterAddress, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at(rayClusterAddress, "healthy", knownvalue.Bool(true))},
				Check:             placementOnSlices("multi", 4, "slice-a", "slice-b"),
			},
			{
				// A failed host of slice-a: its Pod fails and KubeRay replaces the replica, which has
				// no whole slice left to run on. A refresh shows it.
				PreConfig: func() {
					if err := testEmulator.FailHost(context.Background(), emulator.HostFailure{Cluster: clusterID, NodePool: "slice-a", Worker: 1}); err != nil {
						t.Fatal(err)
					}
					waitRayClusterUnhealthy(t, cluster, "tpu")
				},
				RefreshState: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(rayClusterAddress, "healthy", "false"),
					replicaNotRunning("multi"),
				),
			},
		},
	})
}

func TestAccRayCluster_autoProvisionedShape(t *testing.T) {
	t.Parallel()
	// The seed's flow end to end: the cluster allows node auto-provisioning of v6e chips, the
	// RayCluster declares a v6e 2x4, and GKE brings up a node pool of that shape for it.
	id := fmt.Sprintf("projects/%s/locations/%s/clusters/acc-ray-nap", testProject, testLocation)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderConfig() + `
resource "raytpu_cluster" "nap" {
  name                = "acc-ray-nap"
  deletion_protection = false
  auto_provisioning = {
    max_cpu       = 1000
    max_memory_gb = 10000
    tpu_limits    = [{ generation = "v6e", max_chips = 8 }]
  }
}

resource "raytpu_ray_cluster" "tpu" {
  cluster_id = raytpu_cluster.nap.id
  name       = "grow"
  worker_groups = [
    { name = "nap", generation = "v6e", topology = "2x4", chips_per_host = 4 },
  ]
}
`,
			ConfigStateChecks: []statecheck.StateCheck{at(rayClusterAddress, "healthy", knownvalue.Bool(true))},
			Check: resource.ComposeTestCheckFunc(
				placementOnSlices("nap", 2, "nap-ct6e-standa-4t-"),
				napPoolCreated(id),
			),
		}},
	})
}

func TestAccRayCluster_planTimeErrors(t *testing.T) {
	t.Parallel()
	other := fmt.Sprintf("projects/%s/locations/%s/clusters/other/nodePools/pool", testProject, testLocation)
	mine := fmt.Sprintf("projects/%s/locations/%s/clusters/mine", testProject, testLocation)
	config := func(extra, groups string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = %q
  name          = "tpu"
  %s
  worker_groups = [%s]
}
`, mine, extra, groups)
	}
	steps := []struct {
		extra, groups string
		want          string
	}{
		{"", fmt.Sprintf(`{ name = "g", slices = [%q] }`, other), `Slice Belongs To Another Cluster`},
		{"", fmt.Sprintf(`{ name = "g", slices = [%q], generation = "v6e", topology = "4x4" }`, mine+"/nodePools/p"), `Conflicting Worker Group Source`},
		{"", `{ name = "g" }`, `Missing Worker Group Source`},
		{"", `{ name = "g", generation = "v6e", topology = "3x3" }`, `Invalid Worker Group Shape`},
		{"", `{ name = "g", generation = "v6e", topology = "2x4", chips_per_host = 2 }`, `chips_per_host = 2 does not fit`},
		{"", `{ name = "g", generation = "tpu7x", topology = "2x2x2" }`, `(?s)Slice Not Auto-provisioned.*tpu7x 2x2x2.*workload policy`},
		{"", `{ name = "g", generation = "v6e", topology = "4x4" }, { name = "g", generation = "v6e", topology = "4x4" }`, `Duplicate Worker Group`},
		{"", fmt.Sprintf(`{ name = "g", slices = [%q], replicas = 2 }`, mine+"/nodePools/p"), `Setting Not For Slices`},
		{`ray_version = "latest"`, `{ name = "g", generation = "v6e", topology = "4x4" }`, `Invalid Ray Version`},
		{`head = { cpu = "lots" }`, `{ name = "g", generation = "v6e", topology = "4x4" }`, `Invalid Quantity`},
		{`name = "Not_A_Name"`, `{ name = "g", generation = "v6e", topology = "4x4" }`, `(?s)Invalid Attribute Value Match.*name must start with a lower-case\s+letter`},
	}
	var ts []resource.TestStep
	for _, s := range steps {
		cfg := config(s.extra, s.groups)
		if strings.HasPrefix(s.extra, "name =") {
			cfg = strings.Replace(cfg, `name          = "tpu"`, "", 1)
		}
		ts = append(ts, resource.TestStep{Config: cfg, PlanOnly: true, ExpectError: regexp.MustCompile(s.want)})
	}
	accTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: ts})
}

// A cluster without the Ray Operator add-on serves no RayClusters: create says so before applying.
func TestAccRayCluster_kubeRayNotReady(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-ray-noaddon", "")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = %q
  name          = "tpu"
  worker_groups = [{ name = "g", generation = "v6e", topology = "2x2" }]
}
`, id),
			ExpectError: regexp.MustCompile(`KubeRay Not Ready(.|\n)*Ray Operator add-on`),
		}},
	})
}

// A version past the table plans with a warning, and the nearest row.
func TestAccRayCluster_unknownRayVersionUsesNearestRow(t *testing.T) {
	t.Parallel()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = "projects/%s/locations/%s/clusters/nowhere"
  name          = "tpu"
  ray_version   = "2.99.0"
  worker_groups = [{ name = "g", generation = "v6e", topology = "4x4" }]
}
`, testProject, testLocation),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(rayClusterAddress, tfjsonpath.New("ray"), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"table_version": knownvalue.StringExact("2.58.0"), "exact": knownvalue.Bool(false), "chips_per_vm": knownvalue.Bool(true),
				})),
				plancheck.ExpectKnownValue(rayClusterAddress, tfjsonpath.New("image"), knownvalue.StringExact("rayproject/ray:2.99.0-py310-tpu")),
			}},
		}},
	})
}

// placementOnSlices checks placement[group]: every replica has hosts Pods, Running, on distinct
// nodes of one node pool; the replicas' pools are distinct and, in order, start with the prefixes.
func placementOnSlices(group string, hosts int, poolPrefixes ...string) resource.TestCheckFunc {
	return placementOnSlicesOf(rayClusterAddress, group, hosts, poolPrefixes...)
}

// placementOnSlicesOf is placementOnSlices for the RayCluster at address.
func placementOnSlicesOf(address, group string, hosts int, poolPrefixes ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a := s.RootModule().Resources[address].Primary.Attributes
		base := "placement." + group
		if got := a[base+".#"]; got != strconv.Itoa(len(poolPrefixes)) {
			return fmt.Errorf("%s has %s replicas, want %d", base, got, len(poolPrefixes))
		}
		nodes := map[string]bool{}
		for r, prefix := range poolPrefixes {
			rb := fmt.Sprintf("%s.%d", base, r)
			if got := a[rb+".#"]; got != strconv.Itoa(hosts) {
				return fmt.Errorf("%s has %s hosts, want %d", rb, got, hosts)
			}
			for h := 0; h < hosts; h++ {
				hb := fmt.Sprintf("%s.%d", rb, h)
				pool, node := a[hb+".node_pool"], a[hb+".node"]
				if !strings.HasPrefix(pool, prefix) || a[hb+".running"] != "true" || a[hb+".host_index"] != strconv.Itoa(h) {
					return fmt.Errorf("%s: pod %s on node %s of pool %s (running %s, host index %s); want pool %s*, host %d running",
						hb, a[hb+".pod"], node, pool, a[hb+".running"], a[hb+".host_index"], prefix, h)
				}
				if pool != a[rb+".0.node_pool"] {
					return fmt.Errorf("%s: replica spans pools %s and %s", rb, a[rb+".0.node_pool"], pool)
				}
				if nodes[node] {
					return fmt.Errorf("%s: node %s holds two workers", hb, node)
				}
				nodes[node] = true
			}
		}
		return nil
	}
}

// replicaNotRunning checks that some host of placement[group] is not running.
func replicaNotRunning(group string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for k, v := range s.RootModule().Resources[rayClusterAddress].Primary.Attributes {
			if strings.HasPrefix(k, "placement."+group+".") && strings.HasSuffix(k, ".running") && v == "false" {
				return nil
			}
		}
		return fmt.Errorf("every host of placement.%s is running after a host failed", group)
	}
}

func testKubeClient(t *testing.T, cluster string) *kube.Client {
	t.Helper()
	c := testGKEClient(t)
	cl, err := c.GetCluster(context.Background(), gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster}, gke.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kube.NewClient(kube.Cluster{Endpoint: cl.GetEndpoint(), CACertificateBase64: cl.GetMasterAuth().GetClusterCaCertificate(), TokenSource: testTokenSource()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

func deleteRayClusterOutOfBand(t *testing.T, cluster, name string) {
	t.Helper()
	if err := testKubeClient(t, cluster).DeleteRayCluster(context.Background(), "default", name); err != nil {
		t.Fatal(err)
	}
}

// patchRayClusterOutOfBand changes the head's Ray start parameters, as kubectl apply would.
func patchRayClusterOutOfBand(t *testing.T, cluster, name string) {
	t.Helper()
	k := testKubeClient(t, cluster)
	rc, err := k.GetRayCluster(context.Background(), "default", name)
	if err != nil {
		t.Fatal(err)
	}
	rc.Spec.HeadGroupSpec.RayStartParams["num-cpus"] = "0"
	rc.ObjectMeta = metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, Annotations: rc.Annotations}
	if _, err := k.ApplyRayCluster(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
}

func waitRayClusterUnhealthy(t *testing.T, cluster, name string) {
	t.Helper()
	_, err := testKubeClient(t, cluster).WaitForRayClusterPods(testwait.Context(t), "default", name, func(pods []kube.RayPod) bool {
		for _, p := range pods {
			if !p.Running {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
}

// napPoolCreated checks that GKE holds the auto-provisioned v6e 2x4 pool the workers run on.
func napPoolCreated(clusterID string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		pool := s.RootModule().Resources[rayClusterAddress].Primary.Attributes["placement.nap.0.0.node_pool"]
		c, err := newTestGKEClient()
		if err != nil {
			return err
		}
		defer c.Close()
		id, _ := gke.ParseClusterID(clusterID)
		np, err := c.GetNodePool(context.Background(), gke.NodePoolID{Cluster: id, Name: pool})
		if err != nil {
			return fmt.Errorf("auto-provisioned pool %q: %w", pool, err)
		}
		if !np.GetAutoscaling().GetAutoprovisioned() || np.GetConfig().GetMachineType() != "ct6e-standard-4t" ||
			np.GetPlacementPolicy().GetTpuTopology() != "2x4" || np.GetInitialNodeCount() != 2 {
			return fmt.Errorf("auto-provisioned pool %s: %v", pool, np)
		}
		return nil
	}
}
