package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

const testRegion = "us-central2"

// computeClient is google.golang.org/api/compute/v1, pointed at the emulator's Compute Engine.
func computeClient(t *testing.T) *compute.Service {
	t.Helper()
	s, err := compute.NewService(context.Background(),
		option.WithEndpoint(testEmu.Endpoint()+computePrefix),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testEmu.Token()})))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantComputeError checks a Compute Engine error as the discovery client decodes it: the HTTP
// code, the message and the legacy reason.
func wantComputeError(t *testing.T, err error, code int, reason, msg string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want a Compute Engine error %d %s, got %T %v", code, reason, err, err)
	}
	if ge.Code != code || len(ge.Errors) != 1 || ge.Errors[0].Reason != reason || !strings.Contains(ge.Message, msg) {
		t.Fatalf("want %d %s containing %q, got %d %+v %q", code, reason, msg, ge.Code, ge.Errors, ge.Message)
	}
	var body map[string]map[string]any
	if json.Unmarshal([]byte(ge.Body), &body) != nil || body["error"]["status"] != nil || body["error"]["errors"] == nil {
		t.Fatalf("Compute Engine's error shape has errors[] and no status: %s", ge.Body)
	}
}

// waitComputeOp polls a regional operation until DONE and returns it with the statuses seen.
func waitComputeOp(t *testing.T, cs *compute.Service, op *compute.Operation) (*compute.Operation, []string) {
	t.Helper()
	seen := []string{op.Status}
	for op.Status != "DONE" {
		time.Sleep(20 * time.Millisecond)
		var err error
		if op, err = cs.RegionOperations.Get(testProject, path.Base(op.Region), op.Name).Do(); err != nil {
			t.Fatal(err)
		}
		if seen[len(seen)-1] != op.Status {
			seen = append(seen, op.Status)
		}
	}
	return op, seen
}

