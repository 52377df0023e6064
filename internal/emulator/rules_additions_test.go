package emulator

import (
	"maps"
	"slices"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// What GKE adds to what it was sent, through the API as clients read it: the reserved resource
// labels of every node pool, which an update cannot change, and the default OAuth scopes.
func TestNodePoolsGetGKEsReservedLabels(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	cases := []struct {
		np   *containerpb.NodePool
		want map[string]string
	}{
		{&containerpb.NodePool{Name: "gl-cpu", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4",
			ResourceLabels: map[string]string{"team": "ml"}}},
			map[string]string{"team": "ml", "goog-gke-node-pool-provisioning-model": "on-demand"}},
		{&containerpb.NodePool{Name: "gl-spot", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4", Spot: true}},
			map[string]string{"goog-gke-node-pool-provisioning-model": "spot"}},
		{tpuPool("gl-slice", "ct6e-standard-4t", 4, compact("4x4")),
			map[string]string{"goog-gke-node-pool-provisioning-model": "on-demand", "goog-gke-accelerator-type": "tpu-v6e-slice",
				"goog-gke-tpu-node-pool-type": "multi-host"}},
		{tpuPool("gl-single", "ct6e-standard-4t", 1, nil),
			map[string]string{"goog-gke-node-pool-provisioning-model": "on-demand", "goog-gke-accelerator-type": "tpu-v6e-slice"}},
	}
	for _, tc := range cases {
		got := createPoolForTest(t, c, cluster, tc.np)
		if !maps.Equal(got.Config.ResourceLabels, tc.want) {
			t.Errorf("node pool %s: resourceLabels = %v, want %v", tc.np.Name, got.Config.ResourceLabels, tc.want)
		}
	}

	// A client that replaces the labels, reserved ones included, gets GKE's back.
	name := cluster + "/nodePools/gl-cpu"
	mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, ResourceLabels: &containerpb.ResourceLabels{
		Labels: map[string]string{"team": "infra", "goog-gke-node-pool-provisioning-model": "spot", "goog-gke-made-up": "x"}}}))
	got, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"team": "infra", "goog-gke-node-pool-provisioning-model": "on-demand"}; !maps.Equal(got.Config.ResourceLabels, want) {
		t.Errorf("after an update: resourceLabels = %v, want %v", got.Config.ResourceLabels, want)
	}
	if !slices.Equal(got.Config.OauthScopes, rules.DefaultOAuthScopes) {
		t.Errorf("a pool created without scopes has %v, want GKE's defaults %v", got.Config.OauthScopes, rules.DefaultOAuthScopes)
	}
	sorted := createPoolForTest(t, c, cluster, &containerpb.NodePool{Name: "gl-scopes", InitialNodeCount: 1, Config: &containerpb.NodeConfig{
		MachineType: "e2-standard-4", OauthScopes: []string{"https://www.googleapis.com/auth/logging.write", "https://www.googleapis.com/auth/devstorage.read_only"}}})
	if want := []string{"https://www.googleapis.com/auth/devstorage.read_only", "https://www.googleapis.com/auth/logging.write"}; !slices.Equal(sorted.Config.OauthScopes, want) {
		t.Errorf("scopes read back as %v, want %v", sorted.Config.OauthScopes, want)
	}
}

// Cluster.network and .subnetwork read back as names whatever form was sent; networkConfig holds
// the paths. Node auto-provisioning defaults are filled in, with the monitoring scope added.
func TestClusterNetworkNamesAndAutoscalingDefaults(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	const name = "ga-network"
	mustSucceed(t, c)(c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name:       name,
		Network:    "projects/" + testProject + "/global/networks/vpc",
		Subnetwork: "https://www.googleapis.com/compute/v1/projects/" + testProject + "/regions/" + rules.ZoneRegion(testZone) + "/subnetworks/tpu",
		NodePools:  []*containerpb.NodePool{{Name: "system", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}},
		Autoscaling: &containerpb.ClusterAutoscaling{
			EnableNodeAutoprovisioning: true,
			ResourceLimits:             []*containerpb.ResourceLimit{{ResourceType: "cpu", Maximum: 64}, {ResourceType: "memory", Maximum: 256}},
			AutoprovisioningNodePoolDefaults: &containerpb.AutoprovisioningNodePoolDefaults{OauthScopes: []string{
				"https://www.googleapis.com/auth/logging.write", "https://www.googleapis.com/auth/devstorage.read_only"}},
		},
	}}))
	id := testLocation + "/clusters/" + name
	t.Cleanup(func() { mustSucceed(t, c)(c.DeleteCluster(testCtx(t), &containerpb.DeleteClusterRequest{Name: id})) })
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: id})
	if err != nil {
		t.Fatal(err)
	}
	if cl.Network != "vpc" || cl.Subnetwork != "tpu" {
		t.Errorf("network, subnetwork = %q, %q; want the names vpc, tpu", cl.Network, cl.Subnetwork)
	}
	wantNetwork, wantSubnetwork := "projects/"+testProject+"/global/networks/vpc", "projects/"+testProject+"/regions/"+rules.ZoneRegion(testZone)+"/subnetworks/tpu"
	if nc := cl.NetworkConfig; nc.Network != wantNetwork || nc.Subnetwork != wantSubnetwork {
		t.Errorf("networkConfig = %q, %q; want %q, %q", nc.Network, nc.Subnetwork, wantNetwork, wantSubnetwork)
	}
	d := cl.Autoscaling.AutoprovisioningNodePoolDefaults
	wantScopes := []string{"https://www.googleapis.com/auth/devstorage.read_only", "https://www.googleapis.com/auth/logging.write", rules.MonitoringScope}
	if !slices.Equal(d.OauthScopes, wantScopes) || d.ServiceAccount != "default" || cl.Autoscaling.AutoscalingProfile != containerpb.ClusterAutoscaling_BALANCED {
		t.Errorf("autoscaling read back as %v, want the scopes %v, service account default and profile BALANCED", cl.Autoscaling, wantScopes)
	}
}
