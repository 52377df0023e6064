package gke

import (
	"context"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
)

// pollTimes lists when a plan polls an operation that runs longer than horizon: the elapsed
// time at each poll up to horizon.
func pollTimes(p *pollPlan, horizon time.Duration) []time.Duration {
	var at []time.Duration
	for elapsed := time.Duration(0); ; {
		elapsed += p.next(elapsed)
		if elapsed > horizon {
			return at
		}
		at = append(at, elapsed)
	}
}

func TestScheduleSeesTheEndWithinAFractionOfTheDuration(t *testing.T) {
	s := DefaultPollSchedule
	polls := pollTimes(s.plan(0), 5*time.Minute)
	want := []int{250, 500, 750, 1000, 1250, 1500, 1800, 2160, 2592}
	for i, ms := range want {
		if got := polls[i].Round(time.Millisecond); got != time.Duration(ms)*time.Millisecond {
			t.Fatalf("poll %d at %s, want %dms (every Initial until a fifth of the time waited is longer); polls %v", i, got, ms, polls[:len(want)])
		}
	}
	prev := time.Duration(0)
	for _, at := range polls {
		gap := at - prev
		if gap > s.Max {
			t.Errorf("polls at %s and %s: %s apart, more than Max %s", prev, at, gap, s.Max)
		}
		// An operation that ended just after prev is seen at most Fraction of its duration late.
		if late := max(s.Initial, time.Duration(float64(prev)*s.Fraction)); gap > late+time.Microsecond {
			t.Errorf("poll at %s follows %s: an end just after it is seen %s late, more than %s", at, prev, gap, late)
		}
		prev = at
	}
	// A five-minute operation: 25 polls to reach Max (at 50 s), then one every 10 s: about 50.
	if n := len(polls); n < 45 || n > 55 {
		t.Errorf("%d polls in 5 minutes, want 45 to 55", n)
	}
}

func TestPollPlanAimsAtTheExpectedEnd(t *testing.T) {
	s := PollSchedule{Initial: time.Second, Max: 10 * time.Second, Fraction: 0.2}
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		expected time.Duration
		want     []time.Duration
	}{
		// One poll at 5 s + 2%, then the schedule counted from there while the operation runs on.
		{"expected 5s", 5 * time.Second, ms(5100, 6100, 7100, 8100, 9100, 10100, 11100, 12300, 13740)},
		// At most 10 s apart, the last on the target: 25 s + 250 ms (Initial/4), so 5.25, 15.25, 25.25.
		{"expected 25s", 25 * time.Second, ms(5250, 15250, 25250, 26250, 27250, 28250, 29250, 30250, 31250, 32450)},
		{"expected 200ms", 200 * time.Millisecond, ms(204, 1204, 2204, 3204, 4204, 5204, 6204, 7404, 8844)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pollTimes(s.plan(tc.expected), 40*time.Second)
			for i := range got {
				got[i] = got[i].Round(time.Millisecond)
			}
			if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Errorf("polls at %v, want them to begin %v", got, tc.want)
			}
			prev := time.Duration(0)
			for _, at := range got {
				if at-prev > s.Max {
					t.Errorf("polls %s apart, more than Max %s", at-prev, s.Max)
				}
				prev = at
			}
		})
	}
}

