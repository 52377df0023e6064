package emulator

import (
	"strings"
	"testing"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createPoolOp starts creating np and returns its finished operation; the pool is deleted when
// the test ends, whatever became of it.
func createPoolOp(t *testing.T, c *container.ClusterManagerClient, cluster string, np *containerpb.NodePool) *containerpb.Operation {
	t.Helper()
	ctx := testCtx(t)
	op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: np})
	if err != nil {
		t.Fatalf("creating %s: %v", np.Name, err)
	}
	t.Cleanup(func() {
		mustSucceed(t, c)(c.DeleteNodePool(testCtx(t), &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/" + np.Name}))
	})
	done, _ := waitOp(t, c, op)
	return done
}

func wantOpError(t *testing.T, op *containerpb.Operation, msg string) {
	t.Helper()
	if op.Error == nil || !strings.Contains(op.Error.Message, msg) {
		t.Errorf("operation %s ended with %v, want an error containing %q", op.Name, op.Error, msg)
	}
}

func wantOpDone(t *testing.T, op *containerpb.Operation) {
	t.Helper()
	if op.Error != nil {
		t.Errorf("operation %s failed: %v", op.Name, op.Error.Message)
	}
}

func reservedPool(name, value string) *containerpb.NodePool {
	return &containerpb.NodePool{Name: name, InitialNodeCount: 1, Config: &containerpb.NodeConfig{
		MachineType: "ct6e-standard-4t",
		ReservationAffinity: &containerpb.ReservationAffinity{
			ConsumeReservationType: containerpb.ReservationAffinity_SPECIFIC_RESERVATION, Key: reservationNameKey, Values: []string{value},
		},
	}}
}

// A zone's TPU capacity comes in kinds, each with its own stock, and reservations have theirs: a
// zone out of on-demand v6e chips still has Spot ones; a pool naming a reservation takes its chips
// from it alone, from another project when the reservation is shared, and from one of its blocks.
func TestCapacityKindsAndReservations(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })
	for _, cp := range []Capacity{
		{Zone: testZone, Generation: "v6e", Chips: 0},
		{Zone: testZone, Generation: "v6e", Type: CapacitySpot, Chips: 4},
	} {
		if err := testEmu.SetCapacity(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	single := func(name string, spot bool) *containerpb.NodePool {
		return &containerpb.NodePool{Name: name, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t", Spot: spot}}
	}
	wantOpError(t, createPoolOp(t, c, cluster, single("cap-on-demand", false)), "does not have enough resources available")
	wantOpDone(t, createPoolOp(t, c, cluster, single("cap-spot", true)))
	wantOpError(t, createPoolOp(t, c, cluster, single("cap-spot-2", true)), "needs 4 spot v6e chips, 0 of 4 are free")

	for _, r := range []Reservation{
		{Project: testProject, Zone: testZone, Name: "res-a", Generation: "v6e", Chips: 4, Blocks: []string{"block-1"}, SpecificOnly: true},
		{Project: "shared-capacity", Zone: testZone, Name: "res-shared", Generation: "trillium", Chips: 4, SpecificOnly: true},
	} {
		if err := testEmu.CreateReservation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	wantOpDone(t, createPoolOp(t, c, cluster, reservedPool("cap-res-a", "res-a")))
	wantOpError(t, createPoolOp(t, c, cluster, reservedPool("cap-res-a-2", "res-a/reservationBlocks/block-1")),
		"lack of capacity in your reservation "+reservationKey(testProject, testZone, "res-a"))
	wantOpDone(t, createPoolOp(t, c, cluster, reservedPool("cap-res-shared", "projects/shared-capacity/reservations/res-shared")))
	wantOpError(t, createPoolOp(t, c, cluster, reservedPool("cap-res-none", "res-none")), `Reservation "res-none" was not found`)
	wantOpError(t, createPoolOp(t, c, cluster, reservedPool("cap-res-block", "res-a/reservationBlocks/block-9")), `block "block-9"`)

	// ANY_RESERVATION takes a reservation that does not require to be named, then the kind's stock.
	if err := testEmu.CreateReservation(ctx, Reservation{Project: testProject, Zone: testZone, Name: "res-open", Generation: "v6e", Chips: 4}); err != nil {
		t.Fatal(err)
	}
	anyPool := func(name string) *containerpb.NodePool {
		np := single(name, false)
		np.Config.ReservationAffinity = &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_ANY_RESERVATION}
		return np
	}
	wantOpDone(t, createPoolOp(t, c, cluster, anyPool("cap-any")))
	wantOpError(t, createPoolOp(t, c, cluster, anyPool("cap-any-2")), "does not have enough resources available")
}

// An autoscaled multi-host slice scales as one unit, to zero or to all of its hosts; a queued
// (flex-start) pool gets its hosts when the request is fulfilled.
func TestScalePool(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	hosts := func(pool string) int {
		t.Helper()
		nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool=" + pool})
		if err != nil {
			t.Fatal(err)
		}
		return len(nodes.Items)
	}
	scale := func(pool string, nodes int) error {
		return testEmu.ScalePool(ctx, PoolScale{Cluster: cluster, NodePool: pool, Nodes: nodes})
	}
	np := &containerpb.NodePool{Name: "scaled", InitialNodeCount: 4, PlacementPolicy: compact("4x4"), Autoscaling: autoscaling(0, 4),
		Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"}}
	createPoolForTest(t, c, cluster, np)
	if n := hosts("scaled"); n != 4 {
		t.Fatalf("%d hosts after creation, want 4", n)
	}
	if err := scale("scaled", 0); err != nil || hosts("scaled") != 0 {
		t.Fatalf("scaling to 0: %v, %d hosts left", err, hosts("scaled"))
	}
	if err := scale("scaled", 2); err == nil || !strings.Contains(err.Error(), "scales to 0 or 4") {
		t.Errorf("scaling a 4-host slice to 2: %v", err)
	}
	if err := scale("scaled", 4); err != nil || hosts("scaled") != 4 {
		t.Fatalf("scaling back to 4: %v, %d hosts", err, hosts("scaled"))
	}

	createPoolForTest(t, c, cluster, edit(queuedPool("queued", "ct6e-standard-4t", 4, compact("4x4")), func(np *containerpb.NodePool) {
		np.Config.FlexStart = ptr(true)
	}))
	if n := hosts("queued"); n != 0 {
		t.Fatalf("a queued pool has %d hosts before its request is fulfilled", n)
	}
	if err := scale("queued", 4); err != nil || hosts("queued") != 4 {
		t.Fatalf("fulfilling the queued request: %v, %d hosts", err, hosts("queued"))
	}
	if err := scale("system", 2); err == nil || !strings.Contains(err.Error(), "neither autoscales nor queues") {
		t.Errorf("scaling a fixed pool: %v", err)
	}
}
