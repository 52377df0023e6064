package emulator

import (
	"maps"
	"slices"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"

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

// What GKE reports of every pool it creates beyond what it was sent, which a client that sends a
// pool's answer back in a create would send too: disable-legacy-endpoints metadata, the effective
// cgroup mode, the boot disk, the cluster's pod range, and on TPU pools the TPU taint. A disk
// change moves the boot disk with it; an update of the taints keeps GKE's.
func TestNodePoolsGetGKEsConfigAnswers(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	ip := cl.GetIpAllocationPolicy()
	if ip.GetClusterSecondaryRangeName() == "" || ip.GetClusterIpv4CidrBlock() == "" {
		t.Fatalf("cluster ipAllocationPolicy %v: want the pod range GKE makes, its name and block", ip)
	}
	tpuTaint := &containerpb.NodeTaint{Key: "google.com/tpu", Value: "present", Effect: containerpb.NodeTaint_NO_SCHEDULE}
	for _, tc := range []struct {
		np     *containerpb.NodePool
		taints []*containerpb.NodeTaint
	}{
		{tpuPool("ga-tpu", "ct6e-standard-4t", 1, nil), []*containerpb.NodeTaint{tpuTaint}},
		{&containerpb.NodePool{Name: "ga-cpu", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}, nil},
	} {
		got := createPoolForTest(t, c, cluster, tc.np)
		cfg := got.GetConfig()
		if cfg.GetMetadata()["disable-legacy-endpoints"] != "true" {
			t.Errorf("pool %s: metadata %v, want disable-legacy-endpoints=true", tc.np.Name, cfg.GetMetadata())
		}
		if cfg.GetEffectiveCgroupMode() != containerpb.NodeConfig_EFFECTIVE_CGROUP_MODE_V2 {
			t.Errorf("pool %s: effectiveCgroupMode %v, want EFFECTIVE_CGROUP_MODE_V2", tc.np.Name, cfg.GetEffectiveCgroupMode())
		}
		if b := cfg.GetBootDisk(); b.GetDiskType() != "pd-balanced" || b.GetSizeGb() != 100 {
			t.Errorf("pool %s: bootDisk %v, want pd-balanced, 100 GB (its diskType and diskSizeGb)", tc.np.Name, b)
		}
		if nc := got.GetNetworkConfig(); nc.GetPodRange() != ip.GetClusterSecondaryRangeName() || nc.GetPodIpv4CidrBlock() != ip.GetClusterIpv4CidrBlock() {
			t.Errorf("pool %s: networkConfig %v, want the cluster's pod range %s (%s)", tc.np.Name, nc, ip.GetClusterSecondaryRangeName(), ip.GetClusterIpv4CidrBlock())
		}
		if !slices.EqualFunc(cfg.GetTaints(), tc.taints, func(a, b *containerpb.NodeTaint) bool { return proto.Equal(a, b) }) {
			t.Errorf("pool %s: taints %v, want %v", tc.np.Name, cfg.GetTaints(), tc.taints)
		}
	}

	name := cluster + "/nodePools/ga-tpu"
	own := &containerpb.NodeTaint{Key: "team", Value: "ml", Effect: containerpb.NodeTaint_NO_SCHEDULE}
	mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, Taints: &containerpb.NodeTaints{Taints: []*containerpb.NodeTaint{own}}}))
	mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, DiskSizeGb: 200}))
	got, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if want := []*containerpb.NodeTaint{own, tpuTaint}; !slices.EqualFunc(got.GetConfig().GetTaints(), want, func(a, b *containerpb.NodeTaint) bool { return proto.Equal(a, b) }) {
		t.Errorf("after an update of the taints: %v, want %v (GKE's TPU taint stays)", got.GetConfig().GetTaints(), want)
	}
	if b := got.GetConfig().GetBootDisk(); b.GetSizeGb() != 200 {
		t.Errorf("after a disk update to 200 GB: bootDisk %v, want size 200", b)
	}
}
