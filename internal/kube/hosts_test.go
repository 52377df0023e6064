package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
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
		lost   bool
	}{
		{node("a", corev1.ConditionTrue), true, "", false},
		// Booting, or reported not ready by its kubelet: not lost.
		{node("a", corev1.ConditionFalse), false, "Ready is False", false},
		{unknown, false, "NodeStatusUnknown: Kubelet stopped posting node status.", true},
		{node("a", ""), false, "no Ready condition yet", false},
	} {
		ready, reason := nodeReady(&tc.node)
		if ready != tc.ready || reason != tc.reason {
			t.Errorf("nodeReady(%+v) = %v, %q; want %v, %q", tc.node.Status.Conditions, ready, reason, tc.ready, tc.reason)
		}
		if lost := nodeLost(&tc.node); lost != tc.lost {
			t.Errorf("nodeLost(%+v) = %v, want %v", tc.node.Status.Conditions, lost, tc.lost)
		}
	}
}

// A v6e 4x4 slice is 4 hosts, listed in worker order with the labels GKE puts on TPU nodes.
func TestSliceHosts(t *testing.T) {
	ctx := testwait.Context(t)
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

	// Waiting for more hosts than there are says how many have not registered. The deadline comes
	// once the wait has listed them.
	short := newExpiringContext(ctx)
	got, err = clientObserving(t, onNodeWatch(short.expire)).WaitForSliceHosts(short, poolSlice, 5, testPoll)
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
	ctx := testwait.Context(t)
	if err := env.emu.FailHost(ctx, emulator.HostFailure{Cluster: testClusterName(), NodePool: poolFailing, Worker: 2}); err != nil {
		t.Fatal(err)
	}
	hosts := listHosts(ctx, t, poolFailing, 4)
	for i, h := range hosts {
		if i == 2 {
			if h.Ready || !h.Lost || h.NotReadyReason != "NodeStatusUnknown: Kubelet stopped posting node status." {
				t.Errorf("failed host %s: Ready %v, reason %q; want not Ready for NodeStatusUnknown", h.Name, h.Ready, h.NotReadyReason)
			}
		} else if !h.Ready || h.Lost {
			t.Errorf("host %d (%s) is not Ready: %s", i, h.Name, h.NotReadyReason)
		}
	}

	// The deadline comes once the wait has listed the hosts.
	short := newExpiringContext(ctx)
	got, err := clientObserving(t, onNodeWatch(short.expire)).WaitForSliceHosts(short, poolFailing, 4, testPoll)
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

// A wait started before the node pool is created returns once its hosts have registered and are
// Ready.
func TestWaitForSliceHostsDuringCreate(t *testing.T) {
	ctx := testwait.Context(t)
	const pool = "slice-new"
	listed, hasListed := signal()
	wait := waitInBackground(ctx, clientObserving(t, onNodeWatch(hasListed)), pool, 4, testPoll)
	untilListed(t, listed, wait)

	op, err := env.gke.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: testClusterName(), NodePool: v6eSlice(pool)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = waitOperation(ctx, op)
		del, err := env.gke.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: testClusterName() + "/nodePools/" + pool})
		if err == nil {
			err = waitOperation(ctx, del)
		}
		if err != nil {
			t.Errorf("deleting node pool %s: %v", pool, err)
		}
	})
	r := <-wait
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.hosts) != 4 {
		t.Fatalf("WaitForSliceHosts(%s, 4) = %v", pool, names(r.hosts))
	}
	for i, h := range r.hosts {
		if !h.Ready || h.WorkerID != i || !strings.HasSuffix(h.Name, fmt.Sprintf("-%04d", i)) {
			t.Errorf("host %d = %+v, want Ready worker %d", i, h, i)
		}
	}
}

// testNodeName is the name of worker i of a pool made by a test, as the emulator would name it.
func testNodeName(pool string, i int) string {
	return fmt.Sprintf("gke-%s-%s-0a1b2c3d-%04d", testCluster, pool, i)
}

// createTestNode registers worker i of pool, Ready or with no Ready condition yet. The test's
// nodes are deleted when it ends.
func createTestNode(ctx context.Context, t *testing.T, pool string, i int, ready bool) error {
	cleanupCtx := testwait.Context(t)
	t.Cleanup(func() {
		if err := env.client.core.Nodes().Delete(cleanupCtx, testNodeName(pool, i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", testNodeName(pool, i), err)
		}
	})
	n, err := env.client.core.Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   testNodeName(pool, i),
		Labels: map[string]string{tpu.LabelNodePool: pool},
	}}, metav1.CreateOptions{})
	if err != nil || !ready {
		return err
	}
	return setTestNodeReady(ctx, n.Name, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
}

// setTestNodeReady sets a node's Ready condition, as its kubelet does.
func setTestNodeReady(ctx context.Context, name string, status corev1.ConditionStatus, reason, message string) error {
	n, err := env.client.core.Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message}}
	_, err = env.client.core.Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

// hostsWait is what a WaitForSliceHosts returned.
type hostsWait struct {
	hosts []Host
	err   error
}

// waitInBackground runs c.WaitForSliceHosts(ctx, pool, want, poll) in a goroutine.
func waitInBackground(ctx context.Context, c *Client, pool string, want int, poll time.Duration) <-chan hostsWait {
	done := make(chan hostsWait, 1)
	go func() {
		hosts, err := c.WaitForSliceHosts(ctx, pool, want, poll)
		done <- hostsWait{hosts, err}
	}()
	return done
}

