package emulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"golang.org/x/oauth2"
	gcontainer "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// One emulator is shared by the package's tests (TestMain), with short latencies; tests that
// change its control settings reset what they changed.
var testEmu *Emulator

const (
	testProject  = "raytpu-test"
	testZone     = "us-central2-b"
	testLocation = "projects/" + testProject + "/locations/" + testZone
)

func testOptions() Options {
	o := Options{
		DefaultLatency: 100 * time.Millisecond,
		RayCRDDelay:    300 * time.Millisecond,
	}
	if os.Getenv("RAYTPU_EMULATOR_LOG") != "" {
		o.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "emulator: "+f+"\n", a...) }
	}
	return o
}

func TestMain(m *testing.M) {
	flag.Parse() // testwait.MainContext reads -test.timeout
	ctx, cancel := testwait.MainContext()
	e, err := Start(ctx, testOptions())
	cancel()
	if err != nil {
		// Never a skip: without kube-apiserver and etcd the emulator cannot be tested.
		fmt.Fprintf(os.Stderr, "FAIL: starting the emulator: %v\n(run `make tools` to build kube-apiserver and etcd)\n", err)
		os.Exit(1)
	}
	testEmu = e
	code := m.Run()
	// Reset deletes every cluster and stops its kube-apiserver: only etcd is left.
	if err := e.Reset(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: Reset: %v\n", err)
		code = 1
	}
	left := e.procs.Running()
	if left != 1 || len(e.st.clusters) != 0 {
		fmt.Fprintf(os.Stderr, "FAIL: after Reset %d processes and %d clusters are left, want etcd alone\n", left, len(e.st.clusters))
		code = 1
	}
	if err := e.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "closing the emulator: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// testCtx bounds a test's calls by the test's deadline, not by a time a busy machine may miss.
func testCtx(t *testing.T) context.Context { return testwait.Context(t) }

// restClient is Google's gapic REST client, pointed at the emulator.
func restClient(t *testing.T, token string) *container.ClusterManagerClient {
	t.Helper()
	c, err := container.NewClusterManagerRESTClient(context.Background(),
		option.WithEndpoint(testEmu.Endpoint()),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// discoveryClient is google.golang.org/api/container/v1, pointed at the emulator.
func discoveryClient(t *testing.T) *gcontainer.Service {
	t.Helper()
	s, err := gcontainer.NewService(context.Background(),
		option.WithEndpoint(testEmu.Endpoint()+"/"),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testEmu.Token()})))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitOp polls an operation until DONE and returns it with the statuses seen on the way.
func waitOp(t *testing.T, c *container.ClusterManagerClient, op *containerpb.Operation) (*containerpb.Operation, []containerpb.Operation_Status) {
	t.Helper()
	ctx := testCtx(t)
	seen := []containerpb.Operation_Status{op.Status}
	// The operation's selfLink is http://127.0.0.1:PORT/v1/projects/p/locations/l/operations/id.
	name := strings.TrimPrefix(op.SelfLink, testEmu.Endpoint()+"/v1/")
	for op.Status != containerpb.Operation_DONE {
		time.Sleep(25 * time.Millisecond)
		var err error
		op, err = c.GetOperation(ctx, &containerpb.GetOperationRequest{Name: name})
		if err != nil {
			t.Fatalf("GetOperation %s: %v", name, err)
		}
		if seen[len(seen)-1] != op.Status {
			seen = append(seen, op.Status)
		}
	}
	return op, seen
}

// mustSucceed returns a function that waits for an operation returned by a client call and fails
// the test when the call or the operation failed: mustSucceed(t, c)(c.DeleteNodePool(...)).
func mustSucceed(t *testing.T, c *container.ClusterManagerClient) func(*containerpb.Operation, error) *containerpb.Operation {
	return func(op *containerpb.Operation, err error) *containerpb.Operation {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		done, _ := waitOp(t, c, op)
		if done.Error != nil {
			t.Fatalf("operation %s (%s) failed: %v", done.Name, done.OperationType, done.Error)
		}
		return done
	}
}

// kubeFor returns client-go clients for a cluster, built only from what GKE reports (endpoint,
// CA certificate) and the token, as a user would.
func kubeFor(t *testing.T, cl *containerpb.Cluster) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	ca, err := base64.StdEncoding.DecodeString(cl.GetMasterAuth().GetClusterCaCertificate())
	if err != nil || len(ca) == 0 {
		t.Fatalf("cluster CA certificate: %v", err)
	}
	var port int
	if _, err := fmt.Sscanf(strings.TrimPrefix(cl.Endpoint, "127.0.0.1:"), "%d", &port); err != nil {
		t.Fatalf("cluster endpoint %q: %v", cl.Endpoint, err)
	}
	kube, dyn, err := kubeClients(port, ca, testEmu.Token())
	if err != nil {
		t.Fatal(err)
	}
	return kube, dyn
}

