package gke

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

func TestParseInstanceGroupURL(t *testing.T) {
	project, zone, name, err := parseInstanceGroupURL("https://www.googleapis.com/compute/v1/projects/p/zones/us-central2-b/instanceGroupManagers/gke-c-system-1a2b3c4d-grp")
	if err != nil || project != "p" || zone != "us-central2-b" || name != "gke-c-system-1a2b3c4d-grp" {
		t.Errorf("got %q %q %q %v", project, zone, name, err)
	}
	if _, _, _, err := parseInstanceGroupURL("https://www.googleapis.com/compute/v1/projects/p/regions/r/x"); err == nil {
		t.Error("a URL of no instance group parsed")
	}
}

// TestNodePoolSizeFollowsAResize resizes a CPU pool: its size comes from its instance groups, not
// from the initialNodeCount it was created with.
func TestNodePoolSizeFollowsAResize(t *testing.T) {
	ctx := testCtx(t)
	c := testClient(t)
	id := NodePoolID{Cluster: testCluster, Name: "resized"}
	wait := func(op *containerpb.Operation, err error) {
		t.Helper()
		if err == nil {
			err = c.WaitForOperation(ctx, testCluster, op)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	wait(c.CreateNodePool(ctx, id, &containerpb.NodePool{Name: id.Name, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}))
	t.Cleanup(func() { _, _ = c.DeleteNodePool(ctx, id) })
	wait(c.SetNodePoolSize(ctx, id, 3))
	pool, err := c.GetNodePool(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.NodePoolSize(ctx, pool); err != nil || n != 3 {
		t.Errorf("NodePoolSize after a resize to 3 = %d, %v", n, err)
	}
}
