package gke

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// SetNodePoolSize starts resizing a node pool to count nodes per zone.
func (c *Client) SetNodePoolSize(ctx context.Context, id NodePoolID, count int) (*containerpb.Operation, error) {
	defer c.wrotePools(id.Cluster)()
	return call(ctx, c, "SetNodePoolSize", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: id.String(), NodeCount: int32(count)}, noRetry)
	})
}

// NodePoolSize is how many nodes per zone a node pool has now, as its managed instance groups say:
// the sum of their target sizes divided by their number, as terraform-provider-google reads a
// pool's node_count (google/services/container/resource_container_node_pool.go, getNodePoolSize).
// GKE's NodePool reports no current size, only the initialNodeCount it was created with. A pool
// without instance groups (none created yet) has its initialNodeCount. The groups are read from
// lists of their zones that other reads share (see SharedReadTTL).
func (c *Client) NodePoolSize(ctx context.Context, pool *containerpb.NodePool) (int, error) {
	urls := pool.GetInstanceGroupUrls()
	if len(urls) == 0 {
		return int(pool.GetInitialNodeCount()), nil
	}
	total := int64(0)
	for _, u := range urls {
		project, zone, name, err := parseInstanceGroupURL(u)
		if err != nil {
			return 0, err
		}
		igm, err := c.instanceGroup(ctx, project, zone, name)
		if err != nil {
			return 0, fmt.Errorf("reading instance group %s of node pool %s: %w", name, pool.GetName(), err)
		}
		total += igm.TargetSize
	}
	return int(total / int64(len(urls))), nil
}

// parseInstanceGroupURL reads .../projects/P/zones/Z/instanceGroupManagers/N (GKE's
// instanceGroupUrls; some name instanceGroups, the same group).
func parseInstanceGroupURL(u string) (project, zone, name string, err error) {
	parts := strings.Split(u, "/")
	for i := 0; i+5 < len(parts); i++ {
		if parts[i] == "projects" && parts[i+2] == "zones" && (parts[i+4] == "instanceGroupManagers" || parts[i+4] == "instanceGroups") {
			return parts[i+1], parts[i+3], parts[i+5], nil
		}
	}
	return "", "", "", fmt.Errorf("instance group URL %q is not .../projects/P/zones/Z/instanceGroupManagers/N", u)
}
