package provider

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// recreateCluster is the cluster of TestAccSlice_recreateSendsRaytpusRequest.
const recreateCluster = "acc-recreate"

// TestAccSlice_recreateSendsRaytpusRequest recreates a healthy slice and compares the two
// CreateNodePool requests the emulator logged: the action's is raytpu_slice's own, field for field,
// with none of what GKE added to the old pool's answer (its TPU taint, disable-legacy-endpoints
// metadata, bootDisk, effectiveCgroupMode, pod range, goog-gke-* labels). The slice sets the
// settings GKE would otherwise default (disk, scopes, management), so that both requests name
// them. The next plan is empty.
func TestAccSlice_recreateSendsRaytpusRequest(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.Actions)
	slice := testAccSliceConfig(recreateCluster, `
resource "raytpu_slice" "test" {
  cluster         = raytpu_cluster.test.id
  name            = "again"
  generation      = "v6e"
  topology        = "2x4"
  chips_per_host  = 4
  labels          = { team = "ml" }
  resource_labels = { cost = "research" }
  disk_size_gb    = 120
  disk_type       = "pd-ssd"
  oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
  auto_repair     = true
  auto_upgrade    = true
}
`)
	recreate := slice + `
action "raytpu_recreate_slice" "again" {
  config {
    slice = raytpu_slice.test.id
  }
}
` + trigger("again", "action.raytpu_recreate_slice.again", "1")
	since := time.Now()
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: slice},
			{Config: recreate, Check: sameCreateRequests(since, recreateCluster, "again")},
			{Config: recreate, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// sameCreateRequests checks that the emulator answered two CreateNodePool requests for pool of
// cluster since then, raytpu_slice's and the action's, and that they ask for the same pool.
func sameCreateRequests(since time.Time, cluster, pool string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		records, err := testEmulator.Requests(context.Background())
		if err != nil {
			return err
		}
		var pools []*containerpb.NodePool
		for _, r := range records {
			if r.Time.Before(since) || r.RPC != "CreateNodePool" || r.Status != 200 || !strings.Contains(r.Path, "/clusters/"+cluster+"/") {
				continue
			}
			var req containerpb.CreateNodePoolRequest
			if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(r.Body, &req); err != nil {
				return fmt.Errorf("reading a CreateNodePool body of %s: %v", r.Path, err)
			}
			if req.GetNodePool().GetName() == pool {
				pools = append(pools, req.GetNodePool())
			}
		}
		if len(pools) != 2 {
			return fmt.Errorf("the emulator answered %d CreateNodePool requests for node pool %s, want 2 (raytpu_slice's, the action's)", len(pools), pool)
		}
		if !proto.Equal(pools[0], pools[1]) {
			return fmt.Errorf("raytpu_recreate_slice asked for another node pool than raytpu_slice did: the slice's request\n%s\nthe "+
				"action's\n%s\nwant the same: the action must not send back what GKE added to the old pool's answer",
				prototext.Format(pools[0]), prototext.Format(pools[1]))
		}
		return nil
	}
}

// recreateRequest builds raytpu_slice's request from the pool as GKE reports it: the settings
// raytpu_slice has, and a RayCluster's claim, but nothing GKE added or reports of the pool as it runs.
func TestRecreateRequestIsRaytpusRequest(t *testing.T) {
	pool := &containerpb.NodePool{
		Name: "trillium", InitialNodeCount: 4, Locations: []string{"us-east5-b"}, Version: "1.34.1-gke.100",
		Config: &containerpb.NodeConfig{
			MachineType: "ct6e-standard-4t", Spot: true, DiskSizeGb: 100, DiskType: "pd-balanced", ServiceAccount: "default",
			Labels:         map[string]string{"team": "ml", "raytpu.dev/ray-cluster": "actions"},
			ResourceLabels: map[string]string{"cost": "research", "goog-gke-node-pool-provisioning-model": "spot"},
			// What GKE adds to every pool it creates.
			Metadata:            map[string]string{"disable-legacy-endpoints": "true", "raytpu-slice": "true"},
			Taints:              []*containerpb.NodeTaint{{Key: "google.com/tpu", Value: "present", Effect: containerpb.NodeTaint_NO_SCHEDULE}},
			BootDisk:            &containerpb.BootDisk{DiskType: "pd-balanced", SizeGb: 100},
			EffectiveCgroupMode: containerpb.NodeConfig_EFFECTIVE_CGROUP_MODE_V2,
			OauthScopes:         []string{"https://www.googleapis.com/auth/cloud-platform"},
		},
		NetworkConfig:   &containerpb.NodeNetworkConfig{PodRange: "gke-c-pods-1234abcd", PodIpv4CidrBlock: "10.4.0.0/14"},
		PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
		Management:      &containerpb.NodeManagement{AutoRepair: true},
		// What GKE reports of the pool as it runs.
		SelfLink: "https://container.googleapis.com/v1/projects/p/zones/us-east5-b/clusters/c/nodePools/trillium",
		Status:   containerpb.NodePool_RUNNING_WITH_ERROR, InstanceGroupUrls: []string{"https://compute/igm"},
		Conditions: []*containerpb.StatusCondition{{Message: "host failed"}}, PodIpv4CidrSize: 24, Etag: "abc",
	}
	before := proto.Clone(pool)
	r, err := recreateRequest(context.Background(), nodePoolIDFor("c", "trillium"), pool)
	if err != nil {
		t.Fatal(err)
	}
	want := &containerpb.NodePool{
		Name: "trillium", InitialNodeCount: 4, Locations: []string{"us-east5-b"}, Version: "1.34.1-gke.100",
		Config: &containerpb.NodeConfig{
			MachineType: "ct6e-standard-4t", Spot: true, DiskSizeGb: 100, DiskType: "pd-balanced",
			Labels:         map[string]string{"team": "ml", "raytpu.dev/ray-cluster": "actions"},
			ResourceLabels: map[string]string{"cost": "research"},
			Metadata:       map[string]string{"raytpu-slice": "true"},
			OauthScopes:    []string{"https://www.googleapis.com/auth/cloud-platform"},
		},
		PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
		Management:      &containerpb.NodeManagement{AutoRepair: true},
	}
	if !proto.Equal(r, want) {
		t.Errorf("recreateRequest =\n%s\nwant raytpu_slice's request for the slice\n%s", prototext.Format(r), prototext.Format(want))
	}
	if !proto.Equal(pool, before) {
		t.Error("recreateRequest changed the pool it was given")
	}
	claimed := map[string]string{"raytpu.dev/ray-cluster": "actions"}
	bare := &containerpb.NodePool{Name: "bare", InitialNodeCount: 1, Locations: []string{"us-east5-b"},
		Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t", Labels: claimed}}
	if r, err := recreateRequest(context.Background(), nodePoolIDFor("c", "bare"), bare); err != nil || !maps.Equal(r.GetConfig().GetLabels(), claimed) {
		t.Errorf("recreateRequest of a pool with a claim and no labels of its own: %v, %v; want the claim's labels alone", r, err)
	}
	if _, err := recreateRequest(context.Background(), nodePoolIDFor("c", "cpu"), &containerpb.NodePool{Name: "cpu", Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}); err == nil ||
		!strings.Contains(err.Error(), "node pool cpu is not a TPU slice raytpu can describe") {
		t.Errorf("recreateRequest of a CPU pool: %v, want the error that it is no TPU slice", err)
	}
}
