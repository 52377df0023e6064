package kube

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

func node(name string, ready corev1.ConditionStatus) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	}
	return n
}

func names(hosts []Host) []string {
	var out []string
	for _, h := range hosts {
		out = append(out, h.Name)
	}
	return out
}

// listHosts is SliceHosts(pool) on the test cluster, which must find n hosts.
func listHosts(ctx context.Context, t *testing.T, pool string, n int) []Host {
	t.Helper()
	hosts, err := env.client.SliceHosts(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != n {
		t.Fatalf("SliceHosts(%s) = %v, want %d hosts", pool, names(hosts), n)
	}
	return hosts
}

func TestHostsInWorkerOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []string
		want  []string
	}{
		{
			name:  "emulator names, listed out of order",
			nodes: []string{"gke-c-p-0a1b2c3d-0002", "gke-c-p-0a1b2c3d-0000", "gke-c-p-0a1b2c3d-0003", "gke-c-p-0a1b2c3d-0001"},
			want:  []string{"gke-c-p-0a1b2c3d-0000", "gke-c-p-0a1b2c3d-0001", "gke-c-p-0a1b2c3d-0002", "gke-c-p-0a1b2c3d-0003"},
		},
		{
			name:  "indexes of different widths sort as numbers",
			nodes: []string{"gke-c-p-h-10", "gke-c-p-h-9", "gke-c-p-h-100", "gke-c-p-h-0"},
			want:  []string{"gke-c-p-h-0", "gke-c-p-h-9", "gke-c-p-h-10", "gke-c-p-h-100"},
		},
		{
			name:  "GKE's random suffixes sort by name",
			nodes: []string{"gke-c-p-1a2b3c4d-x9k2", "gke-c-p-1a2b3c4d-0abc", "gke-c-p-1a2b3c4d-7001", "gke-c-p-1a2b3c4d-b3zz"},
			want:  []string{"gke-c-p-1a2b3c4d-0abc", "gke-c-p-1a2b3c4d-7001", "gke-c-p-1a2b3c4d-b3zz", "gke-c-p-1a2b3c4d-x9k2"},
		},
		{
			name:  "one name without an index: all by name",
			nodes: []string{"n-10", "n-9", "other"},
			want:  []string{"n-10", "n-9", "other"},
		},
		{
			name:  "gaps in the numbering",
			nodes: []string{"n-0007", "n-0003"},
			want:  []string{"n-0003", "n-0007"},
		},
		{name: "no nodes", nodes: nil, want: nil},
	} {
		var nodes []corev1.Node
		for _, n := range tc.nodes {
			nodes = append(nodes, node(n, corev1.ConditionTrue))
		}
		hosts := hostsInWorkerOrder(nodes)
		if got := names(hosts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: order %v, want %v", tc.name, got, tc.want)
		}
		for i, h := range hosts {
			if h.WorkerID != i {
				t.Errorf("%s: %s has WorkerID %d, want its position %d", tc.name, h.Name, h.WorkerID, i)
			}
		}
	}
}

func TestNodeReady(t *testing.T) {
	unknown := node("a", corev1.ConditionUnknown)
	unknown.Status.Conditions[0].Reason = "NodeStatusUnknown"
	unknown.Status.Conditions[0].Message = "Kubelet stopped posting node status."
	for _, tc := range []struct {
		node   corev1.Node
		ready  bool
		reason string
	}{
		{node("a", corev1.ConditionTrue), true, ""},
		{node("a", corev1.ConditionFalse), false, "Ready is False"},
		{unknown, false, "NodeStatusUnknown: Kubelet stopped posting node status."},
		{node("a", ""), false, "no Ready condition yet"},
	} {
		ready, reason := nodeReady(&tc.node)
		if ready != tc.ready || reason != tc.reason {
			t.Errorf("nodeReady(%+v) = %v, %q; want %v, %q", tc.node.Status.Conditions, ready, reason, tc.ready, tc.reason)
		}
	}
}

