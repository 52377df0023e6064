package provider

import (
	"maps"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

func TestRecreateRequestKeepsTheSettingsGKEReports(t *testing.T) {
	pool := &containerpb.NodePool{
		Name: "trillium", InitialNodeCount: 4, Locations: []string{"us-east5-b"}, Version: "1.34.1-gke.100",
		Config: &containerpb.NodeConfig{
			MachineType: "ct6e-standard-4t", Spot: true, Labels: map[string]string{"team": "ml"},
			ResourceLabels: map[string]string{"cost": "research", "goog-gke-node-pool-provisioning-model": "spot"},
		},
		PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
		Management:      &containerpb.NodeManagement{AutoRepair: true},
		// What GKE reports of the pool as it runs.
		SelfLink: "https://container.googleapis.com/v1/projects/p/zones/us-east5-b/clusters/c/nodePools/trillium",
		Status:   containerpb.NodePool_RUNNING_WITH_ERROR, InstanceGroupUrls: []string{"https://compute/igm"},
		Conditions: []*containerpb.StatusCondition{{Message: "host failed"}}, PodIpv4CidrSize: 24, Etag: "abc",
	}
	markOwnPool(pool)
	r := recreateRequest(pool)
	if r.GetSelfLink() != "" || r.GetStatus() != containerpb.NodePool_STATUS_UNSPECIFIED || r.GetInstanceGroupUrls() != nil ||
		r.GetConditions() != nil || r.GetPodIpv4CidrSize() != 0 || r.GetEtag() != "" {
		t.Errorf("recreateRequest keeps what GKE reports of the running pool: %v", r)
	}
	if want := map[string]string{"cost": "research"}; !maps.Equal(r.GetConfig().GetResourceLabels(), want) {
		t.Errorf("resource labels %v, want %v: GKE's own goog-gke labels are GKE's to set", r.GetConfig().GetResourceLabels(), want)
	}
	if r.GetName() != "trillium" || r.GetInitialNodeCount() != 4 || r.GetVersion() != pool.GetVersion() || !r.GetConfig().GetSpot() ||
		r.GetPlacementPolicy().GetTpuTopology() != "4x4" || r.GetConfig().GetLabels()["team"] != "ml" || !r.GetManagement().GetAutoRepair() ||
		poolMaker("c", r) != madeByRaytpu {
		t.Errorf("recreateRequest lost a setting of the pool: %v", r)
	}
	if pool.GetConfig().GetResourceLabels()["goog-gke-node-pool-provisioning-model"] != "spot" || pool.GetStatus() != containerpb.NodePool_RUNNING_WITH_ERROR {
		t.Error("recreateRequest changed the pool it was given")
	}
}
