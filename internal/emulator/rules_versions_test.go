package emulator

import (
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// A node pool's version against a control plane at 1.34.0-gke.2201000, below the newest 1.34
// (1.34.1-gke.1829001) and the newest version (1.35.0-gke.1795000).
func TestResolveNodeVersion(t *testing.T) {
	const master = "1.34.0-gke.2201000"
	ok := []struct{ in, want string }{
		{"", master},  // NodePool.version unset: the control plane's
		{"-", master}, // UpdateNodePoolRequest.node_version "-": "picks the Kubernetes master version"
		{"latest", master},
		{"1.34", master}, // the highest 1.34 not newer than the control plane, not 1.34.1
		{"1.34.0", master},
		{"1.33", "1.33.5-gke.1308000"},
		{"1.33.2", "1.33.2-gke.1240000"},
		{"1.31.2-gke.1115000", "1.31.2-gke.1115000"},
	}
	for _, tc := range ok {
		if got, err := resolveNodeVersion(tc.in, master); err != nil || got != tc.want {
			t.Errorf("resolveNodeVersion(%q) = %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"1.35.0-gke.1795000", `Node version "1.35.0-gke.1795000" must not have a greater minor version than master version "1.34.0-gke.2201000".`},
		{"1.35", `Node version "1.35.0-gke.1795000" must not have a greater minor version than master version`},
		{"1.34.1-gke.1829001", `Node version "1.34.1-gke.1829001" must not be newer than master version "1.34.0-gke.2201000".`},
		{"1.34.1", `Node version "1.34.1-gke.1829001" must not be newer than master version`},
		{"1.99", `Node version "1.99" is unsupported.`},
		{"1.34.0-gke.1", `Node version "1.34.0-gke.1" is unsupported.`},
		{"1.34.0-rc.1", `Node version "1.34.0-rc.1" is unsupported.`},
		{"v1.34.0-gke.2201000", `Version "v1.34.0-gke.2201000" is invalid. It should have the form 1.X, 1.X.Y, 1.X.Y-.*, 'latest'`},
		{"banana", `Version "banana" is invalid.`},
	}
	for _, tc := range bad {
		if got, err := resolveNodeVersion(tc.in, master); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("resolveNodeVersion(%q) = %q %v, want %q", tc.in, got, err, tc.msg)
		}
	}
}

// noChannel is a cluster not enrolled in a release channel.
const noChannel = containerpb.ReleaseChannel_UNSPECIFIED //nolint:staticcheck // what GKE reports for a cluster without a channel

func TestResolveMasterVersion(t *testing.T) {
	ok := []struct {
		in      string
		channel containerpb.ReleaseChannel_Channel
		want    string
	}{
		{"", containerpb.ReleaseChannel_REGULAR, defaultVersion},
		{"-", containerpb.ReleaseChannel_STABLE, "1.33.5-gke.1308000"},
		{"", containerpb.ReleaseChannel_RAPID, "1.35.0-gke.1795000"},
		// "latest" and "1.X" pick among the channel's versions.
		{"latest", containerpb.ReleaseChannel_REGULAR, "1.34.1-gke.1829001"},
		{"latest", noChannel, gkeVersions[0]},
		{"1.33", containerpb.ReleaseChannel_STABLE, "1.33.5-gke.1308000"},
		{"1.35", containerpb.ReleaseChannel_RAPID, "1.35.0-gke.1795000"},
		// Without a channel every offered version is open.
		{"1.30.0-gke.1167000", noChannel, "1.30.0-gke.1167000"},
		{"", noChannel, defaultVersion},
	}
	for _, tc := range ok {
		if got, err := resolveMasterVersion(tc.in, tc.channel); err != nil || got != tc.want {
			t.Errorf("resolveMasterVersion(%q, %s) = %q %v, want %q", tc.in, tc.channel, got, err, tc.want)
		}
	}
	bad := []struct {
		in      string
		channel containerpb.ReleaseChannel_Channel
		msg     string
	}{
		{"1.35", containerpb.ReleaseChannel_REGULAR,
			`Master version must be one of "REGULAR" channel supported versions [1.33.2-gke.1240000, 1.33.5-gke.1308000, 1.34.0-gke.2201000, 1.34.1-gke.1829001].`},
		{"1.31.2-gke.1115000", containerpb.ReleaseChannel_RAPID, `Master version must be one of "RAPID" channel supported versions [`},
		{"1.99.0-gke.1", containerpb.ReleaseChannel_REGULAR, `Master version "1.99.0-gke.1" is unsupported.`},
		{"1.99", noChannel, `Master version "1.99" is unsupported.`},
		{"v1.34", containerpb.ReleaseChannel_REGULAR, `Version "v1.34" is invalid.`},
	}
	for _, tc := range bad {
		if got, err := resolveMasterVersion(tc.in, tc.channel); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("resolveMasterVersion(%q, %s) = %q %v, want %q", tc.in, tc.channel, got, err, tc.msg)
		}
	}
	// desired_master_version "-" "picks the default Kubernetes version": the channel's.
	if got, err := resolveMasterUpdate("-", containerpb.ReleaseChannel_RAPID); err != nil || got != "1.35.0-gke.1795000" {
		t.Errorf("resolveMasterUpdate(-, RAPID) = %q %v", got, err)
	}
	if got, err := resolveMasterUpdate("latest", containerpb.ReleaseChannel_STABLE); err != nil || got != gkeVersions[0] {
		t.Errorf("resolveMasterUpdate(latest, STABLE) = %q %v", got, err)
	}
}

// serverConfig offers per channel a default among the channel's versions, all of them offered.
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
		`Master version must be one of "RAPID" channel supported versions [1.34.0-gke.2201000, 1.34.1-gke.1829001, 1.35.0-gke.1795000].`)

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