// TestComputeInstanceGroupManagers reads the instance group managers a node pool's
// instanceGroupUrls name, as terraform-provider-google does to read node_count.
func TestComputeInstanceGroupManagers(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	cs := computeClient(t)
	slice := tpuPool("igm-slice", "ct5lp-hightpu-4t", 4, compact("4x4"))
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: slice}))
	spread := &containerpb.NodePool{Name: "igm-spread", InitialNodeCount: 2, Locations: []string{"us-central2-a", testZone},
		Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: spread}))

	np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/igm-slice"})
	if err != nil || len(np.InstanceGroupUrls) != 1 {
		t.Fatalf("instanceGroupUrls of a one-zone pool: %v %v", np.GetInstanceGroupUrls(), err)
	}
	url := np.InstanceGroupUrls[0]
	if want := testEmu.Endpoint() + computePrefix + "projects/" + testProject + "/zones/" + testZone + "/instanceGroupManagers/gke-shared-igm-slice-"; !strings.HasPrefix(url, want) || !strings.HasSuffix(url, "-grp") {
		t.Fatalf("instance group URL %s, want %s<hash>-grp", url, want)
	}
	igm, err := cs.InstanceGroupManagers.Get(testProject, testZone, path.Base(url)).Do()
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(path.Base(url), "-grp")
	if igm.Name != path.Base(url) || igm.SelfLink != url || igm.TargetSize != 4 || igm.BaseInstanceName != base ||
		!strings.HasSuffix(igm.Zone, "/zones/"+testZone) || !strings.HasSuffix(igm.InstanceTemplate, "/global/instanceTemplates/"+base) ||
		!strings.HasSuffix(igm.InstanceGroup, "/zones/"+testZone+"/instanceGroups/"+igm.Name) || igm.Kind != "compute#instanceGroupManager" {
		t.Fatalf("instance group manager %+v", igm)
	}
	if igm.CurrentActions == nil || igm.CurrentActions.None != 4 || igm.CurrentActions.Creating != 0 || igm.Status == nil || !igm.Status.IsStable {
		t.Fatalf("a running pool's manager: actions %+v status %+v", igm.CurrentActions, igm.Status)
	}
	// The nodes are the group's instances: named after its base instance name.
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool=igm-slice"})
	if err != nil || len(nodes.Items) != 4 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	for _, n := range nodes.Items {
		if !strings.HasPrefix(n.Name, base+"-") {
			t.Fatalf("node %s is not an instance of %s", n.Name, base)
		}
	}

	// A pool over two zones has a manager in each, targetSize its nodes per zone (what
	// terraform-provider-google sums and divides by the number of managers for node_count).
	sp, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/igm-spread"})
	if err != nil || len(sp.InstanceGroupUrls) != 2 {
		t.Fatalf("instanceGroupUrls of a two-zone pool: %v %v", sp.GetInstanceGroupUrls(), err)
	}
	for i, zone := range []string{"us-central2-a", testZone} {
		var names []string
		err := cs.InstanceGroupManagers.List(testProject, zone).Pages(ctx, func(l *compute.InstanceGroupManagerList) error {
			for _, m := range l.Items {
				names = append(names, m.Name)
				if m.SelfLink == sp.InstanceGroupUrls[i] && m.TargetSize != 2 {
					t.Errorf("%s: targetSize %d, want 2", m.Name, m.TargetSize)
				}
			}
			return nil
		})
		if err != nil || !contains(names, path.Base(sp.InstanceGroupUrls[i])) {
			t.Fatalf("managers in %s: %v %v", zone, names, err)
		}
		if zone == testZone && (!contains(names, igm.Name) || len(names) < 3) {
			t.Fatalf("managers in %s: %v, want the system pool's, igm-slice's and igm-spread's", zone, names)
		}
	}

	// Resizing it renumbers the hosts zone after zone: each node keeps its zone's providerID.
	mustSucceed(t, c)(c.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: cluster + "/nodePools/igm-spread", NodeCount: 3}))
	if m, err := cs.InstanceGroupManagers.Get(testProject, "us-central2-a", path.Base(sp.InstanceGroupUrls[0])).Do(); err != nil || m.TargetSize != 3 {
		t.Fatalf("after the resize: %+v %v", m, err)
	}
	spreadNodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool=igm-spread"})
	if err != nil || len(spreadNodes.Items) != 6 {
		t.Fatalf("nodes after the resize: %v %v", spreadNodes, err)
	}
	for _, n := range spreadNodes.Items {
		if zone := n.Labels["topology.kubernetes.io/zone"]; !strings.Contains(n.Spec.ProviderID, "/"+zone+"/"+n.Name) {
			t.Fatalf("node %s in %s has providerID %s", n.Name, zone, n.Spec.ProviderID)
		}
	}

	_, err = cs.InstanceGroupManagers.Get(testProject, testZone, "nope").Do()
	wantComputeError(t, err, 404, "notFound", "The resource 'projects/"+testProject+"/zones/"+testZone+"/instanceGroupManagers/nope' was not found")
	_, err = cs.InstanceGroupManagers.Get("other-project", testZone, igm.Name).Do()
	wantComputeError(t, err, 404, "notFound", "was not found")

	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/igm-slice"}))
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/igm-spread"}))
	_, err = cs.InstanceGroupManagers.Get(testProject, testZone, igm.Name).Do()
	wantComputeError(t, err, 404, "notFound", "was not found")
}

