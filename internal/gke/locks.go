package gke

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
)

// MaxNodePoolOperations is how many node pool operations GKE runs at once on one cluster; the
// next one gets 429 "Too many operations: cluster "NAME" hits the concurrent operations quota 5"
// (terraform-provider-google #15205, #15579). The provider keeps at most this many in flight.
const MaxNodePoolOperations = 5

// clusterWeight is the weight of a cluster's lock: an exclusive holder takes all of it, a shared
// holder one unit. No apply holds this many shared locks on one cluster.
const clusterWeight = 1 << 30

// clusterLocks orders this provider's mutations as GKE orders operations ("Troubleshoot
// concurrent operations": one cluster-level operation, or one operation per node pool, at a
// time): a cluster mutation holds its cluster exclusively; a node pool mutation holds its cluster
// shared, its pool exclusively and one of the cluster's MaxNodePoolOperations slots. Waiters are
// served in order, so a cluster mutation is not starved by a stream of pool mutations.
type clusterLocks struct {
	mu       sync.Mutex
	clusters map[string]*clusterLock
}

type clusterLock struct {
	cluster *semaphore.Weighted // clusterWeight exclusive, 1 shared
	slots   *semaphore.Weighted // MaxNodePoolOperations
	pools   map[string]*semaphore.Weighted
}

func (l *clusterLocks) get(cluster string) *clusterLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clusters == nil {
		l.clusters = map[string]*clusterLock{}
	}
	c, ok := l.clusters[cluster]
	if !ok {
		c = &clusterLock{
			cluster: semaphore.NewWeighted(clusterWeight),
			slots:   semaphore.NewWeighted(MaxNodePoolOperations),
			pools:   map[string]*semaphore.Weighted{},
		}
		l.clusters[cluster] = c
	}
	return c
}

func (l *clusterLocks) pool(c *clusterLock, pool string) *semaphore.Weighted {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := c.pools[pool]
	if !ok {
		p = semaphore.NewWeighted(1)
		c.pools[pool] = p
	}
	return p
}

// lockCluster blocks until no other mutation of this provider runs on the cluster, or ctx ends.
// The unlock function may be called more than once.
func (l *clusterLocks) lockCluster(ctx context.Context, cluster string) (func(), error) {
	c := l.get(cluster)
	if err := c.cluster.Acquire(ctx, clusterWeight); err != nil {
		return nil, err
	}
	return releaseOnce(func() { c.cluster.Release(clusterWeight) }), nil
}

// lockNodePool blocks until the pool has no other mutation of this provider, no cluster mutation
// runs, and fewer than MaxNodePoolOperations pool mutations run on the cluster; or until ctx ends.
func (l *clusterLocks) lockNodePool(ctx context.Context, cluster, pool string) (func(), error) {
	c := l.get(cluster)
	p := l.pool(c, pool)
	var held []func()
	unlock := releaseOnce(func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	})
	for _, step := range []struct {
		sem    *semaphore.Weighted
		weight int64
	}{{p, 1}, {c.cluster, 1}, {c.slots, 1}} {
		if err := step.sem.Acquire(ctx, step.weight); err != nil {
			unlock()
			return nil, err
		}
		held = append(held, func() { step.sem.Release(step.weight) })
	}
	return unlock, nil
}

func releaseOnce(f func()) func() {
	var once sync.Once
	return func() { once.Do(f) }
}