// sharedCluster is a RUNNING cluster with the Ray Operator add-on and a CPU system pool, created
// once and used by the tests that need a cluster to put node pools on.
var (
	sharedOnce sync.Once
	sharedName string
	sharedErr  error
)

const sharedClusterID = "shared"

func sharedCluster(t *testing.T) string {
	t.Helper()
	sharedOnce.Do(func() {
		c := restClient(t, testEmu.Token())
		ctx := testCtx(t)
		op, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{
			Parent: testLocation,
			Cluster: &containerpb.Cluster{
				Name:         sharedClusterID,
				AddonsConfig: &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: true}},
				NodePools: []*containerpb.NodePool{{
					Name: "system", InitialNodeCount: 1,
					Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"},
				}},
			},
		})
		if err != nil {
			sharedErr = err
			return
		}
		done, _ := waitOp(t, c, op)
		if done.Error != nil {
			sharedErr = errors.New(done.Error.Message)
			return
		}
		sharedName = testLocation + "/clusters/" + sharedClusterID
	})
	if sharedErr != nil {
		t.Fatalf("creating the shared cluster: %v", sharedErr)
	}
	return sharedName
}

// googleError is what a client's error says, decoded the way callers do: the HTTP code and the
// google.rpc.Code name from the body (through apierror for the gapic client, *googleapi.Error
// for the discovery client).
type googleError struct {
	HTTP    int
	Status  string
	Message string
	Reason  string
}

func decodeGoogleError(t *testing.T, err error) googleError {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got none")
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("not a Google API error: %T %v", err, err)
	}
	var body apierr.Body
	if jerr := json.Unmarshal([]byte(ge.Body), &body); jerr != nil {
		t.Fatalf("error body %q: %v", ge.Body, jerr)
	}
	out := googleError{HTTP: ge.Code, Status: body.Error.Status, Message: ge.Message}
	// The gapic client returns an *apierror.APIError already; the discovery client's error parses
	// into one.
	var ae *apierror.APIError
	if !errors.As(err, &ae) {
		ae, _ = apierror.FromError(ge)
	}
	if ae != nil {
		out.Reason = ae.Reason()
	}
	return out
}

// wantGoogleError checks an error's HTTP code, status name and message.
func wantGoogleError(t *testing.T, err error, httpCode int, statusName, msg string) googleError {
	t.Helper()
	ge := decodeGoogleError(t, err)
	if ge.HTTP != httpCode || ge.Status != statusName || !strings.Contains(ge.Message, msg) {
		t.Fatalf("want %d %s containing %q, got %d %s %q", httpCode, statusName, msg, ge.HTTP, ge.Status, ge.Message)
	}
	return ge
}

// sharedKube returns the shared cluster's name, a REST client and client-go clients for it.
func sharedKube(t *testing.T) (string, *container.ClusterManagerClient, kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	name := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	cl, err := c.GetCluster(testCtx(t), &containerpb.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	kube, dyn := kubeFor(t, cl)
	return name, c, kube, dyn
}
