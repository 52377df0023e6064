package provider

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

func TestPoolMakerAndDisplayName(t *testing.T) {
	compact := func(topology string) *containerpb.NodePool_PlacementPolicy {
		return &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: topology}
	}
	own := &containerpb.NodePool{Name: "trillium", InitialNodeCount: 4, PlacementPolicy: compact("4x4"), Locations: []string{"us-east5-b"},
		Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"}}
	markOwnPool(own)
	cluster := gke.ClusterID{Project: "p", Location: "us-east5-b", Name: "ray"}
	for _, tc := range []struct {
		pool        *containerpb.NodePool
		maker, name string
	}{
		{own, madeByRaytpu, "ray/trillium: v6e 4x4, 4 hosts, on-demand, made by raytpu"},
		{
			&containerpb.NodePool{Name: "ray-np-3", InitialNodeCount: 2, PlacementPolicy: compact("2x4"),
				Config: &containerpb.NodeConfig{MachineType: "ct5lp-hightpu-4t", Spot: true}},
			madeByXPK, "ray/ray-np-3: v5e 2x4, 2 hosts, spot, made by xpk",
		},
		{
			// Auto-provisioned wins over a name that looks like xpk's.
			&containerpb.NodePool{Name: "ray-np-0", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-8t"},
				Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, Autoprovisioned: true}},
			madeByNAP, "ray/ray-np-0: v6e 2x4, 1 host, on-demand, made by GKE node auto-provisioning",
		},
		{
			// Another cluster's xpk name, and a suffix xpk does not write: no mark.
			&containerpb.NodePool{Name: "other-np-0", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-1t"}},
			"", "ray/other-np-0: v6e 1x1, 1 host, on-demand, made by a tool GKE does not record",
		},
		{
			&containerpb.NodePool{Name: "ray-np-x", InitialNodeCount: 3, Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
				PlacementPolicy: compact("3x3")},
			"", "ray/ray-np-x: TPU shape unknown (ct6e-standard-4t), 3 hosts, on-demand, made by a tool GKE does not record",
		},
	} {
		if got := poolMaker(cluster.Name, tc.pool); got != tc.maker {
			t.Errorf("poolMaker(%s) = %q, want %q", tc.pool.GetName(), got, tc.maker)
		}
		if got := sliceDisplayName(cluster, tc.pool); got != tc.name {
			t.Errorf("sliceDisplayName(%s) = %q, want %q", tc.pool.GetName(), got, tc.name)
		}
	}
}
