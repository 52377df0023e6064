package gke

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// createSlicePool starts the creation of a v6e 4x4 pool (4 hosts) on the shared cluster, holding
// the pool's lock until the test ends, and deletes the pool afterwards.
func createSlicePool(t *testing.T, c *Client, name string) (NodePoolID, *containerpb.Operation) {
	t.Helper()
	ctx := testCtx(t)
	id := NodePoolID{Cluster: testCluster, Name: name}
	unlock, err := c.LockNodePool(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer unlock()
		if op, err := c.DeleteNodePool(context.Background(), id); err == nil {
			_ = c.WaitForOperation(context.Background(), testCluster, op)
		}
	})
	op, err := c.CreateNodePool(ctx, id, &containerpb.NodePool{
		Name: name, InitialNodeCount: 4,
		Config:          &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
		PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return id, op
}

// failNextPoolCreation makes the next node pool creation end in a stockout.
func failNextPoolCreation(t *testing.T) {
	t.Helper()
	if err := testEmulator(t).FailNextOperation(testCtx(t), emulator.OperationFault{
		OperationType: "CREATE_NODE_POOL", Status: "RESOURCE_EXHAUSTED", Reason: "GCE_STOCKOUT",
		Message: "The zone does not have enough resources available to fulfill the request.",
	}); err != nil {
		t.Fatal(err)
	}
}

// setPoolLatency makes node pool creations take d for the rest of the test.
func setPoolLatency(t *testing.T, d time.Duration) {
	t.Helper()
	if err := testEmulator(t).SetLatencies(testCtx(t), map[string]time.Duration{"CREATE_NODE_POOL": d}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = testEmulator(t).SetLatencies(context.Background(), map[string]time.Duration{"CREATE_NODE_POOL": 100 * time.Millisecond})
	})
}

