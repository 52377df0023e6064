package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// The list test has a project of its own, so that what it lists is only what it made.
const queryProject = "raytpu-acc-query"

// queryClusterConfig is the raytpu_cluster acc-query of queryProject with one v6e 2x2 slice.
func queryClusterConfig() string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_cluster" "query" {
  project             = %q
  name                = "acc-query"
  deletion_protection = false
}

resource "raytpu_slice" "own" {
  cluster    = raytpu_cluster.query.id
  name       = "own-v6e-2x2"
  generation = "v6e"
  topology   = "2x2"
}
`, queryProject)
}

// queryPools are the TPU node pools other tools make, as each sends them to GKE: xpk's v5litepod-8
// on Spot VMs (`gcloud beta container node-pools create <cluster>-np-0 --machine-type=
// ct5lp-hightpu-4t --num-nodes=2 --placement-type=COMPACT --tpu-topology=2x4 --spot`, xpk
// src/xpk/core/nodepool.py), a google_container_node_pool (node_count, node_config.machine_type,
// placement_policy, management as the google provider defaults it), and the pool GKE's node
// auto-provisioning makes for Pods asking for a v6e 2x4 with 4 chips each (the emulator's
// napNodePool). None carries raytpu's mark.
func queryPools(cluster string) []*containerpb.NodePool {
	compact := func(topology string) *containerpb.NodePool_PlacementPolicy {
		return &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: topology}
	}
	return []*containerpb.NodePool{
		{
			Name: cluster + "-np-0", InitialNodeCount: 2, PlacementPolicy: compact("2x4"),
			Config: &containerpb.NodeConfig{MachineType: "ct5lp-hightpu-4t", Spot: true},
		},
		{
			Name: "tpg-v6e-4x4", InitialNodeCount: 4, PlacementPolicy: compact("4x4"),
			Config:     &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
			Management: &containerpb.NodeManagement{AutoRepair: true, AutoUpgrade: true},
		},
		{
			Name: "nap-ct6e-standa-4t-q7k2m9x1", InitialNodeCount: 2, PlacementPolicy: compact("2x4"),
			Config:      &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
			Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, Autoprovisioned: true, MaxNodeCount: 2},
		},
	}
}

// TestAccListResources_query lists with `terraform query` the TPU node pools of two clusters, one
// made by raytpu_cluster with a raytpu_slice, one made out of band with the pools of xpk, the
// google provider and node auto-provisioning and a CPU pool, then has the query write their
// configuration, imports it into a state of its own and plans nothing more.
func TestAccListResources_query(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.ListResources)
	byo := createClusterOutOfBandAt(t, gke.ClusterID{Project: queryProject, Location: testLocation, Name: "acc-query-byo"}, "")
	own := gke.ClusterID{Project: queryProject, Location: testLocation, Name: "acc-query"}
	xpk, tpg, nap := byo.Name+"-np-0", "tpg-v6e-4x4", "nap-ct6e-standa-4t-q7k2m9x1"
	str := knownvalue.StringExact
	slice := func(cluster gke.ClusterID, name string) map[string]knownvalue.Check {
		return map[string]knownvalue.Check{"project": str(queryProject), "location": str(testLocation), "cluster": str(cluster.Name), "name": str(name)}
	}
	values := func(list string, cluster gke.ClusterID, name string, want map[string]knownvalue.Check) querycheck.QueryResultCheck {
		var checks []querycheck.KnownValueCheck
		for attribute, check := range want {
			checks = append(checks, querycheck.KnownValueCheck{Path: tfjsonpath.New(attribute), KnownValue: check})
		}
		return querycheck.ExpectResourceKnownValues(list, queryfilter.ByResourceIdentity(slice(cluster, name)), checks)
	}
	named := func(list, displayName string) querycheck.QueryResultCheck {
		return querycheck.ExpectResourceDisplayName(list, queryfilter.ByDisplayName(str(displayName)), str(displayName))
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: queryClusterConfig()},
			{
				PreConfig: func() {
					for _, pool := range append(queryPools(byo.Name), &containerpb.NodePool{Name: "cpu", InitialNodeCount: 1,
						Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}) {
						createPoolOutOfBandIn(t, byo, pool)
					}
				},
				Query: true,
				Config: fmt.Sprintf(`
list "raytpu_slice" "byo" {
  provider         = raytpu
  include_resource = true
  config {
    cluster = %q
  }
}

list "raytpu_slice" "project" {
  provider = raytpu
  config {
    project  = %q
    location = "-"
  }
}

list "raytpu_cluster" "project" {
  provider         = raytpu
  include_resource = true
  config {
    project = %q
  }
}
`, byo.String(), queryProject, queryProject),
				QueryResultChecks: []querycheck.QueryResultCheck{
					// Only the TPU pools, whoever made them.
					querycheck.ExpectLength("raytpu_slice.byo", 3),
					querycheck.ExpectIdentity("raytpu_slice.byo", slice(byo, xpk)),
					querycheck.ExpectIdentity("raytpu_slice.byo", slice(byo, tpg)),
					querycheck.ExpectIdentity("raytpu_slice.byo", slice(byo, nap)),
					named("raytpu_slice.byo", byo.Name+"/"+xpk+": v5e 2x4, 2 hosts, spot, made by xpk"),
					named("raytpu_slice.byo", byo.Name+"/"+tpg+": v6e 4x4, 4 hosts, on-demand, made by a tool GKE does not record"),
					named("raytpu_slice.byo", byo.Name+"/"+nap+": v6e 2x4, 2 hosts, on-demand, made by GKE node auto-provisioning"),
					values("raytpu_slice.byo", byo, xpk, map[string]knownvalue.Check{
						"generation": str("v5e"), "topology": str("2x4"), "chips_per_host": knownvalue.Int64Exact(4),
						"num_hosts": knownvalue.Int64Exact(2), "hosts": knownvalue.ListSizeExact(2), "healthy": knownvalue.Bool(true),
						"spot":          knownvalue.Bool(true),
						"capacity_used": knownvalue.ObjectPartial(map[string]knownvalue.Check{"type": str("spot"), "zone": str(testLocation)}),
					}),
					values("raytpu_slice.byo", byo, nap, map[string]knownvalue.Check{
						"generation": str("v6e"), "topology": str("2x4"), "autoscaling": knownvalue.Bool(true),
						"machine_type": str("ct6e-standard-4t"),
					}),
					// Across the project's clusters, raytpu's own slice with them.
					querycheck.ExpectLength("raytpu_slice.project", 4),
					querycheck.ExpectIdentity("raytpu_slice.project", slice(own, "own-v6e-2x2")),
					named("raytpu_slice.project", own.Name+"/own-v6e-2x2: v6e 2x2, 1 host, on-demand, made by raytpu"),
					// The cluster without raytpu_cluster's system pool is left out.
					querycheck.ExpectLength("raytpu_cluster.project", 1),
					querycheck.ExpectIdentity("raytpu_cluster.project", map[string]knownvalue.Check{
						"project": str(queryProject), "location": str(testLocation), "name": str(own.Name),
					}),
					named("raytpu_cluster.project", testLocation+"/"+own.Name+": RUNNING, Ray Operator on, 1 TPU node pool"),
				},
			},
			{
				Query: true,
				Config: fmt.Sprintf(`
list "raytpu_slice" "both" {
  provider = raytpu
  config {
    cluster = %q
    project = %q
  }
}
`, byo.String(), queryProject),
				ExpectError: regexp.MustCompile(`(?s)Conflicting List Arguments.*project cannot be set together with cluster`),
			},
			{
				// terraform query -generate-config-out, then import what it wrote.
				PreConfig: func() { queryGenerateImportPlan(t, byo) },
				Config:    queryClusterConfig(),
				PlanOnly:  true,
			},
		},
	})
}