// untilListed returns once listed is closed; the test fails should the wait end first.
func untilListed(t *testing.T, listed <-chan struct{}, wait <-chan hostsWait) {
	t.Helper()
	select {
	case <-listed:
	case r := <-wait:
		t.Fatalf("the wait ended before it watched the nodes: %v, %v", names(r.hosts), r.err)
	}
}

// The wait watches the nodes: a host that registers, and one that turns Ready, after the wait
// has listed them are seen without listing them again.
func TestWaitForSliceHostsIsEventDriven(t *testing.T) {
	ctx := testwait.Context(t)
	const pool = "watch-ready"
	for i, ready := range []bool{true, true, false} {
		if err := createTestNode(ctx, t, pool, i, ready); err != nil {
			t.Fatal(err)
		}
	}
	const poll = time.Minute // only a second listing, after a minute, could see the changes
	var lists, watches atomic.Int32
	listed, hasListed := signal()
	c := clientObserving(t, func(r *http.Request) {
		if r.URL.Path != "/api/v1/nodes" {
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			watches.Add(1)
			hasListed()
		} else {
			lists.Add(1)
		}
	})
	wait := waitInBackground(ctx, c, pool, 4, poll)
	untilListed(t, listed, wait)
	if err := setTestNodeReady(ctx, testNodeName(pool, 2), corev1.ConditionTrue, "KubeletReady", ""); err != nil {
		t.Fatal(err)
	}
	if err := createTestNode(ctx, t, pool, 3, true); err != nil {
		t.Fatal(err)
	}
	r := <-wait
	if r.err != nil {
		t.Fatalf("WaitForSliceHosts(%s, 4): %v", pool, r.err)
	}
	if l, w := lists.Load(), watches.Load(); l != 1 || w != 1 {
		t.Errorf("WaitForSliceHosts listed the nodes %d times and watched them %d times, want once each: it must see the changes on its watch, not on its next poll (%s)", l, w, poll)
	}
	var want []string
	for i := range 4 {
		want = append(want, testNodeName(pool, i))
	}
	if !reflect.DeepEqual(names(r.hosts), want) {
		t.Fatalf("WaitForSliceHosts(%s, 4) = %v, want %v", pool, names(r.hosts), want)
	}
	for i, h := range r.hosts {
		if !h.Ready || h.WorkerID != i || h.Labels[tpu.LabelNodePool] != pool {
			t.Errorf("host %d = %+v, want Ready worker %d of %s", i, h, i, pool)
		}
	}
}

// Nodes deleted or turning NotReady during the wait are seen so, and a wait that times out says
// so.
func TestWaitForSliceHostsFollowsDeletions(t *testing.T) {
	ctx := testwait.Context(t)
	const pool = "watch-delete"
	// Workers 0 and 1 Ready, 2 not yet: 2 of the 3 hosts waited for.
	for i, ready := range []bool{true, true, false} {
		if err := createTestNode(ctx, t, pool, i, ready); err != nil {
			t.Fatal(err)
		}
	}
	listed, hasListed := signal()
	wait := waitInBackground(ctx, clientObserving(t, onNodeWatch(hasListed)), pool, 3, time.Minute)
	untilListed(t, listed, wait)
	// Now 1 of 3: worker 1 is gone, worker 2's kubelet reports it not ready.
	if err := env.client.core.Nodes().Delete(ctx, testNodeName(pool, 1), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := setTestNodeReady(ctx, testNodeName(pool, 2), corev1.ConditionFalse, "KubeletNotReady", "container runtime is down"); err != nil {
		t.Fatal(err)
	}

	// A wait for 4 that times out, its deadline coming once it has listed them, says so.
	short := newExpiringContext(ctx)
	hosts, err := clientObserving(t, onNodeWatch(short.expire)).WaitForSliceHosts(short, pool, 4, time.Minute)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForSliceHosts(%s, 4) = %v, %v; want a timeout", pool, names(hosts), err)
	}
	want := fmt.Sprintf(`^kube: node pool "watch-delete": 1 of 4 hosts Ready after waiting [0-9.]+m?s; not ready: %s \(KubeletNotReady: container runtime is down\); 2 of 4 nodes not registered yet: context deadline exceeded$`,
		regexp.QuoteMeta(testNodeName(pool, 2)))
	if !regexp.MustCompile(want).MatchString(err.Error()) {
		t.Errorf("WaitForSliceHosts(%s, 4) error:\n%s\nwant it to match %s", pool, err, want)
	}
	if got, want := names(hosts), []string{testNodeName(pool, 0), testNodeName(pool, 2)}; !reflect.DeepEqual(got, want) {
		t.Errorf("WaitForSliceHosts(%s, 4) returned %v, want %v: the hosts last seen", pool, got, want)
	}

	// Workers 3 and 4 come Ready: the first wait, had it missed the deletion, would have had its 3
	// with worker 3 already.
	for i := 3; i <= 4; i++ {
		if err := createTestNode(ctx, t, pool, i, true); err != nil {
			t.Fatal(err)
		}
	}
	r := <-wait
	if r.err != nil {
		t.Fatalf("WaitForSliceHosts(%s, 3): %v", pool, r.err)
	}
	if got, want := names(r.hosts), []string{testNodeName(pool, 0), testNodeName(pool, 2), testNodeName(pool, 3), testNodeName(pool, 4)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("WaitForSliceHosts(%s, 3) = %v, want %v: worker 1 deleted during the wait", pool, got, want)
	}
	if h := r.hosts[1]; h.Ready || h.NotReadyReason != "KubeletNotReady: container runtime is down" {
		t.Errorf("host %s = %+v, want it not Ready as its kubelet reported during the wait", h.Name, h)
	}
}
