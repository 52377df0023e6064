package gke

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"golang.org/x/oauth2"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// testCluster is the cluster the package's emulator tests share.
var testCluster = ClusterID{Project: "raytpu-gke-test", Location: "us-central2-b", Name: "shared"}

// shared is the emulator those tests share, started by the first test that needs it, so that the
// pure unit tests run without kube-apiserver and etcd.
var shared struct {
	once sync.Once
	emu  *emulator.Emulator
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.emu != nil {
		shared.emu.Close()
	}
	os.Exit(code)
}

// testEmulator returns the shared emulator, starting it and the shared cluster on first use. A
// test that needs it fails, never skips, when it cannot start.
func testEmulator(t testing.TB) *emulator.Emulator {
	t.Helper()
	shared.once.Do(func() { shared.emu, shared.err = startSharedEmulator() })
	if shared.err != nil {
		t.Fatalf("%v\n(run `make tools` to build kube-apiserver and etcd)", shared.err)
	}
	return shared.emu
}

func startSharedEmulator() (*emulator.Emulator, error) {
	// Shared by the tests, it is bounded by the test binary's deadline; m.Run has parsed the flags.
	ctx, cancel := testwait.MainContext()
	defer cancel()
	e, err := emulator.Start(ctx, emulator.Options{DefaultLatency: 100 * time.Millisecond, RayCRDDelay: -1})
	if err != nil {
		return nil, fmt.Errorf("starting the GKE emulator: %w", err)
	}
	c := newTestClient(e, e.Token())
	defer c.Close()
	op, err := c.CreateCluster(ctx, testCluster, testClusterSpec())
	if err == nil {
		err = c.WaitForOperation(ctx, testCluster, op)
	}
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("creating the shared test cluster: %w", err)
	}
	return e, nil
}

func testClusterSpec() *containerpb.Cluster {
	return &containerpb.Cluster{
		Name:      testCluster.Name,
		NodePools: []*containerpb.NodePool{{Name: "default", InitialNodeCount: 1}},
	}
}

func newTestClient(e *emulator.Emulator, token string) *Client {
	c, err := New(context.Background(), Config{
		Endpoint:        e.Endpoint(),
		ComputeEndpoint: e.ComputeEndpoint(),
		TokenSource:     oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}),
		Poll:            PollSchedule{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, Fraction: 0.5},
		Retry:           Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond},
	})
	if err != nil {
		panic(err)
	}
	return c
}

func testClient(t *testing.T) *Client {
	e := testEmulator(t)
	c := newTestClient(e, e.Token())
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	return testwait.Context(t)
}

// getClusterRequests returns how many GetCluster requests the emulator has seen.
func getClusterRequests(t *testing.T) int {
	t.Helper()
	records, err := testEmulator(t).Requests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range records {
		if r.RPC == "GetCluster" {
			n++
		}
	}
	return n
}

// Faults are global to the emulator, so the tests that inject them do not run in parallel.
func injectFault(t *testing.T, f emulator.Fault) {
	t.Helper()
	if _, err := testEmulator(t).InjectFault(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testEmulator(t).ClearFaults(context.Background()) })
}

func TestRetriesTransientFailures(t *testing.T) {
	for _, tc := range []struct {
		status, message string
		http            int
	}{
		{"RESOURCE_EXHAUSTED", "Too many requests: rate limit exceeded", 429},
		{"UNAVAILABLE", "The service is currently unavailable.", 503},
		{"INTERNAL", "Internal error encountered.", 500},
		// GKE's answers while other operations run on the cluster ("Troubleshoot concurrent
		// operations", and the node pool operations cap of terraform-provider-google #15205).
		{"FAILED_PRECONDITION", "Cluster is running incompatible operation operation-123.", 400},
		{"FAILED_PRECONDITION", "Cluster is currently being created, deleted, updated or repaired and cannot be updated.", 400},
		{"FAILED_PRECONDITION", "Operation operation-123 is currently upgrading cluster shared. Please wait and try again once it is done.", 400},
		{"RESOURCE_EXHAUSTED", `Too many operations: cluster "shared" hits the concurrent operations quota 5, please try again later.`, 429},
	} {
		t.Run(tc.status+"/"+tc.message, func(t *testing.T) {
			before := getClusterRequests(t)
			injectFault(t, emulator.Fault{RPC: "GetCluster", Status: tc.status, HTTPStatus: tc.http, Message: tc.message, Times: 2})
			cluster, err := testClient(t).GetCluster(testCtx(t), testCluster)
			if err != nil {
				t.Fatalf("GetCluster after two %s answers: %v", tc.status, err)
			}
			if cluster.GetName() != testCluster.Name {
				t.Errorf("got cluster %q", cluster.GetName())
			}
			if got := getClusterRequests(t) - before; got != 3 {
				t.Errorf("%d GetCluster requests, want 3 (two failures, one success)", got)
			}
		})
	}
}

func TestDoesNotRetryWhatOnlyConfigurationFixes(t *testing.T) {
	for _, tc := range []struct{ status, message string }{
		{"INVALID_ARGUMENT", "Invalid value for field 'cluster.name'."},
		{"PERMISSION_DENIED", "Required 'container.clusters.get' permission."},
		{"RESOURCE_EXHAUSTED", "Insufficient quota to satisfy the request: TPUS_PER_PROJECT."},
		{"FAILED_PRECONDITION", "Network default is not ready."},
		{"FAILED_PRECONDITION", `Cluster "shared" is in state ERROR and cannot be updated.`},
	} {
		t.Run(tc.status+"/"+tc.message, func(t *testing.T) {
			before := getClusterRequests(t)
			injectFault(t, emulator.Fault{RPC: "GetCluster", Status: tc.status, Message: tc.message})
			_, err := testClient(t).GetCluster(testCtx(t), testCluster)
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error = %v, want the API's message %q", err, tc.message)
			}
			if got := getClusterRequests(t) - before; got != 1 {
				t.Errorf("%d GetCluster requests, want exactly 1", got)
			}
		})
	}
}