func TestOpDurationsRemembersSuccessfulOperations(t *testing.T) {
	var d opDurations
	op := func(typ containerpb.Operation_Type, start, end string, failed bool) *containerpb.Operation {
		o := &containerpb.Operation{OperationType: typ, Status: containerpb.Operation_DONE, StartTime: start, EndTime: end}
		if failed {
			o.Error = &rpcstatus.Status{Code: 8, Message: "stockout"}
		}
		return o
	}
	d.observe(op(containerpb.Operation_CREATE_NODE_POOL, "2026-01-02T03:04:05.25Z", "2026-01-02T03:06:05.5Z", false))
	d.observe(op(containerpb.Operation_DELETE_NODE_POOL, "2026-01-02T03:04:05Z", "2026-01-02T03:04:35Z", true))
	d.observe(op(containerpb.Operation_UPGRADE_NODES, "2026-01-02T03:04:05Z", "", false))
	d.observe(&containerpb.Operation{OperationType: containerpb.Operation_UPDATE_CLUSTER, Status: containerpb.Operation_RUNNING, StartTime: "2026-01-02T03:04:05Z"})
	if got := d.expected(containerpb.Operation_CREATE_NODE_POOL); got != 120250*time.Millisecond {
		t.Errorf("CREATE_NODE_POOL expected %s, want 2m0.25s", got)
	}
	for _, typ := range []containerpb.Operation_Type{containerpb.Operation_DELETE_NODE_POOL, containerpb.Operation_UPGRADE_NODES, containerpb.Operation_UPDATE_CLUSTER} {
		if got := d.expected(typ); got != 0 {
			t.Errorf("%s expected %s from a failed, unfinished or running operation, want none", typ, got)
		}
	}
}

// Two operations of one type in a row: the second is polled once, on its expected end.
func TestWaitForOperationExpectsTheDurationOfTheLastOfItsType(t *testing.T) {
	ctx := testCtx(t)
	if err := testEmulator(t).SetLatencies(ctx, map[string]time.Duration{"UPDATE_CLUSTER": time.Second}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = testEmulator(t).SetLatencies(context.Background(), map[string]time.Duration{"UPDATE_CLUSTER": 100 * time.Millisecond})
	}()
	c, err := New(ctx, Config{
		Endpoint: testEmulator(t).Endpoint(), TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testEmulator(t).Token()}),
		Poll: PollSchedule{Initial: 50 * time.Millisecond, Max: 2 * time.Second, Fraction: 0.2},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	polls := make([]int, 2)
	var expected time.Duration // the first one's, by GKE's times
	var started time.Time      // the second wait
	for i, logging := range []string{"none", "logging.googleapis.com/kubernetes"} {
		op, err := c.UpdateCluster(ctx, testCluster, &containerpb.ClusterUpdate{DesiredLoggingService: logging})
		if err != nil {
			t.Fatal(err)
		}
		before, err := testEmulator(t).Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		expected, started = c.durations.expected(containerpb.Operation_UPDATE_CLUSTER), time.Now()
		if err := c.WaitForOperation(ctx, testCluster, op); err != nil {
			t.Fatal(err)
		}
		after, err := testEmulator(t).Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The package's tests run one at a time: every poll in between is this wait's.
		polls[i] = after["GetOperation"] - before["GetOperation"]
	}
	// The first follows the schedule (every 50 ms for 250 ms, then a fifth of the time waited:
	// about 9 polls in a second); the second polls first at 1.0125 s, and again if the machine is
	// too busy to end it on time. So when it first polls is checked: never before the first one's
	// duration, later only on a busy machine.
	t.Logf("polls of two 1 s operations in a row: %v", polls)
	first := firstRequest(t, "GetOperation", started)
	if expected < time.Second || first.Sub(started) < expected {
		t.Errorf("the second wait polled first %s in, expecting %s; want it to wait for the 1 s the first one took", first.Sub(started), expected)
	}
}

// firstRequest is when the emulator got the first request of rpc since since.
func firstRequest(t *testing.T, rpc string, since time.Time) time.Time {
	t.Helper()
	at := requestTimes(t, rpc, since)
	if len(at) == 0 {
		t.Fatalf("no %s request since %s", rpc, since)
	}
	return at[0]
}

// requestTimes are when the emulator got the requests of rpc since since, in order.
func requestTimes(t *testing.T, rpc string, since time.Time) []time.Time {
	t.Helper()
	records, err := testEmulator(t).Requests(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var at []time.Time
	for _, r := range records {
		if r.RPC == rpc && !r.Time.Before(since) {
			at = append(at, r.Time)
		}
	}
	return at
}