// A v6e 4x4 slice is 4 hosts, listed in worker order with the labels GKE puts on TPU nodes.
func TestSliceHosts(t *testing.T) {
	ctx := testContext(t, time.Minute)
	hosts := listHosts(ctx, t, poolSlice, 4)
	for i, h := range hosts {
		if idx, ok := emulator.WorkerIndex(h.Name); !ok || idx != i || h.WorkerID != i {
			t.Errorf("host %d is %s with WorkerID %d; the emulator says its worker index is %d", i, h.Name, h.WorkerID, idx)
		}
		if !strings.HasPrefix(h.Name, "gke-"+testCluster+"-"+poolSlice+"-") || !h.Ready || h.NotReadyReason != "" {
			t.Errorf("host %d = %+v, want a Ready node of %s", i, h, poolSlice)
		}
		for k, v := range map[string]string{
			tpu.LabelNodePool:    poolSlice,
			tpu.LabelAccelerator: "tpu-v6e-slice",
			tpu.LabelTopology:    "4x4",
			tpu.LabelZone:        testLocation,
		} {
			if h.Labels[k] != v {
				t.Errorf("host %s: label %s = %q, want %q", h.Name, k, h.Labels[k], v)
			}
		}
	}

	// Other pools' nodes are not listed; an unknown pool has none.
	if cpu, err := env.client.SliceHosts(ctx, poolCPU); err != nil || len(cpu) != 1 {
		t.Errorf("SliceHosts(%s) = %v, %v; want its one node", poolCPU, names(cpu), err)
	}
	if none, err := env.client.SliceHosts(ctx, "no-such-pool"); err != nil || len(none) != 0 {
		t.Errorf("SliceHosts(no-such-pool) = %v, %v; want no hosts and no error", names(none), err)
	}
	for _, bad := range []string{"", "a,b", "pool!=x"} {
		if _, err := env.client.SliceHosts(ctx, bad); err == nil {
			t.Errorf("SliceHosts(%q) accepted a name that is not a label value", bad)
		}
	}

	// Every host is there and Ready: the wait returns at once.
	got, err := env.client.WaitForSliceHosts(ctx, poolSlice, 4, testPoll)
	if err != nil || !reflect.DeepEqual(names(got), names(hosts)) {
		t.Errorf("WaitForSliceHosts(%s, 4) = %v, %v; want %v", poolSlice, names(got), err, names(hosts))
	}
	if _, err := env.client.WaitForSliceHosts(ctx, poolSlice, 0, testPoll); err == nil {
		t.Error("WaitForSliceHosts(want 0) succeeded")
	}

	// Waiting for more hosts than there are says how many have not registered.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	got, err = env.client.WaitForSliceHosts(short, poolSlice, 5, testPoll)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || len(got) != 4 {
		t.Fatalf("WaitForSliceHosts(%s, 5) = %v, %v; want the 4 hosts and a timeout", poolSlice, names(got), err)
	}
	want := regexp.MustCompile(`^kube: node pool "slice-a": 4 of 5 hosts Ready after waiting [0-9.]+m?s; 1 of 5 nodes not registered yet: context deadline exceeded$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("WaitForSliceHosts(%s, 5) error:\n%s\nwant it to match %s", poolSlice, err, want)
	}
}

// After the emulator's host failure, that host is NotReady with the kubelet's reason, and a wait
// for the whole slice times out naming it.
func TestSliceHostsAfterHostFailure(t *testing.T) {
	ctx := testContext(t, time.Minute)
	if err := env.emu.FailHost(ctx, emulator.HostFailure{Cluster: testClusterName(), NodePool: poolFailing, Worker: 2}); err != nil {
		t.Fatal(err)
	}
	hosts := listHosts(ctx, t, poolFailing, 4)
	for i, h := range hosts {
		if i == 2 {
			if h.Ready || h.NotReadyReason != "NodeStatusUnknown: Kubelet stopped posting node status." {
				t.Errorf("failed host %s: Ready %v, reason %q; want not Ready for NodeStatusUnknown", h.Name, h.Ready, h.NotReadyReason)
			}
		} else if !h.Ready {
			t.Errorf("host %d (%s) is not Ready: %s", i, h.Name, h.NotReadyReason)
		}
	}

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	got, err := env.client.WaitForSliceHosts(short, poolFailing, 4, testPoll)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForSliceHosts(%s, 4) with a failed host: error = %v, want a timeout", poolFailing, err)
	}
	want := fmt.Sprintf(`^kube: node pool "slice-b": 3 of 4 hosts Ready after waiting [0-9.]+m?s; not ready: %s \(NodeStatusUnknown: Kubelet stopped posting node status\.\): context deadline exceeded$`,
		regexp.QuoteMeta(hosts[2].Name))
	if !regexp.MustCompile(want).MatchString(err.Error()) {
		t.Errorf("WaitForSliceHosts(%s, 4) error:\n%s\nwant it to match %s", poolFailing, err, want)
	}
	if len(got) != 4 || got[2].Ready {
		t.Errorf("WaitForSliceHosts on timeout returned %+v, want the last listing", got)
	}

	// Three Ready hosts are enough for a wait for three.
	if _, err := env.client.WaitForSliceHosts(ctx, poolFailing, 3, testPoll); err != nil {
		t.Errorf("WaitForSliceHosts(%s, 3): %v", poolFailing, err)
	}
}

// A wait started as the node pool is created returns once its hosts have registered and are
// Ready.
func TestWaitForSliceHostsDuringCreate(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	const pool = "slice-new"
	// Slow enough that the wait surely starts before the nodes register (at a fifth of it).
	if err := env.emu.SetLatencies(ctx, map[string]time.Duration{"CREATE_NODE_POOL": 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.emu.SetLatencies(context.Background(), map[string]time.Duration{"CREATE_NODE_POOL": emulator.DefaultLatency}); err != nil {
			t.Error(err)
		}
	}()

	op, err := env.gke.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: testClusterName(), NodePool: v6eSlice(pool)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = waitOperation(ctx, op)
		del, err := env.gke.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: testClusterName() + "/nodePools/" + pool})
		if err == nil {
			err = waitOperation(ctx, del)
		}
		if err != nil {
			t.Errorf("deleting node pool %s: %v", pool, err)
		}
	})
	if before, err := env.client.SliceHosts(ctx, pool); err != nil || len(before) != 0 {
		t.Fatalf("SliceHosts(%s) as it is created = %v, %v; want no hosts yet", pool, names(before), err)
	}
	hosts, err := env.client.WaitForSliceHosts(ctx, pool, 4, testPoll)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 4 {
		t.Fatalf("WaitForSliceHosts(%s, 4) = %v", pool, names(hosts))
	}
	for i, h := range hosts {
		if !h.Ready || h.WorkerID != i || !strings.HasSuffix(h.Name, fmt.Sprintf("-%04d", i)) {
			t.Errorf("host %d = %+v, want Ready worker %d", i, h, i)
		}
	}
}
