package gke

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// holders runs n lockers at once and returns the most that held their locks at the same time.
// Each holds its lock until want lockers have held theirs at once, however slowly a busy machine
// starts them, and then for hold, in which a lock that let more in would show it.
func holders(t *testing.T, n, want int, hold time.Duration, lock func(i int) (func(), error)) int {
	t.Helper()
	ctx := testwait.Context(t)
	var inside, most atomic.Int32
	enough := make(chan struct{})
	var enoughOnce sync.Once
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := lock(i)
			if err != nil {
				t.Error(err)
				return
			}
			now := inside.Add(1)
			for {
				prev := most.Load()
				if now <= prev || most.CompareAndSwap(prev, now) {
					break
				}
			}
			if now >= int32(want) {
				enoughOnce.Do(func() { close(enough) })
			}
			select {
			case <-enough:
			case <-ctx.Done():
				t.Errorf("gave up waiting for %d lockers to hold their locks at once, at the test's deadline", want)
			}
			time.Sleep(hold)
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	return int(most.Load())
}

func TestClusterMutationsRunAlone(t *testing.T) {
	var l clusterLocks
	got := holders(t, 4, 1, 20*time.Millisecond, func(int) (func(), error) { return l.lockCluster(context.Background(), "c") })
	if got != 1 {
		t.Errorf("%d cluster mutations at once, want 1", got)
	}
}

func TestNodePoolMutationsRunSideBySideUpToTheCap(t *testing.T) {
	var l clusterLocks
	got := holders(t, 8, MaxNodePoolOperations, 50*time.Millisecond, func(i int) (func(), error) {
		return l.lockNodePool(context.Background(), "c", string(rune('a'+i)))
	})
	if got != MaxNodePoolOperations {
		t.Errorf("%d mutations of 8 pools at once, want %d", got, MaxNodePoolOperations)
	}
	// Another cluster's pools do not count against this one's cap.
	unlocks := make([]func(), 0, MaxNodePoolOperations)
	for i := range MaxNodePoolOperations {
		u, err := l.lockNodePool(context.Background(), "c", string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		unlocks = append(unlocks, u)
	}
	other, err := l.lockNodePool(testwait.Context(t), "other", "a")
	if err != nil {
		t.Fatalf("a pool of another cluster waited for this cluster's cap: %v", err)
	}
	other()
	for _, u := range unlocks {
		u()
	}
}

func TestOnePoolOneMutationAtATime(t *testing.T) {
	var l clusterLocks
	got := holders(t, 3, 1, 20*time.Millisecond, func(int) (func(), error) { return l.lockNodePool(context.Background(), "c", "p") })
	if got != 1 {
		t.Errorf("%d mutations of one pool at once, want 1", got)
	}
}

func TestClusterAndPoolMutationsExcludeEachOther(t *testing.T) {
	var l clusterLocks
	// Safe on a busy machine: the other lock is held throughout, so the wait can only end at its
	// deadline.
	short := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 30*time.Millisecond)
	}

	unlockPool, err := l.lockNodePool(context.Background(), "c", "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := short()
	if _, err := l.lockCluster(ctx, "c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cluster lock while a pool mutation runs = %v, want it to wait", err)
	}
	cancel()
	unlockPool()

	unlockCluster, err := l.lockCluster(context.Background(), "c")
	if err != nil {
		t.Fatalf("cluster lock once the pool mutation ended: %v", err)
	}
	ctx, cancel = short()
	if _, err := l.lockNodePool(ctx, "c", "q"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("pool lock while a cluster mutation runs = %v, want it to wait", err)
	}
	cancel()
	// A pool lock given up while waiting holds nothing: the cluster lock is free once released.
	unlockCluster()
	unlockCluster() // a second call is harmless
	again, err := l.lockCluster(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	again()
}

func TestWaitingClusterMutationIsNotStarvedByPoolMutations(t *testing.T) {
	var l clusterLocks
	first, err := l.lockNodePool(context.Background(), "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	clusterHeld := make(chan func())
	go func() {
		unlock, err := l.lockCluster(context.Background(), "c")
		if err != nil {
			t.Error(err)
			close(clusterHeld)
			return
		}
		clusterHeld <- unlock
	}()
	testwait.For(t, "the cluster mutation to queue for its lock", func() bool { return queued(l.get("c").cluster) })
	// Safe on a busy machine: the queued cluster mutation waits for pool a, held throughout.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := l.lockNodePool(ctx, "c", "b"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a pool mutation that came after a waiting cluster mutation went first: %v", err)
	}
	first()
	select {
	case unlock := <-clusterHeld:
		if unlock != nil {
			unlock()
		}
	case <-testwait.Context(t).Done():
		t.Fatal("the cluster mutation did not get the lock once the pool mutation ended")
	}
}

// queued reports a waiter on sem: then it lets no one else in, not even for one unit.
func queued(sem *semaphore.Weighted) bool {
	if sem.TryAcquire(1) {
		sem.Release(1)
		return false
	}
	return true
}
