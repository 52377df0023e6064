package emulator

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// compact is the placement of a multi-host v4/v5e/v5p/v6e slice.
func compact(topology string) *containerpb.NodePool_PlacementPolicy {
	return &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: topology}
}

func tpuPool(name, machineType string, nodes int32, placement *containerpb.NodePool_PlacementPolicy) *containerpb.NodePool {
	return &containerpb.NodePool{
		Name: name, InitialNodeCount: nodes, PlacementPolicy: placement,
		Config: &containerpb.NodeConfig{MachineType: machineType},
	}
}

func TestValidTPUPoolsOfEveryGeneration(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	// The workload policy of tpu7x-multi, as GKE needs it.
	if err := testEmu.CreateResourcePolicy(ctx, ResourcePolicy{Project: testProject, Region: rules.ZoneRegion(testZone),
		Name: "ironwood-2x2x2", AcceleratorTopology: "2x2x2"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testEmu.mu.Lock()
		delete(testEmu.st.policies, "projects/"+testProject+"/regions/"+rules.ZoneRegion(testZone)+"/resourcePolicies/ironwood-2x2x2")
		testEmu.mu.Unlock()
	})
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		pool         *containerpb.NodePool
		accelerator  string
		topology     string
		hosts, chips int
	}{
		{tpuPool("v4-single", "ct4p-hightpu-4t", 1, nil), "tpu-v4-podslice", "2x2x1", 1, 4},
		{tpuPool("v4-multi", "ct4p-hightpu-4t", 2, compact("2x2x2")), "tpu-v4-podslice", "2x2x2", 2, 4},
		{tpuPool("v5e-single", "ct5lp-hightpu-1t", 1, nil), "tpu-v5-lite-podslice", "1x1", 1, 1},
		{tpuPool("v5e-multi", "ct5lp-hightpu-4t", 4, compact("4x4")), "tpu-v5-lite-podslice", "4x4", 4, 4},
		{tpuPool("v5p-single", "ct5p-hightpu-4t", 1, nil), "tpu-v5p-slice", "2x2x1", 1, 4},
		{tpuPool("v5p-multi", "ct5p-hightpu-4t", 4, compact("2x2x4")), "tpu-v5p-slice", "2x2x4", 4, 4},
		{tpuPool("v6e-single", "ct6e-standard-8t", 1, nil), "tpu-v6e-slice", "2x4", 1, 8},
		{tpuPool("v6e-multi", "ct6e-standard-4t", 4, compact("4x4")), "tpu-v6e-slice", "4x4", 4, 4},
		{tpuPool("tpu7x-single", "tpu7x-standard-4t", 1, nil), "tpu7x", "2x2x1", 1, 4},
		{tpuPool("tpu7x-multi", "tpu7x-standard-4t", 2,
			&containerpb.NodePool_PlacementPolicy{PolicyName: "ironwood-2x2x2", TpuTopology: "2x2x2"}), "tpu7x", "2x2x2", 2, 4},
	}
	for _, tc := range tests {
		t.Run(tc.pool.Name, func(t *testing.T) {
			op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tc.pool})
			if err != nil {
				t.Fatal(err)
			}
			if op.OperationType != containerpb.Operation_CREATE_NODE_POOL || !strings.HasSuffix(op.TargetLink, cluster+"/nodePools/"+tc.pool.Name) {
				t.Fatalf("operation type %s target %s", op.OperationType, op.TargetLink)
			}
			done, seen := waitOp(t, c, op)
			if done.Error != nil {
				t.Fatalf("create failed: %v", done.Error)
			}
			if seen[0] != containerpb.Operation_PENDING || seen[len(seen)-1] != containerpb.Operation_DONE {
				t.Fatalf("operation statuses %v", seen)
			}
			poolName := cluster + "/nodePools/" + tc.pool.Name
			np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: poolName})
			if err != nil {
				t.Fatal(err)
			}
			if np.Status != containerpb.NodePool_RUNNING || np.Version != cl.CurrentMasterVersion {
				t.Fatalf("pool status %s version %s", np.Status, np.Version)
			}
			if tc.pool.Name == "tpu7x-multi" {
				pp := np.PlacementPolicy
				if pp.Type != containerpb.NodePool_PlacementPolicy_TYPE_UNSPECIFIED || pp.PolicyName != "ironwood-2x2x2" || pp.TpuTopology != "2x2x2" {
					t.Fatalf("tpu7x placement policy reported as %v", pp)
				}
			}

			nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=" + tc.pool.Name})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes.Items) != tc.hosts {
				t.Fatalf("want %d nodes, got %d", tc.hosts, len(nodes.Items))
			}
			var workers []int
			for _, n := range nodes.Items {
				checkTPUNode(t, n, tc.pool.Config.MachineType, tc.accelerator, tc.topology, tc.chips)
				w, ok := WorkerIndex(n.Name)
				if !ok {
					t.Fatalf("node name %q has no worker index", n.Name)
				}
				workers = append(workers, w)
			}
			sort.Ints(workers)
			for i, w := range workers {
				if w != i {
					t.Fatalf("worker indexes %v", workers)
				}
			}

			mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: poolName}))
			nodes, err = kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=" + tc.pool.Name})
			if err != nil || len(nodes.Items) != 0 {
				t.Fatalf("nodes after delete: %v %v", nodes, err)
			}
			if _, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: poolName}); status.Code(err) != codes.NotFound {
				t.Fatalf("deleted pool: want NotFound, got %v", err)
			}
		})
	}
}

