package gke

import (
	"errors"
	"fmt"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

func TestCapacityShortageClassifiesGKEAnswers(t *testing.T) {
	withReason := func(reason string) *status.Status {
		s, err := status.New(codes.ResourceExhausted, "creation failed").WithDetails(&errdetails.ErrorInfo{Reason: reason})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		err  error
		want Shortage
	}{
		{"stockout condition", &OperationError{status: status.New(codes.Unknown, "Not all instances running in IGM"),
			conditions: []containerpb.StatusCondition_Code{containerpb.StatusCondition_GCE_STOCKOUT}}, ShortageStockout},
		{"quota condition", &OperationError{status: status.New(codes.Unknown, "instances failed"),
			conditions: []containerpb.StatusCondition_Code{containerpb.StatusCondition_GCE_QUOTA_EXCEEDED}}, ShortageQuota},
		{"stockout reason", &OperationError{status: withReason("GCE_STOCKOUT")}, ShortageStockout},
		{"compute text", &OperationError{status: status.New(codes.Unknown, "[GCE_STOCKOUT]: Instance 'gke-x' creation failed: The zone "+
			"'projects/p/zones/us-east5-b' does not have enough resources available to fulfill the request.")}, ShortageStockout},
		{"tpu text", fmt.Errorf("wrapped: %w", &OperationError{status: status.New(codes.Unknown,
			"Requested resource is exhausted: Zone 'us-central1-c' is not available.")}), ShortageStockout},
		{"reservation full", &OperationError{status: status.New(codes.ResourceExhausted,
			"TPU: the nodes cannot be created now due to lack of capacity in your reservation")}, ShortageStockout},
		{"quota 429", &googleapi.Error{Code: 429, Body: `{"error":{"status":"RESOURCE_EXHAUSTED"}}`,
			Message: "Insufficient quota to satisfy the request: Quota 'TPU_V6E' exceeded."}, ShortageQuota},
		{"quota 403", &googleapi.Error{Code: 403, Message: "Quota 'TPUS_PER_TPU_FAMILY' exceeded. Limit: 0.0 in region us-east5."}, ShortageQuota},
		{"operations cap", &googleapi.Error{Code: 429, Body: `{"error":{"status":"RESOURCE_EXHAUSTED"}}`,
			Message: `Too many operations: cluster "c" hits the concurrent operations quota 5, please try again later.`}, ""},
		{"permission", &googleapi.Error{Code: 403, Message: "Required 'container.nodePools.create' permission"}, ""},
		{"invalid", &OperationError{status: status.New(codes.InvalidArgument, "Maximum node count 0 is not a valid size")}, ""},
		{"nil", nil, ""},
	} {
		got, ok := CapacityShortage(tc.err)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: CapacityShortage = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

// A stockout and a quota refusal as the emulator gives them, through the client: the one after
// the operation, the other on the request.
func TestCapacityShortageOfTheEmulator(t *testing.T) {
	ctx := testCtx(t)
	c, emu := testClient(t), testEmulator(t)
	const zone = "us-central2-b"
	if err := emu.SetCapacity(ctx, emulator.Capacity{Zone: zone, Generation: "v5e", Type: emulator.CapacitySpot, Chips: 0}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = emu.SetCapacity(ctx, emulator.Capacity{Zone: zone, Generation: "v5e", Type: emulator.CapacitySpot, Chips: -1})
		_ = emu.SetQuota(ctx, emulator.Quota{Project: testCluster.Project, Generation: "v5e", Chips: -1})
	})
	pool := func(name string, spot bool) (NodePoolID, *containerpb.NodePool) {
		return NodePoolID{Cluster: testCluster, Name: name}, &containerpb.NodePool{
			Name: name, InitialNodeCount: 4, Locations: []string{zone},
			Config:          &containerpb.NodeConfig{MachineType: "ct5lp-hightpu-4t", Spot: spot},
			PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
		}
	}
	id, np := pool("spot-stockout", true)
	op, err := c.CreateNodePool(ctx, id, np)
	if err != nil {
		t.Fatal(err)
	}
	err = c.WaitForOperation(ctx, testCluster, op)
	if got, ok := CapacityShortage(err); !ok || got != ShortageStockout {
		t.Errorf("spot pool in a zone without spot chips: CapacityShortage(%v) = %q, %v; want stockout", err, got, ok)
	}
	if op, err := c.DeleteNodePool(ctx, id); err == nil {
		_ = c.WaitForOperation(ctx, testCluster, op)
	}
	if err := emu.SetQuota(ctx, emulator.Quota{Project: testCluster.Project, Generation: "v5e", Chips: 8}); err != nil {
		t.Fatal(err)
	}
	id, np = pool("over-quota", false)
	_, err = c.CreateNodePool(ctx, id, np)
	if got, ok := CapacityShortage(err); !ok || got != ShortageQuota {
		t.Errorf("pool over the project's quota: CapacityShortage(%v) = %q, %v; want quota", err, got, ok)
	}
	var opErr *OperationError
	if errors.As(err, &opErr) {
		t.Errorf("quota refusal came as an operation error: %v", err)
	}
}