// TestComputeResourcePolicies creates, reads, lists and deletes workload policies through
// Compute Engine operations.
func TestComputeResourcePolicies(t *testing.T) {
	ctx := testCtx(t)
	cs := computeClient(t)
	t.Cleanup(func() { resetControl(t) })
	// Whatever happens to the test, its policies go with it, so that it runs again in the same
	// process (-count); the deletes the test checks come first, and these find nothing then.
	t.Cleanup(func() {
		for _, name := range []string{"rp-4x4x4", "rp-ha"} {
			if op, err := cs.ResourcePolicies.Delete(testProject, testRegion, name).Do(); err == nil {
				waitComputeOp(t, cs, op)
			}
		}
	})
	if err := testEmu.SetLatencies(ctx, map[string]time.Duration{"default": 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	wp := &compute.ResourcePolicy{Name: "rp-4x4x4", Description: "ironwood",
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT", AcceleratorTopology: "4x4x4"}}
	op, err := cs.ResourcePolicies.Insert(testProject, testRegion, wp).Do()
	if err != nil {
		t.Fatal(err)
	}
	key := "projects/" + testProject + "/regions/" + testRegion + "/resourcePolicies/rp-4x4x4"
	if op.Status != "PENDING" || op.OperationType != "insert" || op.Kind != "compute#operation" || !strings.HasSuffix(op.TargetLink, key) ||
		!strings.HasSuffix(op.Region, "/regions/"+testRegion) || !strings.HasPrefix(op.Name, "operation-") {
		t.Fatalf("insert operation %+v", op)
	}
	// Compute Engine serves the policy once its insert is done.
	_, err = cs.ResourcePolicies.Get(testProject, testRegion, "rp-4x4x4").Do()
	wantComputeError(t, err, 404, "notFound", "The resource '"+key+"' was not found")
	done, seen := waitComputeOp(t, cs, op)
	if strings.Join(seen, ",") != "PENDING,RUNNING,DONE" || done.Progress != 100 || done.EndTime == "" || done.Error != nil {
		t.Fatalf("operation went %v and ended %+v", seen, done)
	}
	got, err := cs.ResourcePolicies.Get(testProject, testRegion, "rp-4x4x4").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "rp-4x4x4" || got.Status != "READY" || got.Kind != "compute#resourcePolicy" || got.Description != "ironwood" ||
		!strings.HasSuffix(got.SelfLink, key) || !strings.HasSuffix(got.Region, "/regions/"+testRegion) || got.Id == 0 ||
		got.WorkloadPolicy.Type != "HIGH_THROUGHPUT" || got.WorkloadPolicy.AcceleratorTopology != "4x4x4" {
		t.Fatalf("policy %+v %+v", got, got.WorkloadPolicy)
	}

	// operations.wait returns once the operation is DONE.
	op, err = cs.ResourcePolicies.Insert(testProject, testRegion, &compute.ResourcePolicy{Name: "rp-ha",
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_AVAILABILITY"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if op, err = cs.RegionOperations.Wait(testProject, testRegion, op.Name).Do(); err != nil || op.Status != "DONE" {
		t.Fatalf("wait: %+v %v", op, err)
	}
	list, err := cs.ResourcePolicies.List(testProject, testRegion).Do()
	if err != nil {
		t.Fatal(err)
	}
	// Other tests of the package make policies of their own in the region.
	var listed []string
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, "rp-") {
			listed = append(listed, p.Name)
		}
	}
	if strings.Join(listed, ",") != "rp-4x4x4,rp-ha" {
		t.Fatalf("listed this test's policies %v, want rp-4x4x4 and rp-ha in order", listed)
	}

	// Compute Engine's refusals.
	_, err = cs.ResourcePolicies.Insert(testProject, testRegion, wp).Do()
	wantComputeError(t, err, 409, "alreadyExists", "The resource '"+key+"' already exists")
	for _, bad := range []*compute.ResourcePolicy{
		{Name: "Bad_Name", WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT"}},
		{Name: "rp-x", WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "FAST"}},
		{Name: "rp-x", WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_AVAILABILITY", AcceleratorTopology: "2x2x2"}},
		{Name: "rp-x", WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT", AcceleratorTopology: "2x2x2", MaxTopologyDistance: "BLOCK"}},
		{Name: "rp-x", WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT", AcceleratorTopology: "two"}},
	} {
		_, err = cs.ResourcePolicies.Insert(testProject, testRegion, bad).Do()
		wantComputeError(t, err, 400, "invalid", "Invalid value for field 'resource.")
	}
	_, err = cs.ResourcePolicies.Insert(testProject, "us-central2-b", wp).Do()
	wantComputeError(t, err, 404, "notFound", "regions/us-central2-b' was not found")

	// A failed operation: DONE with error.errors[], and no policy.
	if err := NewClient(testEmu.Endpoint(), testEmu.Token()).FailNextOperation(ctx, OperationFault{
		OperationType: "compute.resourcePolicies.insert", Target: "rp-doomed$", Status: "RESOURCE_EXHAUSTED",
		Reason: "QUOTA_EXCEEDED", Message: "Quota 'RESOURCE_POLICIES' exceeded. Limit: 2.0 in region us-central2."}); err != nil {
		t.Fatal(err)
	}
	op, err = cs.ResourcePolicies.Insert(testProject, testRegion, &compute.ResourcePolicy{Name: "rp-doomed",
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_AVAILABILITY"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	done, _ = waitComputeOp(t, cs, op)
	if done.Error == nil || len(done.Error.Errors) != 1 || done.Error.Errors[0].Code != "QUOTA_EXCEEDED" ||
		!strings.Contains(done.Error.Errors[0].Message, "RESOURCE_POLICIES") || done.HttpErrorStatusCode != 429 {
		t.Fatalf("failed operation %+v %+v", done, done.Error)
	}
	_, err = cs.ResourcePolicies.Get(testProject, testRegion, "rp-doomed").Do()
	wantComputeError(t, err, 404, "notFound", "was not found")

	for _, name := range []string{"rp-4x4x4", "rp-ha"} {
		op, err := cs.ResourcePolicies.Delete(testProject, testRegion, name).Do()
		if err != nil || op.OperationType != "delete" {
			t.Fatalf("delete %s: %+v %v", name, op, err)
		}
		if done, _ := waitComputeOp(t, cs, op); done.Error != nil {
			t.Fatalf("delete %s: %+v", name, done.Error)
		}
	}
	_, err = cs.ResourcePolicies.Get(testProject, testRegion, "rp-4x4x4").Do()
	wantComputeError(t, err, 404, "notFound", "was not found")
	_, err = cs.ResourcePolicies.Delete(testProject, testRegion, "rp-4x4x4").Do()
	wantComputeError(t, err, 404, "notFound", "was not found")
	_, err = cs.ZoneOperations.Get(testProject, testZone, "operation-1").Do()
	wantComputeError(t, err, 404, "notFound", "zones/"+testZone+"/operations/operation-1' was not found")
	_, err = cs.RegionOperations.Get(testProject, testRegion, op.Name+"x").Do()
	wantComputeError(t, err, 404, "notFound", "was not found")
}

// TestWorkloadPoliciesEnforced: a multi-host tpu7x slice names a workload policy of its project
// and region, takes its topology from it, and keeps it from being deleted.
func TestWorkloadPoliciesEnforced(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	cs := computeClient(t)
	ironwood := func(name, policy, topology string, nodes int32) *containerpb.NodePool {
		return tpuPool(name, "tpu7x-standard-4t", nodes, &containerpb.NodePool_PlacementPolicy{PolicyName: policy, TpuTopology: topology})
	}
	create := func(np *containerpb.NodePool) error {
		_, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: np})
		return err
	}

	err := create(ironwood("wp-missing", "ironwood-2x2x2", "2x2x2", 2))
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "resource policy \"ironwood-2x2x2\" (projects/"+testProject+"/regions/"+testRegion+"/resourcePolicies/ironwood-2x2x2) was not found")

	// One policy made over the control API (as a test fixture would), one through Compute Engine.
	ctl := NewClient(testEmu.Endpoint(), testEmu.Token())
	if err := ctl.CreateResourcePolicy(ctx, ResourcePolicy{Project: testProject, Region: testRegion, Name: "ironwood-2x2x2", AcceleratorTopology: "2x2x2"}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.CreateResourcePolicy(ctx, ResourcePolicy{Project: testProject, Region: testRegion, Name: "ironwood-2x2x2"}); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a second policy of the same name: %v", err)
	}
	op, err := cs.ResourcePolicies.Insert(testProject, testRegion, &compute.ResourcePolicy{Name: "no-topology",
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: "HIGH_THROUGHPUT"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	waitComputeOp(t, cs, op)

	err = create(ironwood("wp-no-topology", "no-topology", "2x2x2", 2))
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "does not support TPU topology with group placement policy and workload policy at the same time")
	err = create(ironwood("wp-mismatch", "ironwood-2x2x2", "2x2x4", 4))
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "TPU topology 2x2x4 differs from the accelerator topology 2x2x2 of workload policy")
	err = create(ironwood("wp-elsewhere", "projects/"+testProject+"/regions/us-east5/resourcePolicies/ironwood-2x2x2", "2x2x2", 2))
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "must be in the same project and region as the node pool")

	// The policy alone gives the slice its shape, as gcloud's --placement-policy does; partial and
	// full paths name it too.
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: ironwood("wp-slice", "ironwood-2x2x2", "", 2)}))
	np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/wp-slice"})
	if err != nil {
		t.Fatal(err)
	}
	if pp := np.PlacementPolicy; pp.PolicyName != "ironwood-2x2x2" || pp.TpuTopology != "2x2x2" || pp.Type != containerpb.NodePool_PlacementPolicy_TYPE_UNSPECIFIED {
		t.Fatalf("placement policy reported %v", pp)
	}
	igm, err := cs.InstanceGroupManagers.Get(testProject, testZone, path.Base(np.InstanceGroupUrls[0])).Do()
	if err != nil || igm.TargetSize != 2 || igm.ResourcePolicies == nil ||
		!strings.HasSuffix(igm.ResourcePolicies.WorkloadPolicy, "/regions/"+testRegion+"/resourcePolicies/ironwood-2x2x2") {
		t.Fatalf("the slice's manager: %+v %v", igm, err)
	}
	if _, err := rules.PlanNodePool(rules.ClusterFacts{Location: testZone, Locations: []string{testZone}, MasterVersion: rules.GKEVersions[0],
		Policies: testEmu.lookupForTest(testProject)}, ironwood("p", "regions/"+testRegion+"/resourcePolicies/ironwood-2x2x2", "", 2)); err != nil {
		t.Fatalf("a partial URL: %v", err)
	}

	// Compute Engine keeps a policy in use.
	_, err = cs.ResourcePolicies.Delete(testProject, testRegion, "ironwood-2x2x2").Do()
	wantComputeError(t, err, 400, "resourceInUseByAnotherResource",
		"The resource_policy resource 'projects/"+testProject+"/regions/"+testRegion+"/resourcePolicies/ironwood-2x2x2' is already being used by 'projects/"+testProject+"/zones/"+testZone+"/instanceGroupManagers/"+igm.Name+"'")
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/wp-slice"}))
	for _, name := range []string{"ironwood-2x2x2", "no-topology"} {
		op, err := cs.ResourcePolicies.Delete(testProject, testRegion, name).Do()
		if err != nil {
			t.Fatal(err)
		}
		waitComputeOp(t, cs, op)
	}
}

