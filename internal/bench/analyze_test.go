package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

func req(seconds float64, rpc, path string, status int) emulator.RequestRecord {
	return emulator.RequestRecord{Time: at(seconds), RPC: rpc, Path: path, Status: status, Duration: 5 * time.Millisecond}
}

const (
	clusterPath = "/v1/projects/p/locations/us-central2-b/clusters/bench"
	opsPath     = "/v1/projects/p/locations/us-central2-b/operations/"
)

// An apply of one cluster and one slice, as the emulator logs it: the slice's plan-time read of
// the cluster (404), the cluster's creation and wait, then the slice's.
func sampleApply() ([]emulator.RequestRecord, []opInfo, window) {
	ops := []opInfo{
		{Name: "op-cluster", Type: "CREATE_CLUSTER", Start: at(0.3), End: at(5.3)},
		{Name: "op-pool", Type: "CREATE_NODE_POOL", Pool: "slice-0", Start: at(10.141), End: at(15.141)},
	}
	reqs := []emulator.RequestRecord{
		req(0.2, "GetCluster", clusterPath, 404),
		req(0.298, "CreateCluster", "/v1/projects/p/locations/us-central2-b/clusters", 200),
		req(1.3, "GetOperation", opsPath+"op-cluster", 200),
		req(2.8, "GetOperation", opsPath+"op-cluster", 200),
		req(5.05, "GetOperation", opsPath+"op-cluster", 200),
		req(8.43, "GetOperation", opsPath+"op-cluster", 200),
		req(8.44, "GetCluster", clusterPath, 200),
		req(10.13, "GetCluster", clusterPath, 200),
		req(10.138, "CreateNodePool", clusterPath+"/nodePools", 200),
		req(11.1, "GetOperation", opsPath+"op-pool", 200),
		req(12.6, "GetOperation", opsPath+"op-pool", 200),
		req(14.9, "GetOperation", opsPath+"op-pool", 200),
		req(18.271, "GetOperation", opsPath+"op-pool", 200),
		req(18.28, "GetNodePool", clusterPath+"/nodePools/slice-0", 200),
	}
	return reqs, ops, window{at(0.29), at(10.1)}
}

func TestAttributeCallsSplitsClusterAndSlices(t *testing.T) {
	reqs, ops, clusterApply := sampleApply()
	calls := attributeCalls(reqs, ops, clusterApply)
	wantCluster := map[string]int{"CreateCluster": 1, "GetOperation": 4, "GetCluster": 1}
	wantSlices := map[string]int{"GetCluster": 2, "CreateNodePool": 1, "GetOperation": 4, "GetNodePool": 1}
	if !maps.Equal(calls.Cluster, wantCluster) {
		t.Errorf("cluster calls %v, want %v", calls.Cluster, wantCluster)
	}
	if !maps.Equal(calls.Slices, wantSlices) {
		t.Errorf("slice calls %v, want %v", calls.Slices, wantSlices)
	}
	if len(calls.Waits) != 1 || len(calls.ClusterWaits) != 1 {
		t.Fatalf("waits %+v, cluster waits %+v: want one each", calls.Waits, calls.ClusterWaits)
	}
	w := calls.Waits[0]
	if w.Creates != 1 || w.Polls != 4 || w.Reads != 1 || w.Calls() != 6 || !w.Detected {
		t.Errorf("slice wait %+v: want 1 create, 4 polls, 1 read, detected", w)
	}
	if got, want := w.Detection, 3130*time.Millisecond; got != want {
		t.Errorf("detection %s, want %s", got, want)
	}
	if got := w.FixedPollCalls(); got != 3 {
		t.Errorf("a 5 s operation under a fixed 10 s poll: %d calls, want 3", got)
	}
	// The cluster resource's read after the operation is its; the slice's read before creating
	// its pool (10.13 s, outside the cluster's apply) is not.
	if c := calls.ClusterWaits[0]; c.Creates != 1 || c.Polls != 4 || c.Reads != 1 || c.Detection != 3130*time.Millisecond {
		t.Errorf("cluster wait %+v: want 1 create, 4 polls, 1 read, seen DONE 3.13 s late", c)
	}
}

