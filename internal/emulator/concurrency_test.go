package emulator

import (
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
)

func cpuPool(name string) *containerpb.NodePool {
	return &containerpb.NodePool{Name: name, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}
}

// TestConcurrentOperations drives GKE's concurrency rules through the REST client on a cluster
// of its own: node pool operations of different pools side by side up to the cap, one per pool,
// the 429 past the cap, and cluster-level operations alone.
func TestConcurrentOperations(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })
	cluster := testLocation + "/clusters/concurrency"
	op, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "concurrency", NodePools: []*containerpb.NodePool{cpuPool("system")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, c)(op, nil)
	t.Cleanup(func() {
		if op, err := c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: cluster}); err == nil {
			waitOp(t, c, op)
		}
	})
	if err := testEmu.SetLatencies(ctx, map[string]time.Duration{"CREATE_NODE_POOL": 2 * time.Second, "UPDATE_CLUSTER": time.Second}); err != nil {
		t.Fatal(err)
	}

	// Five pools of one cluster are created side by side.
	var creates []*containerpb.Operation
	for i := range DefaultMaxNodePoolOperations {
		op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: cpuPool(fmt.Sprintf("pool-%d", i))})
		if err != nil {
			t.Fatalf("node pool operation %d of %d refused: %v", i+1, DefaultMaxNodePoolOperations, err)
		}
		creates = append(creates, op)
	}
	// One operation at a time per pool: deleting a pool while it is created waits.
	_, err = c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/pool-0"})
	ge := wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation "+creates[0].Name+".")
	if ge.Reason != "CLUSTER_ALREADY_HAS_OPERATION" {
		t.Errorf("reason %q, want CLUSTER_ALREADY_HAS_OPERATION", ge.Reason)
	}
	// The sixth is over GKE's concurrent operations quota.
	_, err = c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: cpuPool("pool-5")})
	wantGoogleError(t, err, 429, "RESOURCE_EXHAUSTED",
		`Too many operations: cluster "concurrency" hits the concurrent operations quota 5, please try again later.`)
	// A cluster-level operation waits for the pools' (labels, add-ons, versions alike).
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: cluster, ResourceLabels: map[string]string{"a": "b"}, LabelFingerprint: cl.LabelFingerprint})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation")
	_, err = c.SetAddonsConfig(ctx, &containerpb.SetAddonsConfigRequest{Name: cluster, AddonsConfig: &containerpb.AddonsConfig{}})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation")
	// Both clients list the running operations.
	ops, err := c.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: testLocation})
	if err != nil {
		t.Fatal(err)
	}
	running := map[string]bool{}
	for _, o := range ops.Operations {
		running[o.Name] = o.Status != containerpb.Operation_DONE
	}
	dops, err := discoveryClient(t).Projects.Locations.Operations.List(testLocation).Do()
	if err != nil || len(dops.Operations) != len(ops.Operations) {
		t.Fatalf("discovery client lists %d operations (%v), REST client %d", len(dops.Operations), err, len(ops.Operations))
	}
	var spans []opSpan
	for _, op := range creates {
		if !running[op.Name] {
			t.Errorf("operation %s is not listed as running", op.Name)
		}
		done, _ := waitOp(t, c, op)
		if done.Error != nil {
			t.Fatalf("%s: %v", op.Name, done.Error)
		}
		spans = append(spans, spanOf(t, done))
	}
	if got := mostAtOnce(spans); got != DefaultMaxNodePoolOperations {
		t.Errorf("%d node pool creations ran at once, want %d", got, DefaultMaxNodePoolOperations)
	}

	// A cluster-level operation runs alone: no pool operation, no other cluster operation.
	update, err := c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredReleaseChannel: &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_RAPID},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: cpuPool("pool-5")})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation "+update.Name+".")
	_, err = c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/pool-1"})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation "+update.Name+".")
	_, err = c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredReleaseChannel: &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_STABLE},
	}})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation "+update.Name+".")
	mustSucceed(t, c)(update, nil)
	// Once it is done, pools change again.
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/pool-1"}))
}

// TestAdmitLocked covers each rule of the model, and the cap's option, without a cluster.
func TestAdmitLocked(t *testing.T) {
	running := func(pools ...string) *cluster {
		c := &cluster{PB: &containerpb.Cluster{Name: "c"}, running: map[string]*operation{}}
		for i, p := range pools {
			name := fmt.Sprintf("operation-%d", i)
			c.running[name] = &operation{Pool: p, PB: &containerpb.Operation{Name: name}}
		}
		return c
	}
	tests := []struct {
		name    string
		max     int
		running []string // pools of the running operations; "" is a cluster-level one
		pool    string   // the new operation's pool; "" for cluster-level
		want    codes.Code
	}{
		{"cluster op on an idle cluster", 0, nil, "", codes.OK},
		{"cluster op while a pool op runs", 0, []string{"a"}, "", codes.FailedPrecondition},
		{"cluster op while a cluster op runs", 0, []string{""}, "", codes.FailedPrecondition},
		{"pool op while a cluster op runs", 0, []string{""}, "a", codes.FailedPrecondition},
		{"pool op while its own pool's runs", 0, []string{"a"}, "a", codes.FailedPrecondition},
		{"pool op beside 4 others", 0, []string{"a", "b", "c", "d"}, "e", codes.OK},
		{"pool op beside 5 others", 0, []string{"a", "b", "c", "d", "e"}, "f", codes.ResourceExhausted},
		{"pool op beside 1 with a cap of 2", 2, []string{"a"}, "b", codes.OK},
		{"pool op beside 2 with a cap of 2", 2, []string{"a", "b"}, "c", codes.ResourceExhausted},
		{"pool op beside 9 without a cap", -1, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "j", codes.OK},
		{"no cap lifts the per-pool rule", -1, []string{"a"}, "a", codes.FailedPrecondition},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &Emulator{opts: Options{MaxNodePoolOperations: tc.max}}
			err := e.admitLocked(running(tc.running...), tc.pool)
			got := codes.OK
			if err != nil {
				got = err.Code
			}
			if got != tc.want {
				t.Fatalf("admitLocked = %v, want %s", err, tc.want)
			}
			if got == codes.FailedPrecondition && (err.HTTPStatus != 400 || err.Reason != "CLUSTER_ALREADY_HAS_OPERATION") {
				t.Errorf("refusal %+v, want 400 with reason CLUSTER_ALREADY_HAS_OPERATION", err)
			}
			if got == codes.ResourceExhausted && err.HTTPStatus != 429 {
				t.Errorf("cap refusal %+v, want HTTP 429", err)
			}
		})
	}
}

type opSpan struct{ start, end time.Time }

func spanOf(t *testing.T, op *containerpb.Operation) opSpan {
	t.Helper()
	start, err1 := time.Parse(time.RFC3339Nano, op.StartTime)
	end, err2 := time.Parse(time.RFC3339Nano, op.EndTime)
	if err1 != nil || err2 != nil {
		t.Fatalf("operation %s times %q, %q", op.Name, op.StartTime, op.EndTime)
	}
	return opSpan{start, end}
}

// mostAtOnce is the largest number of spans that cover one moment.
func mostAtOnce(spans []opSpan) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o.start.After(s.start) && o.end.After(s.start) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
