package provider

import (
	"context"
	"errors"
	"sync"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// readTTL is how long a read of a cluster or of a location's versions serves the resources of one
// run. Slices read their cluster to plan (version) and to create (version, endpoint, CA); within a
// minute these do not change but by an apply of the cluster itself, which Terraform finishes before
// its slices start.
const readTTL = time.Minute

// sharedReads shares reads of one kind of GKE object among the resources of one Terraform run
// (one provider instance): the slices planned or created together, often with count, read their
// cluster once instead of once each, twice an apply. Concurrent callers wait for the read in
// flight; a failed read is not kept, so the next caller tries again.
type sharedReads[T proto.Message] struct {
	mu    sync.Mutex
	reads map[string]*sharedRead[T]
}

type sharedRead[T proto.Message] struct {
	done  chan struct{} // closed once value and err are set
	at    time.Time
	value T
	err   error
}

// get returns the object under key as read at most readTTL ago, reading it with read if need be.
// The caller gets its own copy.
func (r *sharedReads[T]) get(ctx context.Context, key string, read func(context.Context) (T, error)) (T, error) {
	var zero T
	for {
		shared, reader := r.claim(key)
		if reader {
			value, err := read(ctx)
			r.settle(key, shared, value, err)
		} else {
			select {
			case <-shared.done:
			case <-ctx.Done():
				return zero, ctx.Err()
			}
		}
		if shared.err == nil {
			value, _ := proto.Clone(shared.value).(T)
			return value, nil
		}
		// Another caller's read cut short by its own context says nothing about this one's: read
		// again (the failed read is already forgotten, so this is a new read, never a spin).
		if !reader && ctx.Err() == nil && (errors.Is(shared.err, context.Canceled) || errors.Is(shared.err, context.DeadlineExceeded)) {
			continue
		}
		return zero, shared.err
	}
}

// claim returns the read to use for key, and whether the caller is to make it.
func (r *sharedReads[T]) claim(key string) (*sharedRead[T], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if shared, ok := r.reads[key]; ok {
		select {
		case <-shared.done:
			if time.Since(shared.at) < readTTL {
				return shared, false
			}
		default:
			return shared, false // in flight
		}
	}
	if r.reads == nil {
		r.reads = map[string]*sharedRead[T]{}
	}
	shared := &sharedRead[T]{done: make(chan struct{})}
	r.reads[key] = shared
	return shared, true
}

// settle records the outcome of a read and wakes its waiters. A failed read is forgotten before
// anyone can see it, so no later caller is handed it.
func (r *sharedReads[T]) settle(key string, shared *sharedRead[T], value T, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	shared.value, shared.err, shared.at = value, err, time.Now()
	if err != nil && r.reads[key] == shared {
		delete(r.reads, key)
	}
	close(shared.done)
}

// cluster reads a cluster, shared with the rest of the run.
func (d *providerData) cluster(ctx context.Context, client *gke.Client, id gke.ClusterID) (*containerpb.Cluster, error) {
	return d.clusters.get(ctx, id.String(), func(ctx context.Context) (*containerpb.Cluster, error) {
		return client.GetCluster(ctx, id)
	})
}

// serverConfig reads the versions GKE offers in a location, shared with the rest of the run.
func (d *providerData) serverConfig(ctx context.Context, client *gke.Client, project, location string) (*containerpb.ServerConfig, error) {
	return d.serverConfigs.get(ctx, project+"/"+location, func(ctx context.Context) (*containerpb.ServerConfig, error) {
		return client.GetServerConfig(ctx, project, location)
	})
}