// A slice that watches its hosts: no poll, one read of the pool just after the end.
func TestReadOfThePoolAfterTheEndDetectsIt(t *testing.T) {
	ops := []opInfo{{Name: "op", Type: "CREATE_NODE_POOL", Pool: "s", Start: at(0.002), End: at(5)}}
	reqs := []emulator.RequestRecord{
		req(0, "CreateNodePool", clusterPath+"/nodePools", 200),
		req(5.02, "GetNodePool", clusterPath+"/nodePools/s", 200),
	}
	w := attributeCalls(reqs, ops, window{}).Waits[0]
	if w.Creates != 1 || w.Polls != 0 || w.Reads != 1 || !w.Detected || w.Detection != 20*time.Millisecond {
		t.Fatalf("wait %+v: want 1 create, 1 read that saw it 20 ms late", w)
	}
	if w.Calls() >= w.FixedPollCalls() {
		t.Errorf("%d calls, not fewer than the %d of a fixed 10 s poll", w.Calls(), w.FixedPollCalls())
	}
	// A read answered before the end (hosts up, pool still PROVISIONING) does not see it; the
	// poll after does.
	reqs = []emulator.RequestRecord{
		req(0, "CreateNodePool", clusterPath+"/nodePools", 200),
		req(4.9, "GetNodePool", clusterPath+"/nodePools/s", 200),
		req(5.4, "GetOperation", opsPath+"op", 200),
		req(5.41, "GetNodePool", clusterPath+"/nodePools/s", 200),
	}
	w = attributeCalls(reqs, ops, window{}).Waits[0]
	if w.Polls != 1 || w.Reads != 2 || w.Calls() != 4 || w.Detection != 400*time.Millisecond {
		t.Errorf("wait %+v: want 1 poll, 2 reads, seen 400 ms late", w)
	}
}

func TestWaitWithoutDonePollIsNotDetected(t *testing.T) {
	ops := []opInfo{{Name: "op", Type: "CREATE_NODE_POOL", Pool: "s", Start: at(0), End: at(5)}}
	reqs := []emulator.RequestRecord{req(1, "GetOperation", opsPath+"op", 200), req(2, "GetOperation", opsPath+"op", 200)}
	calls := attributeCalls(reqs, ops, window{})
	if w := calls.Waits[0]; w.Detected {
		t.Errorf("the last poll came before the end, yet %+v counts as detected", w)
	}
	if s := summarize(calls.Waits); s.Undetected != 1 {
		t.Errorf("summary %+v: want 1 undetected", s)
	}
}

func TestFixedPollCalls(t *testing.T) {
	for d, want := range map[time.Duration]int{
		200 * time.Millisecond: 3, 10 * time.Second: 3, 10*time.Second + time.Millisecond: 4, 25 * time.Second: 5, 5 * time.Minute: 32,
	} {
		w := opWait{Op: opInfo{Start: t0, End: t0.Add(d)}}
		if got := w.FixedPollCalls(); got != want {
			t.Errorf("operation of %s: %d calls under a fixed 10 s poll, want %d", d, got, want)
		}
	}
}

func TestNewOpInfo(t *testing.T) {
	o := newOpInfo(&containerpb.Operation{
		Name: "operation-1", OperationType: containerpb.Operation_CREATE_NODE_POOL,
		TargetLink: "http://127.0.0.1:1/v1/projects/p/locations/l/clusters/c/nodePools/slice-3",
		StartTime:  "2026-01-02T03:04:05.5Z", EndTime: "2026-01-02T03:04:10.75Z",
	})
	if o.Pool != "slice-3" || o.Type != "CREATE_NODE_POOL" || o.Duration() != 5250*time.Millisecond {
		t.Errorf("newOpInfo = %+v (duration %s)", o, o.Duration())
	}
	if c := newOpInfo(&containerpb.Operation{TargetLink: "http://x/v1/projects/p/locations/l/clusters/c"}); c.Pool != "" || c.Duration() != 0 {
		t.Errorf("cluster operation still running = %+v", c)
	}
}

