package emulator

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// Placement: tpu_topology only on multi-host slices, in GKE's full words
// (AI-Hypercomputer/xpk#825), and a workload policy in place of COMPACT for a multi-host tpu7x
// slice (vllm-project/ci-infra#547).
func TestPlacementRules(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	wantRefused(t, c, cluster, tpuPool("rp-bad", "ct6e-standard-1t", 1, compact("1x1")), gketpu.ErrTopologyOnSingleHost.Error())
	if !strings.HasSuffix(gketpu.ErrTopologyOnSingleHost.Error(), "run with single-host TPU slice nodes.") {
		t.Errorf("not GKE's full text: %q", gketpu.ErrTopologyOnSingleHost)
	}
	wantRefused(t, c, cluster, tpuPool("rp-bad", "ct5p-hightpu-4t", 1, compact("2x2x1")), "TPU topology can't be specified with single-host TPU slice pool")
	wantRefused(t, c, cluster, tpuPool("rp-bad", "tpu7x-standard-4t", 2, compact("2x2x2")),
		"Creation of a managed instance group with tpu7x-standard-4t machine type with placement policy is not supported. Use workload policy instead.")

	// COMPACT without a topology on a single-host pool: no GKE refusal was found, so it is taken.
	cf := rules.ClusterFacts{Location: testZone, Locations: []string{testZone}, MasterVersion: rules.DefaultVersion}

	// A workload policy on a single-host tpu7x pool brings its topology with it, which xpk#825
	// met as GKE's single-host refusal; on a multi-host pool it places the slice.
	withPolicies := cf
	withPolicies.Policies = func(name string) (*rules.ResourcePolicy, string) {
		topology := map[string]string{"wp-2x2x1": "2x2x1", "wp-2x2x2": "2x2x2"}[name]
		return &rules.ResourcePolicy{WorkloadPolicy: true, AcceleratorTopology: topology}, name
	}
	if _, err := rules.PlanNodePool(withPolicies, tpuPool("p", "tpu7x-standard-4t", 1, &containerpb.NodePool_PlacementPolicy{PolicyName: "wp-2x2x1"})); err == nil ||
		err.Message != gketpu.ErrTopologyOnSingleHost.Error() {
		t.Errorf("single-host tpu7x with a workload policy: %v, want %q", err, gketpu.ErrTopologyOnSingleHost)
	}
	if _, err := rules.PlanNodePool(withPolicies, tpuPool("p", "tpu7x-standard-4t", 2, &containerpb.NodePool_PlacementPolicy{PolicyName: "wp-2x2x2"})); err != nil {
		t.Errorf("multi-host tpu7x with its workload policy: %v", err)
	}
	if _, err := rules.PlanNodePool(cf, tpuPool("p", "ct6e-standard-4t", 1,
		&containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT})); err != nil {
		t.Errorf("single-host COMPACT: %v", err)
	}
}