func (e *Emulator) lookupForTest(project string) rules.PolicyLookup {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.policyLookupLocked(project, testZone)
}

// TestResourcePoliciesPersist: a stateful emulator keeps its resource policies, and its DNS
// endpoint CA, across a restart.
func TestResourcePoliciesPersist(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	e, err := Start(ctx, Options{StateDir: dir, DefaultLatency: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateResourcePolicy(ctx, ResourcePolicy{Project: "p", Region: "us-east5", Name: "kept", AcceleratorTopology: "4x4x4"}); err != nil {
		t.Fatal(err)
	}
	ca := e.DNSEndpointCAPEM()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Start(ctx, Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cs, err := compute.NewService(ctx, option.WithEndpoint(e.Endpoint()+computePrefix),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.Token()})))
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.ResourcePolicies.Get("p", "us-east5", "kept").Do()
	if err != nil || got.WorkloadPolicy.AcceleratorTopology != "4x4x4" {
		t.Fatalf("after a restart: %+v %v", got, err)
	}
	if string(e.DNSEndpointCAPEM()) != string(ca) {
		t.Fatal("the DNS endpoint CA changed across a restart")
	}
}

// rawCompute sends a request to the emulator's Compute Engine and returns the status and body.
func rawCompute(t *testing.T, method, p string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, testEmu.Endpoint()+computePrefix+p, nil)
	req.Header.Set("Authorization", "Bearer "+testEmu.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestParseComputeRoute(t *testing.T) {
	p := computePrefix + "projects/p/"
	for _, tc := range []struct{ method, path, want string }{
		{"GET", p + "zones/z-a-b/instanceGroupManagers", "compute.instanceGroupManagers.list"},
		{"GET", p + "zones/z-a-b/instanceGroupManagers/g", "compute.instanceGroupManagers.get"},
		{"POST", p + "regions/r/resourcePolicies", "compute.resourcePolicies.insert"},
		{"GET", p + "regions/r/resourcePolicies", "compute.resourcePolicies.list"},
		{"GET", p + "regions/r/resourcePolicies/x", "compute.resourcePolicies.get"},
		{"DELETE", p + "regions/r/resourcePolicies/x", "compute.resourcePolicies.delete"},
		{"GET", p + "regions/r/operations/o", "compute.regionOperations.get"},
		{"POST", p + "regions/r/operations/o/wait", "compute.regionOperations.wait"},
		{"GET", p + "zones/z/operations/o", "compute.zoneOperations.get"},
		{"POST", p + "zones/z/operations/o/wait", "compute.zoneOperations.wait"},
	} {
		rt, err := parseComputeRoute(tc.method, tc.path)
		if err != nil || rt.method != tc.want || rt.project != "p" {
			t.Errorf("%s %s: %+v %v, want %s", tc.method, tc.path, rt, err, tc.want)
		}
	}
	for _, bad := range []struct{ method, path string }{
		{"GET", p + "regions/r/instanceGroupManagers"}, {"POST", p + "zones/z/instanceGroupManagers"},
		{"GET", p + "zones/z/resourcePolicies"}, {"PATCH", p + "regions/r/resourcePolicies/x"}, {"GET", p + "global/networks"},
	} {
		if _, err := parseComputeRoute(bad.method, bad.path); err == nil {
			t.Errorf("%s %s routed", bad.method, bad.path)
		}
	}
	if code, body := rawCompute(t, "GET", "projects/p/global/networks/default"); code != 404 || !strings.Contains(body, `"reason":"notFound"`) {
		t.Errorf("an unserved Compute Engine path: %d %s", code, body)
	}
}
