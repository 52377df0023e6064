package emulator

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	gcontainer "google.golang.org/api/container/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// A multi-host slice's per-zone maximum must be its size (GKE: "Maximum node count 0 is not a
// valid size of TPU pod slice with topology ..."), also when the total is given instead.
func TestSliceAutoscaling(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	for _, tc := range []struct {
		name string
		a    *containerpb.NodePoolAutoscaling
		msg  string
	}{
		{"total maximum only", &containerpb.NodePoolAutoscaling{Enabled: true, TotalMaxNodeCount: 4},
			`Maximum node count 0 is not a valid size of TPU pod slice with topology "4x4"`},
		{"two slices", autoscaling(0, 8), `Maximum node count 8 is not a valid size of TPU pod slice with topology "4x4"`},
		{"part of a slice", autoscaling(0, 2), `Maximum node count 2 is not a valid size of TPU pod slice with topology "4x4"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, c, cluster, edit(flexPool("ra-bad", "ct6e-standard-4t", 4, compact("4x4")), func(np *containerpb.NodePool) {
				np.Autoscaling = tc.a
			}), tc.msg)
		})
	}
	// tpu7x: the topology is the workload policy's.
	if err := testEmu.CreateResourcePolicy(testCtx(t), ResourcePolicy{Project: testProject, Region: rules.ZoneRegion(testZone),
		Name: "wp-2x2x2", AcceleratorTopology: "2x2x2"}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	wantRefused(t, c, cluster, flexPool("ra-bad", "tpu7x-standard-4t", 4, &containerpb.NodePool_PlacementPolicy{PolicyName: "wp-2x2x2", TpuTopology: "2x2x2"}),
		`Maximum node count 4 is not a valid size of TPU pod slice with topology "2x2x2"`)

	// A single-host pool scales by whole hosts, any number of them.
	np := createPoolForTest(t, c, cluster, flexPool("ra-single", "ct6e-standard-4t", 5, nil))
	if np.Autoscaling.MaxNodeCount != 5 {
		t.Errorf("autoscaling reported as %v", np.Autoscaling)
	}
	np = createPoolForTest(t, c, cluster, flexPool("ra-slice", "ct6e-standard-4t", 4, compact("4x4")))
	if a := np.Autoscaling; !a.Enabled || a.MaxNodeCount != 4 || a.LocationPolicy != containerpb.NodePoolAutoscaling_BALANCED {
		t.Errorf("autoscaling reported as %v", a)
	}
	// SetNodePoolAutoscaling applies the same rule.
	_, err := c.SetNodePoolAutoscaling(testCtx(t), &containerpb.SetNodePoolAutoscalingRequest{
		Name: cluster + "/nodePools/ra-slice", Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, TotalMaxNodeCount: 4}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", `Maximum node count 0 is not a valid size of TPU pod slice with topology "4x4"`)
}

// Autoscaling is stored and reported as GKE reports it, and SetNodePoolAutoscaling (both clients)
// and UpdateCluster's desiredNodePoolAutoscaling replace it.
func TestNodePoolAutoscaling(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	name := cluster + "/nodePools/ra-cpu"
	np := createPoolForTest(t, c, cluster, &containerpb.NodePool{Name: "ra-cpu", InitialNodeCount: 0, Autoscaling: autoscaling(1, 3),
		Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}})
	if a := np.Autoscaling; !a.Enabled || a.MinNodeCount != 1 || a.MaxNodeCount != 3 || a.LocationPolicy != containerpb.NodePoolAutoscaling_BALANCED {
		t.Errorf("autoscaling reported as %v", a)
	}

	op := mustSucceed(t, c)(c.SetNodePoolAutoscaling(ctx, &containerpb.SetNodePoolAutoscalingRequest{Name: name,
		Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, TotalMinNodeCount: 0, TotalMaxNodeCount: 6, LocationPolicy: containerpb.NodePoolAutoscaling_ANY}}))
	if op.OperationType != containerpb.Operation_UPGRADE_NODES || !strings.HasSuffix(op.TargetLink, name) {
		t.Errorf("operation %s on %s", op.OperationType, op.TargetLink)
	}
	np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if a := np.Autoscaling; !a.Enabled || a.MaxNodeCount != 0 || a.TotalMaxNodeCount != 6 || a.LocationPolicy != containerpb.NodePoolAutoscaling_ANY {
		t.Errorf("after SetNodePoolAutoscaling: %v", a)
	}

	// The discovery client's call, and GKE's refusal of per-zone and total maximums together.
	s := discoveryClient(t)
	_, err = s.Projects.Locations.Clusters.NodePools.SetAutoscaling(name, &gcontainer.SetNodePoolAutoscalingRequest{
		Autoscaling: &gcontainer.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 2, TotalMaxNodeCount: 6}}).Do()
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "cannot be both greater than zero")
	dop, err := s.Projects.Locations.Clusters.NodePools.SetAutoscaling(name, &gcontainer.SetNodePoolAutoscalingRequest{
		Autoscaling: &gcontainer.NodePoolAutoscaling{Enabled: true, MinNodeCount: 0, MaxNodeCount: 2}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	waitDiscoveryOp(t, c, dop.SelfLink)
	dnp, err := s.Projects.Locations.Clusters.NodePools.Get(name).Do()
	if err != nil {
		t.Fatal(err)
	}
	if a := dnp.Autoscaling; !a.Enabled || a.MaxNodeCount != 2 || a.TotalMaxNodeCount != 0 || a.LocationPolicy != "BALANCED" {
		t.Errorf("after the discovery client's SetAutoscaling: %+v", a)
	}

	// UpdateCluster with desiredNodePoolId and desiredNodePoolAutoscaling, checked the same way.
	_, err = c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredNodePoolId: "ra-cpu", DesiredNodePoolAutoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 3, MaxNodeCount: 2}}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "min_node_count 3 is greater than max_node_count 2")
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredNodePoolId: "ra-cpu", DesiredNodePoolAutoscaling: autoscaling(0, 4)}}))
	if np, err = c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name}); err != nil {
		t.Fatal(err)
	}
	if a := np.Autoscaling; !a.Enabled || a.MaxNodeCount != 4 || a.LocationPolicy != containerpb.NodePoolAutoscaling_BALANCED {
		t.Errorf("after UpdateCluster: %v", a)
	}
}
