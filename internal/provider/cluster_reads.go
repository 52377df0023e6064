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

// clusterReadTTL is how long a read of a cluster serves the slices of one run. Slices read their
// cluster to plan (version) and to create (version, endpoint, CA); within a minute these do not
// change but by an apply of the cluster itself, which Terraform finishes before its slices start.
const clusterReadTTL = time.Minute

// clusterReads shares reads of a cluster among the slices of one Terraform run (one provider
// instance): the slices planned or created together, often with count, read their cluster once
// instead of once each, twice an apply. Concurrent callers wait for the read in flight; a failed
// read is not kept, so the next caller tries again.
type clusterReads struct {
	mu    sync.Mutex
	reads map[string]*clusterRead
}

type clusterRead struct {
	done    chan struct{} // closed once cluster and err are set
	at      time.Time
	cluster *containerpb.Cluster
	err     error
}

// get returns cluster id as read at most clusterReadTTL ago, reading it if need be. The caller
// gets its own copy.
func (r *clusterReads) get(ctx context.Context, client *gke.Client, id gke.ClusterID) (*containerpb.Cluster, error) {
	read, reader := r.claim(id.String())
	if reader {
		read.cluster, read.err = client.GetCluster(ctx, id)
		read.at = time.Now()
		close(read.done)
		if read.err != nil {
			r.forget(id.String(), read)
		}
	} else {
		select {
		case <-read.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if read.err != nil {
		// Another caller's read cut short by its own context says nothing about this one's.
		if !reader && ctx.Err() == nil && (errors.Is(read.err, context.Canceled) || errors.Is(read.err, context.DeadlineExceeded)) {
			return r.get(ctx, client, id)
		}
		return nil, read.err
	}
	return proto.Clone(read.cluster).(*containerpb.Cluster), nil
}

// claim returns the read to use for key, and whether the caller is to make it.
func (r *clusterReads) claim(key string) (*clusterRead, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if read, ok := r.reads[key]; ok {
		select {
		case <-read.done:
			if time.Since(read.at) < clusterReadTTL {
				return read, false
			}
		default:
			return read, false // in flight
		}
	}
	if r.reads == nil {
		r.reads = map[string]*clusterRead{}
	}
	read := &clusterRead{done: make(chan struct{})}
	r.reads[key] = read
	return read, true
}

// forget drops a failed read, unless a newer one has replaced it.
func (r *clusterReads) forget(key string, read *clusterRead) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads[key] == read {
		delete(r.reads, key)
	}
}
