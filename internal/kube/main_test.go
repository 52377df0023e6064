package kube

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// The package's tests share one emulator and one cluster, made by TestMain: a zonal cluster with
// a CPU pool and two v6e 4x4 slices (4 hosts each), the Ray Operator add-on off until a test
// turns it on.
const (
	testProject  = "raytpu-kube-test"
	testLocation = "us-east5-b"
	testCluster  = "kube"
	// poolSlice stays healthy; poolFailing is the one whose hosts fail.
	poolSlice   = "slice-a"
	poolFailing = "slice-b"
	poolCPU     = "default-pool"
	// testRayCRDDelay is the emulator's gap between the add-on reported on and its CRDs created.
	testRayCRDDelay = 2 * time.Second
	testPoll        = 50 * time.Millisecond
)

var env struct {
	emu     *emulator.Emulator
	gke     *container.ClusterManagerClient
	cluster *containerpb.Cluster
	// client reaches the test cluster with the right endpoint, CA and token.
	client *Client
}

func testClusterName() string {
	return fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, testCluster)
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

// runTests sets the environment up, runs the tests and tears everything down. A missing
// kube-apiserver or etcd fails the package: these tests never skip.
func runTests(m *testing.M) int {
	ctx, cancel := testwait.MainContext()
	defer cancel()
	emu, err := emulator.Start(ctx, emulator.Options{RayCRDDelay: testRayCRDDelay})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting the GKE emulator: %v\n", err)
		return 1
	}
	defer emu.Close()
	env.emu = emu

	gke, err := container.NewClusterManagerRESTClient(ctx,
		option.WithEndpoint(emu.Endpoint()),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: emu.Token()})))
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: GKE client: %v\n", err)
		return 1
	}
	defer gke.Close()
	env.gke = gke

	if err := createTestCluster(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: creating the test cluster: %v\n", err)
		return 1
	}
	env.client, err = NewClient(clusterFor(env.cluster, staticToken(emu.Token())))
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: kube client: %v\n", err)
		return 1
	}
	defer env.client.Close()
	return m.Run()
}

func v6eSlice(name string) *containerpb.NodePool {
	return &containerpb.NodePool{
		Name:             name,
		InitialNodeCount: 4,
		Config:           &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
		PlacementPolicy: &containerpb.NodePool_PlacementPolicy{
			Type:        containerpb.NodePool_PlacementPolicy_COMPACT,
			TpuTopology: "4x4",
		},
	}
}

func createTestCluster(ctx context.Context) error {
	op, err := env.gke.CreateCluster(ctx, &containerpb.CreateClusterRequest{
		Parent: fmt.Sprintf("projects/%s/locations/%s", testProject, testLocation),
		Cluster: &containerpb.Cluster{
			Name: testCluster,
			NodePools: []*containerpb.NodePool{
				{Name: poolCPU, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}},
				v6eSlice(poolSlice),
				v6eSlice(poolFailing),
			},
		},
	})
	if err != nil {
		return err
	}
	if err := waitOperation(ctx, op); err != nil {
		return err
	}
	env.cluster, err = env.gke.GetCluster(ctx, &containerpb.GetClusterRequest{Name: testClusterName()})
	return err
}

// clusterFor is what the provider passes to NewClient for a cluster the GKE API returned.
func clusterFor(c *containerpb.Cluster, ts oauth2.TokenSource) Cluster {
	return Cluster{
		Endpoint:            c.GetEndpoint(),
		CACertificateBase64: c.GetMasterAuth().GetClusterCaCertificate(),
		TokenSource:         ts,
	}
}

func staticToken(tok string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok})
}

// testClient is NewClient(cl) for a test, closed when it ends.
func testClient(t *testing.T, cl Cluster) *Client {
	t.Helper()
	c, err := NewClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// waitOperation polls a GKE operation until it is DONE and returns its error, if any.
func waitOperation(ctx context.Context, op *containerpb.Operation) error {
	name := fmt.Sprintf("projects/%s/locations/%s/operations/%s", testProject, testLocation, op.GetName())
	for op.GetStatus() != containerpb.Operation_DONE {
		select {
		case <-ctx.Done():
			return fmt.Errorf("operation %s: %w", name, ctx.Err())
		case <-time.After(testPoll):
		}
		var err error
		if op, err = env.gke.GetOperation(ctx, &containerpb.GetOperationRequest{Name: name}); err != nil {
			return err
		}
	}
	if e := op.GetError(); e != nil {
		return fmt.Errorf("operation %s failed: %s", name, e.GetMessage())
	}
	return nil
}

// setRayOperator turns the Ray Operator add-on on or off and waits for the GKE operation (not
// for the CRDs).
func setRayOperator(t *testing.T, enabled bool) {
	t.Helper()
	ctx := testwait.Context(t)
	op, err := env.gke.SetAddonsConfig(ctx, &containerpb.SetAddonsConfigRequest{
		Name:         testClusterName(),
		AddonsConfig: &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: enabled}},
	})
	if err != nil {
		t.Fatalf("SetAddonsConfig(ray operator %v): %v", enabled, err)
	}
	if err := waitOperation(ctx, op); err != nil {
		t.Fatalf("SetAddonsConfig(ray operator %v): %v", enabled, err)
	}
}

// requireKubeRay makes sure the add-on is on and its CRDs are established.
func requireKubeRay(t *testing.T) {
	t.Helper()
	ctx := testwait.Context(t)
	if st, err := env.client.KubeRayStatus(ctx); err == nil && st.Ready {
		return
	}
	setRayOperator(t, true)
	if _, err := env.client.WaitForKubeRay(ctx, testPoll); err != nil {
		t.Fatal(err)
	}
}

// clientObserving is a client of the test cluster that hands each request to observe before
// sending it.
func clientObserving(t *testing.T, observe func(*http.Request)) *Client {
	t.Helper()
	cl := clusterFor(env.cluster, staticToken(env.emu.Token()))
	cl.onRequest = observe
	return testClient(t, cl)
}

// onNodeWatch calls f as a wait starts to watch nodes: it has listed them by then.
func onNodeWatch(f func()) func(*http.Request) {
	return func(r *http.Request) {
		if r.URL.Path == "/api/v1/nodes" && r.URL.Query().Get("watch") == "true" {
			f()
		}
	}
}

// signal is a channel and a function that closes it, which may be called more than once.
func signal() (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	return ch, func() { once.Do(func() { close(ch) }) }
}

// expiringContext is a context that reaches its deadline when expire is called, or when its
// parent ends: a test that asserts how a wait times out lets the deadline come once the wait has
// seen what it must see first, which a fixed timeout may not leave a busy machine time for.
type expiringContext struct {
	context.Context
	done   <-chan struct{}
	expire func()
}

func newExpiringContext(parent context.Context) *expiringContext {
	done, expire := signal()
	context.AfterFunc(parent, expire)
	return &expiringContext{Context: parent, done: done, expire: expire}
}

func (e *expiringContext) Done() <-chan struct{} { return e.done }

func (e *expiringContext) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
