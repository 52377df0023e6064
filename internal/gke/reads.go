package gke

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// Reads of clusters, of node pools and of their sizes are shared within the provider process:
// one read of a cluster serves every read of it for SharedReadTTL, and one list of a cluster's
// node pools every read of a pool of that cluster, so that a refresh or plan of a hundred slices,
// and the Ray resources that check them, costs one request per cluster rather than one per slice.
// Every write raytpu sends to a cluster's pools (a create, update, resize or delete), every
// operation on them seen DONE and every node pool creation seen through forgets the cluster's
// pool lists, before and after the call; a write to the cluster itself, or its operation seen
// DONE, forgets its read too: a read that follows raytpu's own write reads again, and sees it. A
// read that must be the object itself, such as one a write is computed from, passes Fresh.
//
// A write to a pool keeps the cluster's read: slice creations read their cluster for its version
// and endpoint, which no pool write changes, and a hundred of them would otherwise read it once
// each. The pools a shared cluster read holds may therefore predate raytpu's own pool writes: a
// caller that needs them current reads them with GetNodePool or ListNodePools, or the cluster
// with Fresh.

func (c *Client) setClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	c.now = now
	c.clusters = newSharedLists[*containerpb.Cluster](now, SharedReadTTL)
	c.serverConfigs = newSharedLists[*containerpb.ServerConfig](now, SharedReadTTL)
	c.pools = newSharedLists[[]*containerpb.NodePool](now, SharedReadTTL)
	c.groups = newSharedLists[map[string]*compute.InstanceGroupManager](now, SharedReadTTL)
}

// wroteCluster forgets what the shared reads hold of cluster, at once and again when the returned
// function runs (deferred to the end of the write): a read made while the write was in flight may
// hold the state before it.
func (c *Client) wroteCluster(cluster ClusterID) func() {
	c.forgetCluster(cluster)
	return func() { c.forgetCluster(cluster) }
}

// wrotePools is wroteCluster for a write to one of cluster's node pools: the cluster's read is kept
// (see above).
func (c *Client) wrotePools(cluster ClusterID) func() {
	c.forgetPools(cluster)
	return func() { c.forgetPools(cluster) }
}

// forgetCluster drops the shared reads of cluster: its own and its pools'.
func (c *Client) forgetCluster(cluster ClusterID) {
	c.clusters.invalidate(cluster.String())
	c.forgetPools(cluster)
}

// forgetPools drops the shared lists of cluster's node pools and of their sizes.
func (c *Client) forgetPools(cluster ClusterID) {
	c.pools.invalidate(cluster.String())
	// A zone's instance groups are listed for a project, whichever cluster their pools are of.
	c.groups.invalidate(cluster.Project)
}

// GetNodePool reads a node pool: from the list of its cluster's node pools that other reads of
// this provider share (see SharedReadTTL), or with Fresh from the pool itself. A pool the list
// does not hold (created since by another client, or gone) is read itself, so that only GKE
// answers that a pool does not exist.
func (c *Client) GetNodePool(ctx context.Context, id NodePoolID, opts ...ReadOption) (*containerpb.NodePool, error) {
	if !fresh(opts) {
		pools, err := c.sharedNodePools(ctx, id.Cluster)
		if err != nil && code(err) != codes.PermissionDenied {
			return nil, err
		}
		// Refused the list (a role with container.nodePools.get alone), a pool is read itself.
		for _, p := range pools {
			if p.GetName() == id.Name {
				return clonePool(p), nil
			}
		}
	}
	return c.getNodePool(ctx, id)
}