// queryGenerateImportPlan runs, in a folder of its own, what a user adopting the listed pools
// runs: `terraform query -generate-config-out=generated.tf`, then `terraform apply` of the
// import blocks it wrote, then `terraform plan`, which must find nothing to change.
func queryGenerateImportPlan(t *testing.T, byo gke.ClusterID) {
	t.Helper()
	cli := reattachedCLI(t)
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("main.tf", "terraform {\n  required_providers {\n    raytpu = {\n      source = \"raytpu/raytpu\"\n    }\n  }\n}\n"+testAccProviderConfig())
	write("adopt.tfquery.hcl", fmt.Sprintf(`
list "raytpu_slice" "byo" {
  provider         = raytpu
  include_resource = true
  config {
    cluster = %q
  }
}

list "raytpu_cluster" "project" {
  provider         = raytpu
  include_resource = true
  config {
    project = %q
  }
}
`, byo.String(), queryProject))
	cli.run(t, dir, "init", "-input=false", "-no-color")
	cli.run(t, dir, "query", "-generate-config-out=generated.tf", "-no-color")
	generated, err := os.ReadFile(filepath.Join(dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(generated), "\nimport {"); got != 4 {
		t.Fatalf("the query wrote %d import blocks, want 4 (3 slices, 1 cluster):\n%s", got, generated)
	}
	if err := os.Remove(filepath.Join(dir, "adopt.tfquery.hcl")); err != nil {
		t.Fatal(err)
	}
	var summary struct {
		Type    string         `json:"type"`
		Changes map[string]any `json:"changes"`
	}
	imported := false
	for _, line := range strings.Split(string(cli.run(t, dir, "apply", "-auto-approve", "-input=false", "-json")), "\n") {
		if json.Unmarshal([]byte(line), &summary) == nil && summary.Type == "change_summary" {
			want := map[string]any{"add": 0.0, "change": 0.0, "import": 4.0, "remove": 0.0}
			for k, v := range want {
				if summary.Changes[k] != v {
					t.Errorf("applying the generated configuration: %s = %v, want %v (%v)\n%s", k, summary.Changes[k], v, summary.Changes, generated)
				}
			}
			imported = true
		}
	}
	if !imported {
		t.Fatal("applying the generated configuration printed no change summary")
	}
	if out, code := cli.runExit(t, dir, "plan", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
		t.Errorf("plan after importing the generated configuration exited with %d, want 0 (no changes):\n%s\n%s", code, out, generated)
	}
}