func checkTPUNode(t *testing.T, n corev1.Node, machineType, accelerator, topology string, chips int) {
	t.Helper()
	for k, want := range map[string]string{
		tpu.LabelAccelerator: accelerator, tpu.LabelTopology: topology, tpu.LabelInstanceType: machineType, tpu.LabelZone: testZone,
	} {
		if n.Labels[k] != want {
			t.Errorf("node %s label %s = %q, want %q", n.Name, k, n.Labels[k], want)
		}
	}
	for _, rl := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		q := rl[corev1.ResourceName(tpu.ResourceName)]
		if q.String() != strconv.Itoa(chips) {
			t.Errorf("node %s google.com/tpu = %s, want %d", n.Name, q.String(), chips)
		}
	}
	found := false
	for _, tt := range n.Spec.Taints {
		if tt.Key == tpu.ResourceName && tt.Value == tpu.TaintValue && string(tt.Effect) == tpu.TaintEffect {
			found = true
		}
	}
	if !found || len(n.Spec.Taints) != 1 {
		t.Errorf("node %s taints %v", n.Name, n.Spec.Taints)
	}
	if !nodeReady(n) {
		t.Errorf("node %s not Ready: %v", n.Name, n.Status.Conditions)
	}
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestInvalidNodePools(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	withVersion := func(p *containerpb.NodePool, v string) *containerpb.NodePool { p.Version = v; return p }
	tests := []struct {
		name   string
		pool   *containerpb.NodePool
		status string
		msg    string
	}{
		{"single-host with topology", tpuPool("bad", "ct6e-standard-4t", 1, compact("2x2")), "INVALID_ARGUMENT",
			"TPU topology can't be specified with single-host TPU slice pool"},
		{"v4 topology does not fit", tpuPool("bad", "ct4p-hightpu-4t", 2, compact("3x3x3")), "INVALID_ARGUMENT", "3x3x3"},
		{"v5e wrong node count", tpuPool("bad", "ct5lp-hightpu-4t", 3, compact("4x4")), "INVALID_ARGUMENT", "needs 4 nodes, got 3"},
		{"v5p wrong node count", tpuPool("bad", "ct5p-hightpu-4t", 1, compact("2x2x2")), "INVALID_ARGUMENT", "needs 2 nodes, got 1"},
		{"v6e below its minimum version", withVersion(tpuPool("bad", "ct6e-standard-4t", 1, nil), "1.30.14-gke.1145000"),
			"INVALID_ARGUMENT", "requires GKE version " + mustGen(t, "v6e").MinGKEVersion.String()},
		{"tpu7x multi-host COMPACT", tpuPool("bad", "tpu7x-standard-4t", 2, compact("2x2x2")), "INVALID_ARGUMENT",
			"Use workload policy instead"},
		{"tpu7x multi-host without policy", tpuPool("bad", "tpu7x-standard-4t", 2,
			&containerpb.NodePool_PlacementPolicy{TpuTopology: "2x2x2"}), "INVALID_ARGUMENT", "workload policy"},
		{"unknown machine type", tpuPool("bad", "ct9-hightpu-4t", 1, nil), "INVALID_ARGUMENT", "does not exist"},
		{"topology on a CPU pool", tpuPool("bad", "n2-standard-8", 1, compact("2x2")), "INVALID_ARGUMENT", "TPU topology"},
		{"bad name", tpuPool("Bad_Name", "e2-standard-4", 1, nil), "INVALID_ARGUMENT", "Must be a match of regex"},
		{"name too long", tpuPool(strings.Repeat("a", 41), "e2-standard-4", 1, nil), "INVALID_ARGUMENT", "no longer than 40"},
		{"unsupported version", withVersion(tpuPool("bad", "e2-standard-4", 1, nil), "1.20.0-gke.1"), "INVALID_ARGUMENT", "unsupported"},
		{"newer than master", withVersion(tpuPool("bad", "e2-standard-4", 1, nil), "1.35.0-gke.1795000"), "INVALID_ARGUMENT", "must not have a greater minor version than master version"},
		{"duplicate name", tpuPool("system", "e2-standard-4", 1, nil), "ALREADY_EXISTS", "Already exists"},
	}
	httpCode := map[string]int{"INVALID_ARGUMENT": 400, "ALREADY_EXISTS": 409}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tc.pool})
			wantGoogleError(t, err, httpCode[tc.status], tc.status, tc.msg)
			// The gapic client's status code follows the HTTP code, as with GKE.
			if want := map[int]codes.Code{400: codes.InvalidArgument, 409: codes.Aborted}[httpCode[tc.status]]; status.Code(err) != want {
				t.Fatalf("status code %s, want %s", status.Code(err), want)
			}
		})
	}
	_, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{
		Parent: testLocation + "/clusters/nope", NodePool: tpuPool("p", "e2-standard-4", 1, nil),
	})
	wantGoogleError(t, err, 404, "NOT_FOUND", "clusters/nope")
	if status.Code(err) != codes.NotFound {
		t.Fatalf("pool in a missing cluster: want NotFound, got %v", err)
	}
}

func mustGen(t *testing.T, name string) *tpu.Generation {
	g, err := tpu.LookupGeneration(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