// ListNodePools reads the node pools of a cluster, from the list other reads of this provider
// share (see SharedReadTTL), or with Fresh from GKE.
func (c *Client) ListNodePools(ctx context.Context, id ClusterID, opts ...ReadOption) ([]*containerpb.NodePool, error) {
	var pools []*containerpb.NodePool
	var err error
	if fresh(opts) {
		pools, err = c.listNodePools(ctx, id)
	} else {
		pools, err = c.sharedNodePools(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*containerpb.NodePool, len(pools))
	for i, p := range pools {
		out[i] = clonePool(p)
	}
	return out, nil
}

// sharedNodePools is the shared list of a cluster's node pools; its pools must not be changed.
func (c *Client) sharedNodePools(ctx context.Context, id ClusterID) ([]*containerpb.NodePool, error) {
	return c.pools.get(ctx, id.String(), id.String(), func(ctx context.Context) ([]*containerpb.NodePool, error) {
		return c.listNodePools(ctx, id)
	})
}

func (c *Client) listNodePools(ctx context.Context, id ClusterID) ([]*containerpb.NodePool, error) {
	resp, err := call(ctx, c, "ListNodePools", func(ctx context.Context) (*containerpb.ListNodePoolsResponse, error) {
		return c.api.ListNodePools(ctx, &containerpb.ListNodePoolsRequest{Parent: id.String()}, noRetry)
	})
	if err != nil {
		return nil, err
	}
	return resp.GetNodePools(), nil
}

// GetCluster reads a cluster: from the read of it that other reads of this provider share (see
// SharedReadTTL), or with Fresh from GKE. Its answer holds the cluster's node pools, which then
// serve reads of them as a list of its own would. The caller gets its own copy.
func (c *Client) GetCluster(ctx context.Context, id ClusterID, opts ...ReadOption) (*containerpb.Cluster, error) {
	if fresh(opts) {
		return c.getCluster(ctx, id)
	}
	cluster, err := c.clusters.get(ctx, id.String(), id.String(), func(ctx context.Context) (*containerpb.Cluster, error) {
		return c.getCluster(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return cloneMessage(cluster), nil
}

// getCluster reads a cluster itself, and keeps the answer for the shared reads unless a write
// came since it was sent.
func (c *Client) getCluster(ctx context.Context, id ClusterID) (*containerpb.Cluster, error) {
	clusterGen, poolsGen, sent := c.clusters.generation(id.String()), c.pools.generation(id.String()), c.now()
	cluster, err := call(ctx, c, "GetCluster", func(ctx context.Context) (*containerpb.Cluster, error) {
		return c.api.GetCluster(ctx, &containerpb.GetClusterRequest{Name: id.String()}, noRetry)
	})
	if err != nil {
		return nil, err
	}
	// A shared read in flight (this very one, when not Fresh) is not replaced by put.
	c.clusters.put(id.String(), id.String(), clusterGen, sent, cloneMessage(cluster))
	c.keepNodePools(id, poolsGen, sent, cluster)
	return cluster, nil
}

// GetServerConfig reads the versions on offer in a location: from the read that other reads of
// this provider share (see SharedReadTTL), or with Fresh from GKE. No write of raytpu changes
// them. The caller gets its own copy.
func (c *Client) GetServerConfig(ctx context.Context, project, location string, opts ...ReadOption) (*containerpb.ServerConfig, error) {
	read := func(ctx context.Context) (*containerpb.ServerConfig, error) {
		return call(ctx, c, "GetServerConfig", func(ctx context.Context) (*containerpb.ServerConfig, error) {
			return c.api.GetServerConfig(ctx, &containerpb.GetServerConfigRequest{
				Name: fmt.Sprintf("projects/%s/locations/%s", project, location),
			}, noRetry)
		})
	}
	if fresh(opts) {
		return read(ctx)
	}
	key := project + "/" + location
	config, err := c.serverConfigs.get(ctx, key, key, read)
	if err != nil {
		return nil, err
	}
	return cloneMessage(config), nil
}

// keepNodePools keeps the node pools of cluster, read at sent as part of another answer (a
// cluster, a list of clusters), as the shared list of its node pools, unless a write came since
// gen. A cluster not yet running has no list worth keeping.
func (c *Client) keepNodePools(id ClusterID, gen uint64, sent time.Time, cluster *containerpb.Cluster) {
	if cluster.GetStatus() != containerpb.Cluster_RUNNING {
		return
	}
	pools := make([]*containerpb.NodePool, len(cluster.GetNodePools()))
	for i, p := range cluster.GetNodePools() {
		pools[i] = clonePool(p)
	}
	c.pools.put(id.String(), id.String(), gen, sent, pools)
}

// instanceGroup reads a managed instance group of a node pool: from the list of its zone's groups
// that other reads of this provider share (see SharedReadTTL), or, when the list lacks it, the
// group itself. The group must not be changed.
func (c *Client) instanceGroup(ctx context.Context, project, zone, name string) (*compute.InstanceGroupManager, error) {
	groups, err := c.groups.get(ctx, project+"/"+zone, project, func(ctx context.Context) (map[string]*compute.InstanceGroupManager, error) {
		return c.listInstanceGroups(ctx, project, zone)
	})
	if err != nil && code(err) != codes.PermissionDenied {
		return nil, err
	}
	if igm, ok := groups[name]; ok {
		return igm, nil
	}
	return call(ctx, c, "compute.instanceGroupManagers.get", func(ctx context.Context) (*compute.InstanceGroupManager, error) {
		return c.compute.InstanceGroupManagers.Get(project, zone, name).Context(ctx).Do()
	})
}

// listInstanceGroups reads the managed instance groups of a project's zone, by name.
func (c *Client) listInstanceGroups(ctx context.Context, project, zone string) (map[string]*compute.InstanceGroupManager, error) {
	out := map[string]*compute.InstanceGroupManager{}
	token := ""
	for {
		page, err := call(ctx, c, "compute.instanceGroupManagers.list", func(ctx context.Context) (*compute.InstanceGroupManagerList, error) {
			return c.compute.InstanceGroupManagers.List(project, zone).PageToken(token).Context(ctx).Do()
		})
		if err != nil {
			return nil, fmt.Errorf("listing the instance groups of %s: %w", zone, err)
		}
		for _, igm := range page.Items {
			out[igm.Name] = igm
		}
		if token = page.NextPageToken; token == "" {
			return out, nil
		}
	}
}

// clonePool is a copy of p that its reader may change.
func clonePool(p *containerpb.NodePool) *containerpb.NodePool { return cloneMessage(p) }

// cloneMessage is a copy of a shared answer that its reader may change.
func cloneMessage[M proto.Message](m M) M {
	c, _ := proto.Clone(m).(M)
	return c
}
