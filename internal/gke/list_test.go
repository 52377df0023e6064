package gke

import (
	"slices"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

func TestListClustersAndNodePools(t *testing.T) {
	c := testClient(t)
	ctx := testCtx(t)
	for _, location := range []string{testCluster.Location, AllLocations} {
		clusters, missing, err := c.ListClusters(ctx, testCluster.Project, location)
		if err != nil {
			t.Fatalf("ListClusters(%s): %v", location, err)
		}
		if len(missing) != 0 {
			t.Errorf("ListClusters(%s) misses zones %v", location, missing)
		}
		i := slices.IndexFunc(clusters, func(c *containerpb.Cluster) bool { return c.GetName() == testCluster.Name })
		if i < 0 {
			t.Fatalf("ListClusters(%s) = %d clusters, without %s", location, len(clusters), testCluster)
		}
		if pools := clusters[i].GetNodePools(); len(pools) == 0 || pools[0].GetName() != "default" {
			t.Errorf("ListClusters(%s) gives %s the node pools %v, want its pool default", location, testCluster, pools)
		}
	}
	if clusters, _, err := c.ListClusters(ctx, "another-project", AllLocations); err != nil || len(clusters) != 0 {
		t.Errorf("ListClusters of a project without clusters = %v, %v; want none", clusters, err)
	}
	pools, err := c.ListNodePools(ctx, testCluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) == 0 || pools[0].GetName() != "default" {
		t.Errorf("ListNodePools(%s) = %v, want its pool default", testCluster, pools)
	}
	if _, err := c.ListNodePools(ctx, ClusterID{Project: testCluster.Project, Location: testCluster.Location, Name: "absent"}); !IsNotFound(err) {
		t.Errorf("ListNodePools of a cluster that does not exist: %v, want not found", err)
	}
}
