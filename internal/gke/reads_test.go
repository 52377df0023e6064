package gke

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
)

// clientWithClock is a client of the shared emulator whose shared reads age by clock.
func clientWithClock(t *testing.T, clock *fakeClock) *Client {
	t.Helper()
	e := testEmulator(t)
	c, err := New(context.Background(), Config{
		Endpoint: e.Endpoint(), ComputeEndpoint: e.ComputeEndpoint(),
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.Token()}),
		Poll:        PollSchedule{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, Fraction: 0.5},
		Retry:       Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond},
		Now:         clock.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// createCPUPools creates CPU pools on the shared cluster, deleted when the test ends.
func createCPUPools(t *testing.T, c *Client, names ...string) []NodePoolID {
	t.Helper()
	ctx := testCtx(t)
	var ids []NodePoolID
	for _, name := range names {
		id := NodePoolID{Cluster: testCluster, Name: name}
		op, err := c.CreateNodePool(ctx, id, &containerpb.NodePool{Name: name, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}})
		if err == nil {
			err = c.WaitForOperation(ctx, testCluster, op)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if op, err := c.DeleteNodePool(context.Background(), id); err == nil {
				_ = c.WaitForOperation(context.Background(), testCluster, op)
			}
		})
		ids = append(ids, id)
	}
	return ids
}

