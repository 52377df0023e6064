package rules

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// On a release channel GKE keeps nodes upgraded and repaired; flex-start pools are exempt.
func TestManagementRule(t *testing.T) {
	pool := func(m *containerpb.NodeManagement, flex bool) *containerpb.NodePool {
		np := &containerpb.NodePool{Name: "p", InitialNodeCount: 1, Management: m, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}
		if flex {
			np.InitialNodeCount = 0
			np.Autoscaling = &containerpb.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 1}
			np.Config.FlexStart = func(b bool) *bool { return &b }(true)
		}
		return np
	}
	regular := ClusterFacts{Location: testZone, Locations: []string{testZone}, MasterVersion: DefaultVersion, Channel: containerpb.ReleaseChannel_REGULAR}
	none := regular
	none.Channel = containerpb.ReleaseChannel_UNSPECIFIED //nolint:staticcheck // a cluster without a channel
	noRepair := &containerpb.NodeManagement{AutoUpgrade: true}
	for _, tc := range []struct {
		name string
		cf   ClusterFacts
		np   *containerpb.NodePool
		want string
	}{
		{"defaults", regular, pool(nil, false), ""},
		{"both on", regular, pool(&containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: true}, false), ""},
		{"no repair on a channel", regular, pool(noRepair, false), "Auto_upgrade and auto_repair cannot be false when release_channel REGULAR is set."},
		{"no upgrade on a channel", regular, pool(&containerpb.NodeManagement{AutoRepair: true}, false), "cannot be false"},
		{"no channel", none, pool(noRepair, false), ""},
		{"flex-start", regular, pool(noRepair, true), ""},
	} {
		_, err := PlanNodePool(tc.cf, tc.np)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Message, tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
