package emulator

import (
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// rules.ServerConfig offers per channel a default among the channel's versions, all of them offered.
func TestServerConfigChannels(t *testing.T) {
	sc, err := restClient(t, testEmu.Token()).GetServerConfig(testCtx(t), &containerpb.GetServerConfigRequest{Name: testLocation})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Channels) != 4 {
		t.Fatalf("channels %v", sc.Channels)
	}
	for _, ch := range sc.Channels {
		if !slices.Contains(ch.ValidVersions, ch.DefaultVersion) {
			t.Errorf("%s: default %s not among %v", ch.Channel, ch.DefaultVersion, ch.ValidVersions)
		}
		for _, v := range ch.ValidVersions {
			if !slices.Contains(sc.ValidMasterVersions, v) || !slices.Contains(sc.ValidNodeVersions, v) {
				t.Errorf("%s: %s is not an offered version", ch.Channel, v)
			}
		}
		if ch.Channel == containerpb.ReleaseChannel_REGULAR && ch.DefaultVersion != sc.DefaultClusterVersion {
			t.Errorf("REGULAR default %s, default cluster version %s", ch.DefaultVersion, sc.DefaultClusterVersion)
		}
	}
}

// Through the client: a cluster in a channel is refused a version outside it, and node pool
// versions resolve against the control plane.
func TestVersionRulesThroughTheAPI(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "rv-rapid", InitialClusterVersion: "1.33", ReleaseChannel: &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_RAPID},
		NodePools: []*containerpb.NodePool{{Name: "default", InitialNodeCount: 1}},
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT",
		`Master version must be one of "RAPID" channel supported versions [1.34.0-gke.2201000, 1.34.1-gke.1829001, 1.35.0-gke.1795000, 1.36.0-gke.3712000].`)

	cluster := sharedCluster(t)
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	master := cl.CurrentMasterVersion
	minor := strings.Join(strings.SplitN(master, ".", 3)[:2], ".")
	np := createPoolForTest(t, c, cluster, &containerpb.NodePool{Name: "rv-minor", Version: minor, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}})
	if np.Version != master {
		t.Errorf("version %q resolved to %s with the control plane at %s", minor, np.Version, master)
	}
	name := cluster + "/nodePools/rv-minor"
	mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, NodeVersion: "1.33"}))
	if np, err = c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name}); err != nil || np.Version != "1.33.5-gke.1308000" {
		t.Fatalf("after updating to 1.33: %v %v", np.GetVersion(), err)
	}
	mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, NodeVersion: "-"}))
	if np, err = c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name}); err != nil || np.Version != master {
		t.Fatalf(`after updating to "-": %v %v`, np.GetVersion(), err)
	}
	_, err = c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, NodeVersion: "v1.33"})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", `Version "v1.33" is invalid. It should have the form 1.X, 1.X.Y, 1.X.Y-.*, 'latest'`)
}
