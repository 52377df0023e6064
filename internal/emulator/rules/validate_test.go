package rules

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// PlanNodePool on its own, against the emulator's TPU tables.
func TestPlanTPUNodePools(t *testing.T) {
	cf := ClusterFacts{Location: testZone, Locations: []string{testZone}, MasterVersion: GKEVersions[0]}
	pool := func(machine string, nodes int32, pp *containerpb.NodePool_PlacementPolicy, version string) *containerpb.NodePool {
		return &containerpb.NodePool{Name: "p", InitialNodeCount: nodes, PlacementPolicy: pp, Version: version,
			Config: &containerpb.NodeConfig{MachineType: machine}}
	}
	compact := func(topology string) *containerpb.NodePool_PlacementPolicy {
		return &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: topology}
	}
	oldest := GKEVersions[len(GKEVersions)-1]
	ok := []struct {
		np                        *containerpb.NodePool
		generation, accelerator   string
		topology                  string
		chips, nodes              int
		multiHost, workloadPolicy bool
	}{
		{pool("ct6e-standard-8t", 1, nil, ""), "v6e", "tpu-v6e-slice", "2x4", 8, 1, false, false},
		{pool("ct6e-standard-4t", 2, compact("2x4"), ""), "v6e", "tpu-v6e-slice", "2x4", 4, 2, true, false},
		// xpk's v5litepod-8 (see gketpu/txt).
		{pool("ct5lp-hightpu-4t", 2, compact("2x4"), ""), "v5e", "tpu-v5-lite-podslice", "2x4", 4, 2, true, false},
		// v4 dimensions come in any order, and the topology is kept as written.
		{pool("ct4p-hightpu-4t", 32, compact("8x4x4"), ""), "v4", "tpu-v4-podslice", "8x4x4", 4, 32, true, false},
		// No GKE source states a v4, v5e or v5p minimum, so the oldest offered version will do.
		{pool("ct4p-hightpu-4t", 1, nil, oldest), "v4", "tpu-v4-podslice", "2x2x1", 4, 1, false, false},
		{pool("ct5p-hightpu-4t", 1, nil, oldest), "v5p", "tpu-v5p-slice", "2x2x1", 4, 1, false, false},
		{pool("ct5lp-hightpu-1t", 1, nil, oldest), "v5e", "tpu-v5-lite-podslice", "1x1", 1, 1, false, false},
		{pool("tpu7x-standard-4t", 16, &containerpb.NodePool_PlacementPolicy{PolicyName: "wp", TpuTopology: "4x4x4"}, ""),
			"tpu7x", "tpu7x", "4x4x4", 4, 16, true, true},
		{pool("tpu7x-standard-1t", 1, nil, ""), "tpu7x", "tpu7x", "1x1x1", 1, 1, false, false},
	}
	for _, tc := range ok {
		plan, err := PlanNodePool(cf, tc.np)
		if err != nil {
			t.Errorf("%s %s: %v", tc.np.Config.MachineType, tc.np.PlacementPolicy.GetTpuTopology(), err)
			continue
		}
		p := plan.Pool
		if p.Generation != tc.generation || p.Accelerator != tc.accelerator || p.Topology != tc.topology ||
			p.ChipsPerNode != tc.chips || p.NodeCount != tc.nodes || p.MultiHost != tc.multiHost {
			t.Errorf("%s %s: pool %+v", tc.np.Config.MachineType, tc.topology, p)
		}
		if pp := p.PB.PlacementPolicy; tc.workloadPolicy && (pp.Type != containerpb.NodePool_PlacementPolicy_TYPE_UNSPECIFIED || pp.PolicyName != "wp" || pp.TpuTopology != tc.topology) {
			t.Errorf("tpu7x placement policy reported as %v", pp)
		}
	}

	bad := []struct {
		np  *containerpb.NodePool
		msg string
	}{
		{pool("ct6e-standard-1t", 1, compact("1x1"), ""),
			"TPU topology can't be specified with single-host TPU slice pool; please remove the tpu_topology from the node pool creation request"},
		{pool("tpu7x-standard-4t", 2, compact("2x2x2"), ""),
			"Creation of a managed instance group with tpu7x-standard-4t machine type with placement policy is not supported. Use workload policy instead."},
		{pool("tpu7x-standard-4t", 2, &containerpb.NodePool_PlacementPolicy{TpuTopology: "2x2x2"}, ""), "needs a workload policy"},
		{pool("ct6e-standard-4t", 1, nil, "1.31.1-gke.2105000"), "requires GKE version 1.31.2-gke.1115000 or later"},
		{pool("tpu7x-standard-1t", 1, nil, "1.33.5-gke.1308000"), "requires GKE version 1.34.0-gke.2201000 or later"},
		{pool("ct5lp-hightpu-4t", 3, compact("4x4"), ""), "needs 4 nodes, got 3"},
		{pool("ct5p-hightpu-4t", 2, compact("8x4x4"), ""), "non-decreasing order"},
		{pool("ct5lp-hightpu-8t", 2, compact("4x4"), ""), "forms no multi-host slices"},
		{pool("ct9-hightpu-4t", 1, nil, ""), "does not exist"},
	}
	for _, tc := range bad {
		_, err := PlanNodePool(cf, tc.np)
		if err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("%s %s: %v, want %q", tc.np.Config.MachineType, tc.np.PlacementPolicy.GetTpuTopology(), err, tc.msg)
		}
	}
}

// The emulator has no minimum for a generation where no GKE source gave one; internal/tpu's
// unverified minimums for those lie below every version the emulator offers, so the gap changes
// no answer.
func TestUnsourcedMinimumsAreBelowOfferedVersions(t *testing.T) {
	oldest := GKEVersions[len(GKEVersions)-1]
	for _, tg := range tpu.Generations() {
		g, err := gketpu.LookupGeneration(tg.Name)
		if err != nil {
			t.Fatal(err)
		}
		if g.MinGKEVersion == "" && !VersionLess(tg.MinGKEVersion.String(), oldest) {
			t.Errorf("%s: internal/tpu's minimum %s is not below the oldest offered version %s", tg.Name, tg.MinGKEVersion, oldest)
		}
	}
}

func TestRayOperatorMinimum(t *testing.T) {
	ray := &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: true}}
	if err := CheckRayVersion(ray, "1.30.0-gke.1167000"); err == nil || !strings.Contains(err.Message, "requires GKE version 1.30.0-gke.1747000") {
		t.Errorf("below the minimum: %v", err)
	}
	if err := CheckRayVersion(ray, "1.30.0-gke.1747000"); err != nil {
		t.Errorf("at the minimum: %v", err)
	}
}