func TestRetryStopsWithTheContext(t *testing.T) {
	injectFault(t, emulator.Fault{RPC: "GetCluster", Status: "UNAVAILABLE", Message: "down for maintenance"})
	// The next attempt would come in an hour: the context, ended as the call logs that it waits
	// for it, ends the call after an answer however slow. It has no deadline, as the call gives up
	// at once on an attempt that would come after one.
	e := testEmulator(t)
	c := clientAt(t, e.Endpoint(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.Token()}), Backoff{Initial: time.Hour, Max: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	context.AfterFunc(testCtx(t), cancel)
	ctx = tflogtest.RootLogger(ctx, writerFunc(func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("retrying")) {
			cancel()
		}
		return len(p), nil
	}))
	_, err := c.GetCluster(ctx, testCluster)
	if err == nil || !strings.Contains(err.Error(), "down for maintenance") || !strings.Contains(err.Error(), "gave up retrying GetCluster") {
		t.Fatalf("error = %v, want the last API error and the reason retries stopped", err)
	}
}

// writerFunc is an io.Writer that is a function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestNotFoundAndAlreadyExists(t *testing.T) {
	c := testClient(t)
	_, err := c.GetCluster(testCtx(t), ClusterID{Project: testCluster.Project, Location: testCluster.Location, Name: "absent"})
	if !IsNotFound(err) {
		t.Errorf("GetCluster of an absent cluster: %v, want NotFound", err)
	}
	_, err = c.CreateCluster(testCtx(t), testCluster, testClusterSpec())
	if !IsAlreadyExists(err) {
		t.Errorf("CreateCluster of an existing cluster: %v, want AlreadyExists", err)
	}
}

func TestOperationErrorIsSurfacedWithAdvice(t *testing.T) {
	ctx := testCtx(t)
	c := testClient(t)
	pool := NodePoolID{Cluster: testCluster, Name: "stockout"}
	if err := testEmulator(t).FailNextOperation(ctx, emulator.OperationFault{
		OperationType: "CREATE_NODE_POOL", Status: "RESOURCE_EXHAUSTED", Reason: "GCE_STOCKOUT",
		Message: "The zone 'projects/raytpu-gke-test/zones/us-central2-b' does not have enough resources available to fulfill the request.",
	}); err != nil {
		t.Fatal(err)
	}
	unlock, err := c.LockNodePool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	op, err := c.CreateNodePool(ctx, pool, &containerpb.NodePool{
		Name: pool.Name, InitialNodeCount: 4,
		Config:          &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
		PlacementPolicy: &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: "4x4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.WaitForOperation(ctx, testCluster, op)
	var opErr *OperationError
	if !errors.As(err, &opErr) {
		t.Fatalf("WaitForOperation = %v, want an OperationError", err)
	}
	if code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "does not have enough resources") {
		t.Errorf("error %v (code %s) does not carry the operation's error", err, code(err))
	}
	if advice := Advice(err); !strings.Contains(advice, "another zone") || !strings.Contains(advice, "reservation") {
		t.Errorf("advice for a stockout = %q", advice)
	}
	// Clean up the pool the failed operation left in ERROR.
	if op, err := c.DeleteNodePool(ctx, pool); err == nil {
		_ = c.WaitForOperation(ctx, testCluster, op)
	}
}

func TestWaitForOperationHonoursTheContext(t *testing.T) {
	ctx := testCtx(t)
	if err := testEmulator(t).SetLatencies(ctx, map[string]time.Duration{"UPDATE_CLUSTER": 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = testEmulator(t).SetLatencies(context.Background(), map[string]time.Duration{"UPDATE_CLUSTER": 100 * time.Millisecond})
	}()
	c := testClient(t)
	op, err := c.UpdateCluster(ctx, testCluster, &containerpb.ClusterUpdate{DesiredLoggingService: "none"})
	if err != nil {
		t.Fatal(err)
	}
	// 300 ms into an operation of 3 s.
	err = c.WaitForOperation(cutShort(t, op, 300*time.Millisecond), testCluster, op)
	if err == nil || !strings.Contains(err.Error(), "keeps running in GKE") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForOperation with a short context = %v", err)
	}
	// The operation itself finishes; waiting again with time to spare succeeds.
	if err := c.WaitForOperation(ctx, testCluster, op); err != nil {
		t.Fatalf("second wait: %v", err)
	}
}

// cutShort is a context that ends d after op started: before op ends when it takes longer, however
// late a busy machine starts a wait on it.
func cutShort(t *testing.T, op *containerpb.Operation, d time.Duration) context.Context {
	t.Helper()
	start, err := time.Parse(time.RFC3339Nano, op.GetStartTime())
	if err != nil {
		t.Fatalf("operation %s: start time: %v", op.GetName(), err)
	}
	ctx, cancel := context.WithDeadline(testCtx(t), start.Add(d))
	t.Cleanup(cancel)
	return ctx
}

func TestWrongTokenIsRefused(t *testing.T) {
	c := newTestClient(testEmulator(t), "not-the-token")
	defer c.Close()
	_, err := c.GetCluster(testCtx(t), testCluster)
	if code(err) != codes.Unauthenticated {
		t.Fatalf("GetCluster with a wrong token = %v, want Unauthenticated", err)
	}
	if !strings.Contains(Advice(err), "credentials were refused") {
		t.Errorf("advice = %q", Advice(err))
	}
}