// clientPolling builds a client whose operation reads are at most max apart.
func clientPolling(t *testing.T, maxGap time.Duration) *Client {
	t.Helper()
	c, err := New(context.Background(), Config{
		Endpoint: testEmulator(t).Endpoint(), TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testEmulator(t).Token()}),
		Poll:  PollSchedule{Initial: 20 * time.Millisecond, Max: maxGap, Fraction: 0.2},
		Retry: Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// callsDuring counts the emulator's requests by method while f runs. The package's tests run one
// at a time, so every request in between is f's.
func callsDuring(t *testing.T, f func()) map[string]int {
	t.Helper()
	ctx := testCtx(t)
	before, err := testEmulator(t).Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f()
	after, err := testEmulator(t).Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// waitPoolStatus waits until GKE reports pool id in status. It reads the cluster: the tests count
// the reads of the pool and of its operation.
func waitPoolStatus(t *testing.T, id NodePoolID, status containerpb.NodePool_Status) {
	t.Helper()
	c, ctx := testClient(t), testCtx(t)
	testwait.For(t, fmt.Sprintf("node pool %s to be %s", id.Name, status), func() bool {
		cluster, err := c.GetCluster(ctx, id.Cluster, Fresh)
		if err != nil {
			t.Log(err)
			return false
		}
		for _, p := range cluster.GetNodePools() {
			if p.GetName() == id.Name {
				return p.GetStatus() == status
			}
		}
		return false
	})
}

// waitCreated runs WaitForNodePoolCreation, wants the pool back RUNNING and returns the calls it
// made and how long it took.
func waitCreated(t *testing.T, c *Client, id NodePoolID, op *containerpb.Operation, hostsUp <-chan struct{}) (map[string]int, time.Duration) {
	t.Helper()
	var pool *containerpb.NodePool
	var err error
	started := time.Now()
	calls := callsDuring(t, func() { pool, err = c.WaitForNodePoolCreation(testCtx(t), id, op, hostsUp) })
	waited := time.Since(started)
	if err != nil {
		t.Fatal(err)
	}
	if pool.GetStatus() != containerpb.NodePool_RUNNING || pool.GetName() != id.Name {
		t.Errorf("returned pool %s in %s, want %s RUNNING", pool.GetName(), pool.GetStatus(), id.Name)
	}
	return calls, waited
}

// The hosts are up once GKE has ended the creation: one read of the pool ends the wait, and the
// operation, read only every Max, is not read at all.
func TestWaitForNodePoolCreationEndsOnTheHostsWithoutPolling(t *testing.T) {
	setPoolLatency(t, 500*time.Millisecond)
	c := clientPolling(t, 10*time.Second)
	id, op := createSlicePool(t, c, "hosts-up")
	waitPoolStatus(t, id, containerpb.NodePool_RUNNING)
	hostsUp := make(chan struct{})
	close(hostsUp)
	calls, _ := waitCreated(t, c, id, op, hostsUp)
	if calls["GetOperation"] != 0 || calls["GetNodePool"] != 1 {
		t.Errorf("calls %v: want one GetNodePool and no GetOperation", calls)
	}
}

// Hosts seen before GKE is done (a pool still PROVISIONING): the pool is read from then on, on
// the schedule, until it is RUNNING.
func TestWaitForNodePoolCreationPollsWhenTheHostsAreEarly(t *testing.T) {
	setPoolLatency(t, time.Second)
	c := clientPolling(t, 10*time.Second)
	id, op := createSlicePool(t, c, "hosts-early")
	hostsUp := make(chan struct{})
	close(hostsUp)
	calls, waited := waitCreated(t, c, id, op, hostsUp)
	// More than one read: the first, made at once, comes within the 1 s creation.
	if calls["GetOperation"] != 0 || calls["GetNodePool"] < 2 {
		t.Errorf("calls %v: want reads of the pool until it is RUNNING (20 ms apart, growing), no GetOperation", calls)
	}
	if waited < time.Second {
		t.Errorf("waited %s for a 1 s creation, polled every 20 ms growing", waited)
	}
}

// Hosts watched that never come up: a creation that fails is still seen, by reading the
// operation every Max.
func TestWaitForNodePoolCreationSeesAFailureWithoutHosts(t *testing.T) {
	setPoolLatency(t, 500*time.Millisecond)
	c := clientPolling(t, 300*time.Millisecond)
	failNextPoolCreation(t)
	id, op := createSlicePool(t, c, "no-hosts")
	var err error
	started := time.Now()
	calls := callsDuring(t, func() { _, err = c.WaitForNodePoolCreation(testCtx(t), id, op, make(chan struct{})) })
	var opErr *OperationError
	if !errors.As(err, &opErr) || opErr.Type != containerpb.Operation_CREATE_NODE_POOL {
		t.Fatalf("WaitForNodePoolCreation = %v, want the operation's error", err)
	}
	if calls["GetOperation"] < 1 || calls["GetNodePool"] != 0 {
		t.Errorf("calls %v: want GetOperation, no GetNodePool", calls)
	}
	// Every 300 ms, not on the schedule (every 20 ms at first): the gaps, unlike their number, do
	// not depend on how busy the machine is, being at least Max.
	prev := started
	for _, at := range requestTimes(t, "GetOperation", started) {
		if gap := at.Sub(prev); gap < 300*time.Millisecond {
			t.Errorf("GetOperation %s after the one before (or the wait's start), want at least 300 ms", gap)
		}
		prev = at
	}
}

// Hosts reported up for a pool whose creation failed: the pool is in ERROR and the operation
// says why.
func TestWaitForNodePoolCreationReportsWhyAPoolIsInError(t *testing.T) {
	setPoolLatency(t, 300*time.Millisecond)
	c := clientPolling(t, 10*time.Second)
	failNextPoolCreation(t)
	id, op := createSlicePool(t, c, "error-pool")
	waitPoolStatus(t, id, containerpb.NodePool_ERROR)
	hostsUp := make(chan struct{})
	close(hostsUp)
	_, err := c.WaitForNodePoolCreation(testCtx(t), id, op, hostsUp)
	var opErr *OperationError
	if !errors.As(err, &opErr) || !strings.Contains(err.Error(), "not have enough resources") {
		t.Fatalf("WaitForNodePoolCreation = %v, want the operation's stockout", err)
	}
}

// Nobody watches the hosts: the operation is polled on the schedule, not every Max.
func TestWaitForNodePoolCreationWithoutHostsPolls(t *testing.T) {
	setPoolLatency(t, 500*time.Millisecond)
	c := clientPolling(t, 10*time.Second)
	id, op := createSlicePool(t, c, "unwatched")
	calls, _ := waitCreated(t, c, id, op, nil)
	// More than one poll: the first, 20 ms in, comes within the 500 ms creation; one every Max
	// would be one, at 10 s.
	if calls["GetOperation"] < 2 || calls["GetNodePool"] != 1 {
		t.Errorf("calls %v: want polls of the operation, then one read of the pool", calls)
	}
}

func TestWaitForNodePoolCreationHonoursTheContext(t *testing.T) {
	setPoolLatency(t, 2*time.Second)
	c := clientPolling(t, 10*time.Second)
	id, op := createSlicePool(t, c, "cut-short")
	// 300 ms into a creation of 2 s.
	_, err := c.WaitForNodePoolCreation(cutShort(t, op, 300*time.Millisecond), id, op, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForNodePoolCreation with a short context = %v", err)
	}
	// The creation goes on in GKE: waiting again with time to spare sees it end.
	if err := c.WaitForOperation(testCtx(t), testCluster, op); err != nil {
		t.Fatal(err)
	}
}