func TestRenderShowsTargetsAndOutcomes(t *testing.T) {
	reqs, ops, clusterApply := sampleApply()
	r := results{
		When: t0, CLI: &cliRunner{Name: "terraform", Version: "1.8.5", Path: "/x/terraform", Plugin: "/x/terraform-provider-raytpu"},
		Latency: 5 * time.Second, SetupLatency: 200 * time.Millisecond, Shape: "v6e 4x4", Slices: 1, RefreshSlices: 2,
		Apply: cliRun{Window: window{at(0), at(18.3)}}, ApplyOps: ops, ApplyCalls: attributeCalls(reqs, ops, clusterApply),
		Refresh:      cliRun{Window: window{at(20), at(21)}},
		Plan:         cliRun{Window: window{at(22), at(23)}, ExitCode: 2},
		RefreshCalls: map[string]int{"GetNodePool": 2, "GetCluster": 1},
		PlanCalls:    map[string]int{"GetNodePool": 2, "GetCluster": 2},
		// 8 slices in 21 s against one in 10 s: within two waves and 2 s; 2.5 calls a slice against 4.
		ParallelSlices: 8,
		ParallelOne: parallelRun{Slices: 1, Run: cliRun{Window: window{at(30), at(40)}},
			Calls: map[string]int{"GetCluster": 1, "CreateNodePool": 1, "GetNodePool": 2}},
		ParallelMany: parallelRun{Slices: 8, Run: cliRun{Window: window{at(50), at(71)}}, MaxAtOnce: 5,
			Creations: make([]opInfo, 8), Calls: map[string]int{"GetCluster": 1, "CreateNodePool": 8, "GetNodePool": 11}},
	}
	out := render(r)
	for _, want := range []string{
		"8.30 s = 83.0%", "<= 5% + 2 s = 2.50 s", // 18.3 s wall against 10 s of operations
		"3 (GetNodePool 2, GetCluster 1)", "<= 3 (1 a slice, 1 the cluster)",
		"changes planned", "<= 2 x 1 slice + 2 s = 22.00 s", "5 of 8", "4.00 / 2.50",
		"7 targets: 4 PASS, 3 FAIL",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// 3.13 s for each of the two operations, of the 8.30 s of overhead.
	for label, want := range map[string]string{"seeing operations DONE": "6.26 s", "the rest": "2.04 s"} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, label) && !strings.Contains(line, want) {
				t.Errorf("report line %q lacks %s", line, want)
			}
		}
	}
}

func TestCoveredCountsOverlapsOnce(t *testing.T) {
	spans := []window{{at(10), at(15)}, {at(0), at(5)}, {at(4), at(6)}, {at(14), at(14.5)}, {at(20), at(20)}}
	if got, want := covered(spans), 11*time.Second; got != want {
		t.Errorf("covered = %s, want %s (0-6 and 10-15)", got, want)
	}
	if got := covered(nil); got != 0 {
		t.Errorf("covered(nil) = %s", got)
	}
	if got, want := uncovered(window{at(4), at(12)}, spans), 4*time.Second; got != want {
		t.Errorf("uncovered 4-12 s = %s, want %s (6-10 s)", got, want)
	}
}

// The KubeRay CRDs installed after the cluster's operation are the emulated GKE's time, not the
// provider's; the part of an install during an operation is counted once.
func TestFiguresCountTheAddonInstallAsEmulated(t *testing.T) {
	reqs, ops, clusterApply := sampleApply()
	r := results{
		Slices: 1, Apply: cliRun{Window: window{at(0), at(18.3)}}, ApplyOps: ops,
		ApplyCalls:   attributeCalls(reqs, ops, clusterApply),
		ApplyRayCRDs: []window{{at(5.3), at(6.8)}, {at(10), at(10.641)}},
	}
	f := r.figures()
	if f.Operations != 10*time.Second || f.RayCRDs != 1641*time.Millisecond || f.Emulated != 11641*time.Millisecond {
		t.Errorf("operations %s, KubeRay CRDs %s, emulated %s; want 10 s, 1.641 s (1.5 s after the cluster, 0.141 s before the pool), 11.641 s", f.Operations, f.RayCRDs, f.Emulated)
	}
	if f.Overhead != 18300*time.Millisecond-f.Emulated {
		t.Errorf("overhead %s, want the wall less the emulated time", f.Overhead)
	}
	// The cluster's operation, seen 3.13 s late, had the CRDs installing for 1.5 s of that.
	if want := 1630*time.Millisecond + 3130*time.Millisecond; f.Detecting != want {
		t.Errorf("detecting %s, want %s: 1.63 s for the cluster, 3.13 s for the pool", f.Detecting, want)
	}
}

func TestMaxAtOnce(t *testing.T) {
	ops := []opInfo{
		{Start: at(0), End: at(5)}, {Start: at(1), End: at(6)}, {Start: at(2), End: at(3)},
		{Start: at(5), End: at(9)}, // starts as the first ends: not beside it
		{Start: at(7)},             // still running: not counted
	}
	if got := maxAtOnce(ops); got != 3 {
		t.Errorf("maxAtOnce = %d, want 3", got)
	}
	if got := maxAtOnce(nil); got != 0 {
		t.Errorf("maxAtOnce(nil) = %d", got)
	}
}
