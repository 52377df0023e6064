package gke

import (
	"context"
	"errors"
	"sync"
	"time"
)

// SharedReadTTL is how long one read of a cluster, of the versions on offer in a location, or one
// list of a cluster's node pools (or of a zone's instance groups) serves the reads of one provider
// process. terraform-provider-google keeps its node pool and instance group lists as long
// (resource_container_node_pool.go: a 30-second cache), which a refresh or plan of a few hundred
// pools fits in; a read older than that, or one that raytpu's own writes may have changed (see
// sharedLists.invalidate), is made again.
const SharedReadTTL = 30 * time.Second

// ReadOption says how a read may be served.
type ReadOption int

const (
	// Fresh reads the object itself from GKE, never from a list another read made: for a read
	// that follows an operation, or that a write is computed from (read, modify, write).
	Fresh ReadOption = iota + 1
)

func fresh(opts []ReadOption) bool {
	for _, o := range opts {
		if o == Fresh {
			return true
		}
	}
	return false
}

// sharedLists shares lists of GKE objects among the readers of one provider process: the slices
// refreshed in one plan read their cluster's node pools once, as one list, instead of once each.
// Each list is under a key and in a scope (the cluster it belongs to); invalidate forgets every
// list of a scope, those in flight included, so that a read that starts after a write never sees
// a list made before it. Concurrent readers of a key wait for the list in flight; a failed list is
// not kept.
type sharedLists[V any] struct {
	now func() time.Time
	ttl time.Duration

	mu    sync.Mutex
	lists map[string]*sharedList[V]
	// gens counts the invalidations of each scope: a list is kept only if none came while it was
	// read.
	gens map[string]uint64
}

type sharedList[V any] struct {
	scope string
	gen   uint64
	done  chan struct{} // closed once value and err are set
	at    time.Time     // when the read was sent: its age is counted from there
	value V
	err   error
}

func newSharedLists[V any](now func() time.Time, ttl time.Duration) *sharedLists[V] {
	return &sharedLists[V]{now: now, ttl: ttl, lists: map[string]*sharedList[V]{}, gens: map[string]uint64{}}
}

// get returns the list under key (in scope), made at most ttl ago and since the scope's last
// invalidation, reading it with read if need be. The value is shared: callers must not change it.
func (s *sharedLists[V]) get(ctx context.Context, key, scope string, read func(context.Context) (V, error)) (V, error) {
	var zero V
	for {
		list, reader := s.claim(key, scope)
		if reader {
			value, err := read(ctx)
			s.settle(key, list, value, err)
		} else {
			select {
			case <-list.done:
			case <-ctx.Done():
				return zero, ctx.Err()
			}
		}
		if list.err == nil {
			return list.value, nil
		}
		// Another reader's list cut short by its own context says nothing about this one's: read
		// again (the failed list is already forgotten, so this is a new read, never a spin).
		if !reader && ctx.Err() == nil && (errors.Is(list.err, context.Canceled) || errors.Is(list.err, context.DeadlineExceeded)) {
			continue
		}
		return zero, list.err
	}
}

// claim returns the list to use for key, and whether the caller is to read it.
func (s *sharedLists[V]) claim(key, scope string) (*sharedList[V], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if list, ok := s.lists[key]; ok {
		select {
		case <-list.done:
			if s.now().Sub(list.at) < s.ttl {
				return list, false
			}
		default:
			return list, false // in flight
		}
	}
	list := &sharedList[V]{scope: scope, gen: s.gens[scope], done: make(chan struct{}), at: s.now()}
	s.lists[key] = list
	return list, true
}

// settle records the outcome of a read and wakes its waiters, who asked before any invalidation
// that came meanwhile. A failed read, or one an invalidation overtook, is forgotten before a later
// reader can be handed it.
func (s *sharedLists[V]) settle(key string, list *sharedList[V], value V, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list.value, list.err = value, err
	if (err != nil || s.gens[list.scope] != list.gen) && s.lists[key] == list {
		delete(s.lists, key)
	}
	close(list.done)
}

// generation is the scope's count of invalidations, for a later put.
func (s *sharedLists[V]) generation(scope string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gens[scope]
}

// put keeps value, read from GKE at sent as part of another call, as the list under key, unless
// the scope was invalidated since gen (taken before the call was sent) or a list is being read.
func (s *sharedLists[V]) put(key, scope string, gen uint64, sent time.Time, value V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gens[scope] != gen {
		return
	}
	if list, ok := s.lists[key]; ok {
		select {
		case <-list.done:
			if !list.at.Before(sent) {
				return
			}
		default:
			return
		}
	}
	list := &sharedList[V]{scope: scope, gen: gen, done: make(chan struct{}), at: sent, value: value}
	close(list.done)
	s.lists[key] = list
}

// invalidate forgets every list of scope, read or in flight: what a write may have changed is
// read again by whoever reads next.
func (s *sharedLists[V]) invalidate(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gens[scope]++
	for key, list := range s.lists {
		if list.scope == scope {
			delete(s.lists, key)
		}
	}
}