// labelPool gives pool id the node label team=team, through c.
func labelPool(t *testing.T, c *Client, id NodePoolID, team string) {
	t.Helper()
	ctx := testCtx(t)
	op, err := c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: id.String(),
		Labels: &containerpb.NodeLabels{Labels: map[string]string{"team": team}}})
	if err == nil {
		err = c.WaitForOperation(ctx, id.Cluster, op)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The reads of a cluster's pools share one list until its lifetime ends; a write of the provider
// to the cluster, and its operation, make the next read list again and see the write; Fresh
// reads the pool itself; a pool the list lacks is read itself, so that GKE says it is not there.
func TestNodePoolReadsShareOneListOfTheCluster(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	c := clientWithClock(t, clock)
	ids := createCPUPools(t, c, "shared-a", "shared-b", "shared-c")
	get := func(id NodePoolID, opts ...ReadOption) *containerpb.NodePool {
		t.Helper()
		pool, err := c.GetNodePool(ctx, id, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if pool.GetName() != id.Name {
			t.Fatalf("read %s for %s", pool.GetName(), id.Name)
		}
		return pool
	}
	want := func(what string, calls, wantCalls map[string]int) {
		t.Helper()
		for rpc, n := range wantCalls {
			if calls[rpc] != n {
				t.Errorf("%s: calls %v, want %s %d", what, calls, rpc, n)
			}
		}
	}
	want("three reads", callsDuring(t, func() {
		for _, id := range ids {
			get(id)
		}
		if pools, err := c.ListNodePools(ctx, testCluster); err != nil || len(pools) < len(ids) {
			t.Errorf("ListNodePools: %d pools, %v", len(pools), err)
		}
	}), map[string]int{"ListNodePools": 1, "GetNodePool": 0})

	// A change of a pool by the provider: the read after it lists again and sees it.
	want("a read after a write", callsDuring(t, func() {
		labelPool(t, c, ids[0], "a")
		if got := get(ids[0]).GetConfig().GetLabels()["team"]; got != "a" {
			t.Errorf("label after the update: %q, want a", got)
		}
		get(ids[1])
	}), map[string]int{"ListNodePools": 1, "GetNodePool": 0})

	want("fresh reads", callsDuring(t, func() {
		get(ids[0], Fresh)
		get(ids[1], Fresh)
	}), map[string]int{"ListNodePools": 0, "GetNodePool": 2})

	clock.advance(SharedReadTTL - 1)
	want("within the lifetime", callsDuring(t, func() { get(ids[2]) }), map[string]int{"ListNodePools": 0, "GetNodePool": 0})
	clock.advance(1)
	want("at the end of the lifetime", callsDuring(t, func() { get(ids[2]) }), map[string]int{"ListNodePools": 1, "GetNodePool": 0})

	want("a pool the list lacks", callsDuring(t, func() {
		if _, err := c.GetNodePool(ctx, NodePoolID{Cluster: testCluster, Name: "shared-none"}); !IsNotFound(err) {
			t.Errorf("a pool that does not exist: %v, want NotFound", err)
		}
	}), map[string]int{"ListNodePools": 0, "GetNodePool": 1})

	// The answer of GetCluster holds the pools: it serves as a list.
	clock.advance(SharedReadTTL)
	want("reads after GetCluster", callsDuring(t, func() {
		if _, err := c.GetCluster(ctx, testCluster); err != nil {
			t.Fatal(err)
		}
		get(ids[0])
	}), map[string]int{"ListNodePools": 0, "GetNodePool": 0, "GetCluster": 1})
}

// The instance groups of a zone are listed once for the sizes of every pool in it, and again
// after a resize.
func TestNodePoolSizesShareOneListOfTheZone(t *testing.T) {
	ctx := testCtx(t)
	c := clientWithClock(t, newFakeClock())
	ids := createCPUPools(t, c, "sized-a", "sized-b")
	sizes := func() []int {
		t.Helper()
		var out []int
		for _, id := range ids {
			pool, err := c.GetNodePool(ctx, id, Fresh)
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.NodePoolSize(ctx, pool)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	calls := callsDuring(t, func() {
		if got := sizes(); got[0] != 1 || got[1] != 1 {
			t.Errorf("sizes %v, want 1 and 1", got)
		}
	})
	if calls["compute.instanceGroupManagers.list"] != 1 || calls["compute.instanceGroupManagers.get"] != 0 {
		t.Errorf("calls %v: want one list of the zone's instance groups", calls)
	}
	op, err := c.SetNodePoolSize(ctx, ids[1], 2)
	if err == nil {
		err = c.WaitForOperation(ctx, testCluster, op)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := sizes(); got[1] != 2 {
		t.Errorf("size after a resize to 2: %d", got[1])
	}
}

// The reads of a cluster share one read: readers at once wait for the one in flight and each gets
// its own copy; a failed read is not kept; a write to one of its pools keeps it, a write to the
// cluster itself forgets it so that the read after sees the write; Fresh reads the cluster itself;
// and the read ages out with its lifetime.
func TestClusterReadsAreShared(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	c := clientWithClock(t, clock)
	get := func(opts ...ReadOption) *containerpb.Cluster {
		t.Helper()
		cluster, err := c.GetCluster(ctx, testCluster, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return cluster
	}
	reads := func(what string, want int, f func()) {
		t.Helper()
		if n := callsDuring(t, f)["GetCluster"]; n != want {
			t.Errorf("%s: %d GetCluster requests, want %d", what, n, want)
		}
	}

	reads("eight readers at once", 1, func() {
		got := make([]*containerpb.Cluster, 8)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i] = get() })
		}
		wg.Wait()
		got[0].Endpoint = "changed"
		if got[1].GetEndpoint() == "changed" || get().GetEndpoint() == "changed" {
			t.Error("a reader's copy changed with another's")
		}
	})

	absent := ClusterID{Project: testCluster.Project, Location: testCluster.Location, Name: "absent"}
	reads("two reads of a cluster that does not exist", 2, func() {
		for range 2 {
			if _, err := c.GetCluster(ctx, absent); !IsNotFound(err) {
				t.Errorf("a cluster that does not exist: %v, want NotFound", err)
			}
		}
	})

	ids := createCPUPools(t, c, "kept-a")
	reads("a read after a write to a pool", 0, func() {
		labelPool(t, c, ids[0], "a")
		get()
	})

	logging := "none"
	if get().GetLoggingService() == logging {
		logging = "logging.googleapis.com/kubernetes"
	}
	// A read while the update runs, and one after its operation is DONE, which sees it.
	reads("reads during and after a write to the cluster", 2, func() {
		op, err := c.UpdateCluster(ctx, testCluster, &containerpb.ClusterUpdate{DesiredLoggingService: logging})
		if err != nil {
			t.Fatal(err)
		}
		get()
		if err := c.WaitForOperation(ctx, testCluster, op); err != nil {
			t.Fatal(err)
		}
		if got := get().GetLoggingService(); got != logging {
			t.Errorf("logging service after the update: %q, want %q", got, logging)
		}
		get()
	})

	reads("fresh reads", 2, func() {
		get(Fresh)
		get(Fresh)
	})

	clock.advance(SharedReadTTL - 1)
	reads("within the lifetime", 0, func() { get() })
	clock.advance(1)
	reads("at the end of the lifetime", 1, func() { get() })
}

// The versions on offer in a location are read once for every reader, and again with Fresh or
// for another location.
func TestServerConfigReadsAreShared(t *testing.T) {
	ctx := testCtx(t)
	c := clientWithClock(t, newFakeClock())
	get := func(location string, opts ...ReadOption) *containerpb.ServerConfig {
		t.Helper()
		sc, err := c.GetServerConfig(ctx, testCluster.Project, location, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	calls := callsDuring(t, func() {
		first := get(testCluster.Location)
		first.DefaultClusterVersion = "changed"
		if get(testCluster.Location).GetDefaultClusterVersion() == "changed" {
			t.Error("a reader's copy changed with another's")
		}
		get(testCluster.Location, Fresh)
		get("europe-west4-a")
		get("europe-west4-a")
	})
	if n := calls["GetServerConfig"]; n != 3 {
		t.Errorf("%d GetServerConfig requests, want 3: one shared, one Fresh, one of another location", n)
	}
}
