package gke

import (
	"context"
	"sync"
)

// clusterLocks serialises this provider's mutating operations per cluster: GKE runs one
// operation at a time on a cluster and answers FAILED_PRECONDITION to the next, so slices and
// add-on changes of one apply queue here instead of failing.
type clusterLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// lock blocks until the cluster's lock is free or ctx ends, and returns the unlock function,
// which may be called more than once.
func (l *clusterLocks) lock(ctx context.Context, cluster string) (func(), error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]chan struct{}{}
	}
	ch, ok := l.locks[cluster]
	if !ok {
		ch = make(chan struct{}, 1)
		l.locks[cluster] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-ch }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
