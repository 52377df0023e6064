package emulator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"
	gcontainer "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// TestLostResponses: a request whose response is lost (an error in its place, a reset connection,
// a response held until the client gives up) has still taken effect, so the client's retry meets
// ALREADY_EXISTS.
func TestLostResponses(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })
	ctl := NewClient(testEmu.Endpoint(), testEmu.Token()) // the fault travels as JSON, as a standalone user sends it

	for _, lost := range []string{LostError, LostReset, LostTimeout} {
		t.Run(lost, func(t *testing.T) {
			name := "lost-" + lost
			// A hold longer than the test: a response held by mistake ends with the client's
			// deadline, not with a late answer.
			if _, err := ctl.InjectFault(ctx, Fault{RPC: "CreateNodePool", Lost: lost, Times: 1, Hold: time.Hour}); err != nil {
				t.Fatal(err)
			}
			// Only the held response is given a deadline of the client's own, the one it asserts:
			// a busy machine reaches it later, never misses it. The others have the test's time.
			callCtx := ctx
			start := time.Now() // before the deadline is set, so the client's wait is at least 2s from here
			if lost == LostTimeout {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
			}
			_, err := c.CreateNodePool(callCtx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool(name, "e2-standard-4", 1, nil)})
			switch lost {
			case LostError:
				wantGoogleError(t, err, 503, "UNAVAILABLE", "Injected fault: UNAVAILABLE.")
			case LostReset:
				var ge *googleapi.Error
				if err == nil || errors.As(err, &ge) || errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("a reset connection: want a transport error, got %v after %s", err, time.Since(start))
				}
			case LostTimeout:
				if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 2*time.Second {
					t.Fatalf("a held response: want the client to give up after its 2s deadline, got %v after %s", err, time.Since(start))
				}
			}
			// The pool was created all the same, and its operation runs to the end.
			np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/" + name})
			if err != nil {
				t.Fatalf("the lost create did not take effect: %v", err)
			}
			for np.Status != containerpb.NodePool_RUNNING {
				time.Sleep(50 * time.Millisecond)
				if np, err = c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/" + name}); err != nil {
					t.Fatal(err)
				}
			}
			_, err = c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool(name, "e2-standard-4", 1, nil)})
			wantGoogleError(t, err, 409, "ALREADY_EXISTS", "Already exists: "+cluster+"/nodePools/"+name)

			// The server records a held request when it notices the client gone, which may be
			// after the client has moved on.
			var logged RequestRecord
			testwait.For(t, "the lost CreateNodePool in the request log", func() bool {
				reqs, err := ctl.Requests(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range reqs {
					if r.RPC == "CreateNodePool" && r.Lost == lost {
						logged = r
						return true
					}
				}
				return false
			})
			if want := map[string]int{LostError: 503, LostReset: 0, LostTimeout: 0}[lost]; logged.Status != want {
				t.Fatalf("request log: status %d, want %d: %+v", logged.Status, want, logged)
			}
			mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/" + name}))
		})
	}

	// A held response is released after Hold when the client waits longer.
	if _, err := testEmu.InjectFault(ctx, Fault{Method: "POST", Path: "/resourcePolicies$", Lost: LostTimeout, Hold: 300 * time.Millisecond, Times: 1}); err != nil {
		t.Fatal(err)
	}
	cs := computeClient(t)
	start := time.Now()
	_, err := cs.ResourcePolicies.Insert(testProject, testRegion, &compute.ResourcePolicy{Name: "lost-policy",
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT", AcceleratorTopology: "2x2x2"}}).Context(ctx).Do()
	// Ended by the server once the hold is over, not by the client's (the test's) deadline; a busy
	// machine only adds to the 300ms the answer takes at least.
	if err == nil || errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("a response held 300ms: %v after %s", err, time.Since(start))
	}
	testwait.For(t, "the lost insert to create the policy", func() bool {
		_, err := cs.ResourcePolicies.Get(testProject, testRegion, "lost-policy").Do()
		return err == nil
	})
	_, err = cs.ResourcePolicies.Insert(testProject, testRegion, &compute.ResourcePolicy{Name: "lost-policy",
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT"}}).Do()
	wantComputeError(t, err, 409, "alreadyExists", "already exists")
	op, err := cs.ResourcePolicies.Delete(testProject, testRegion, "lost-policy").Do()
	if err != nil {
		t.Fatal(err)
	}
	waitComputeOp(t, cs, op)

	// A lost response is for requests that act: GET never matches such a fault.
	if _, err := testEmu.InjectFault(ctx, Fault{Lost: LostReset}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster}); err != nil {
		t.Fatalf("a GET under a lost-response fault: %v", err)
	}
	if err := testEmu.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Fault{{Method: "GET", Lost: LostError}, {Lost: "later"}, {Lost: LostTimeout, Hold: -time.Second}} {
		if _, err := ctl.InjectFault(ctx, bad); err == nil {
			t.Errorf("fault %+v accepted", bad)
		}
	}
}

// TestLegacyErrorList: the discovery client (as terraform-provider-google uses it) reads GKE's
// legacy errors[].reason, which the gapic REST client is not sent.
func TestLegacyErrorList(t *testing.T) {
	cluster := sharedCluster(t)
	ctx := testCtx(t)
	d := discoveryClient(t)
	t.Cleanup(func() { resetControl(t) })
	reason := func(err error) string {
		t.Helper()
		var ge *googleapi.Error
		if !errors.As(err, &ge) || len(ge.Errors) != 1 || ge.Errors[0].Message != ge.Message {
			t.Fatalf("want one legacy error item, got %v", err)
		}
		if !strings.Contains(ge.Body, `"domain":"global"`) || !strings.Contains(ge.Body, `"status":`) {
			t.Fatalf("error body %s", ge.Body)
		}
		return ge.Errors[0].Reason
	}
	_, err := d.Projects.Locations.Clusters.Get(testLocation + "/clusters/nope").Do()
	if r := reason(err); r != "notFound" || !strings.HasSuffix(err.Error(), ", notFound") {
		t.Fatalf("404: %s %v", r, err)
	}
	_, err = d.Projects.Locations.Clusters.NodePools.Create(cluster, &gcontainer.CreateNodePoolRequest{NodePool: &gcontainer.NodePool{
		Name: "system", InitialNodeCount: 1, Config: &gcontainer.NodeConfig{MachineType: "e2-standard-4"}}}).Do()
	if r := reason(err); r != "alreadyExists" {
		t.Fatalf("409: %s %v", r, err)
	}
	_, err = d.Projects.Locations.Clusters.NodePools.Create(cluster, &gcontainer.CreateNodePoolRequest{NodePool: &gcontainer.NodePool{
		Name: "-bad", InitialNodeCount: 1}}).Do()
	if r := reason(err); r != "badRequest" {
		t.Fatalf("400 INVALID_ARGUMENT: %s %v", r, err)
	}
	// terraform-provider-google retries a 400 whose errors[].reason is failedPrecondition
	// (tpgresource.IsFailedPreconditionError): GKE's "incompatible operation".
	if err := testEmu.SetLatencies(ctx, map[string]time.Duration{"CREATE_NODE_POOL": 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	op, err := d.Projects.Locations.Clusters.NodePools.Create(cluster, &gcontainer.CreateNodePoolRequest{NodePool: &gcontainer.NodePool{
		Name: "busy", InitialNodeCount: 1, Config: &gcontainer.NodeConfig{MachineType: "e2-standard-4"}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Projects.Locations.Clusters.NodePools.Delete(cluster + "/nodePools/busy").Do()
	if r := reason(err); r != "failedPrecondition" || !strings.Contains(err.Error(), "incompatible operation "+op.Name) {
		t.Fatalf("400 FAILED_PRECONDITION: %s %v", r, err)
	}
	// The gapic REST client gets the plain google.rpc.Status, with the ErrorInfo reason.
	c := restClient(t, testEmu.Token())
	_, err = c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/busy"})
	if ge := wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "incompatible operation"); ge.Reason != "CLUSTER_ALREADY_HAS_OPERATION" {
		t.Fatalf("gapic client's reason %q", ge.Reason)
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && strings.Contains(gerr.Body, `"errors"`) {
		t.Fatalf("the gapic client was sent the legacy list: %s", gerr.Body)
	}
	for {
		got, err := d.Projects.Locations.Operations.Get(testLocation + "/operations/" + op.Name).Do()
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == "DONE" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := testEmu.InjectFault(ctx, Fault{RPC: "DeleteNodePool", Status: "RESOURCE_EXHAUSTED", Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = d.Projects.Locations.Clusters.NodePools.Delete(cluster + "/nodePools/busy").Do()
	if r := reason(err); r != "rateLimitExceeded" {
		t.Fatalf("429: %s %v", r, err)
	}
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/busy"}))
}
