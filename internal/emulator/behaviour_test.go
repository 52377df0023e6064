package emulator

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	gcontainer "google.golang.org/api/container/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

func TestUnauthenticated(t *testing.T) {
	for _, path := range []string{"/v1/" + testLocation + "/clusters", controlPrefix + "requests"} {
		for _, header := range []string{"", "Bearer wrong", testEmu.Token()} {
			req, _ := http.NewRequest("GET", testEmu.Endpoint()+path, nil)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body apierr.Body
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != 401 || body.Error.Status != "UNAUTHENTICATED" || body.Error.Code != 401 {
				t.Fatalf("%s with %q: got %d %+v", path, header, resp.StatusCode, body)
			}
		}
	}
	_, err := restClient(t, "not-the-token").ListClusters(testCtx(t), &containerpb.ListClustersRequest{Parent: testLocation})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("REST client with a wrong token: want Unauthenticated, got %v", err)
	}
}

func TestServerConfig(t *testing.T) {
	sc, err := restClient(t, testEmu.Token()).GetServerConfig(testCtx(t), &containerpb.GetServerConfigRequest{Name: testLocation})
	if err != nil {
		t.Fatal(err)
	}
	def := tpu.MustParseVersion(sc.DefaultClusterVersion)
	tpu7x := mustGen(t, "tpu7x").MinGKEVersion
	if def.Compare(tpu7x) < 0 {
		t.Fatalf("default version %s below %s", sc.DefaultClusterVersion, tpu7x)
	}
	below, above := false, false
	for _, v := range sc.ValidMasterVersions {
		pv := tpu.MustParseVersion(v)
		if !pv.IsExact() {
			t.Fatalf("version %q is not exact", v)
		}
		below = below || pv.Compare(tpu.RayOperatorMinVersion) < 0
		above = above || pv.Compare(tpu7x) > 0
	}
	if !below || !above || len(sc.Channels) != 4 {
		t.Fatalf("versions %v (channels %d) must span the Ray and tpu7x minimums", sc.ValidMasterVersions, len(sc.Channels))
	}
	// The discovery client decodes the same document.
	dsc, err := discoveryClient(t).Projects.Locations.GetServerConfig(testLocation).Do()
	if err != nil || dsc.DefaultClusterVersion != sc.DefaultClusterVersion || dsc.Channels[0].Channel != "RAPID" {
		t.Fatalf("discovery client: %+v %v", dsc, err)
	}
}

func TestClusterErrors(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	ray := &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: true}}
	cpu := []*containerpb.NodePool{{Name: "system", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}}
	tests := []struct {
		name    string
		cluster *containerpb.Cluster
		http    int
		status  string
		msg     string
	}{
		{"bad name", &containerpb.Cluster{Name: "-bad", NodePools: cpu}, 400, "INVALID_ARGUMENT", "Must be a match of regex"},
		{"name too long", &containerpb.Cluster{Name: "c" + strings.Repeat("x", 40), NodePools: cpu}, 400, "INVALID_ARGUMENT", "40 characters"},
		{"unsupported version", &containerpb.Cluster{Name: "c1", InitialClusterVersion: "1.99.0-gke.1", NodePools: cpu}, 400, "INVALID_ARGUMENT", "unsupported"},
		{"ray add-on too old", &containerpb.Cluster{Name: "c1", InitialClusterVersion: "1.30.0-gke.1167000", AddonsConfig: ray, NodePools: cpu},
			400, "INVALID_ARGUMENT", "requires GKE version " + tpu.RayOperatorMinVersion.String()},
		{"cluster version too old for tpu7x", &containerpb.Cluster{Name: "c1", InitialClusterVersion: "1.33", NodePools: []*containerpb.NodePool{
			tpuPool("ironwood", "tpu7x-standard-4t", 1, nil)}}, 400, "INVALID_ARGUMENT", "requires GKE version " + mustGen(t, "tpu7x").MinGKEVersion.String()},
		{"no node pools", &containerpb.Cluster{Name: "c1"}, 400, "INVALID_ARGUMENT", "initial_node_count"},
		{"already exists", &containerpb.Cluster{Name: sharedClusterID, NodePools: cpu}, 409, "ALREADY_EXISTS", "Already exists"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: tc.cluster})
			wantGoogleError(t, err, tc.http, tc.status, tc.msg)
		})
	}
	_, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: testLocation + "/clusters/nope"})
	wantGoogleError(t, err, 404, "NOT_FOUND", "clusters/nope")
	if status.Code(err) != codes.NotFound {
		t.Fatalf("GetCluster of a missing cluster: %v", err)
	}
	_, err = c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: testLocation + "/clusters/nope"})
	wantGoogleError(t, err, 404, "NOT_FOUND", "clusters/nope")
	_, err = c.GetOperation(ctx, &containerpb.GetOperationRequest{Name: testLocation + "/operations/operation-1-2"})
	wantGoogleError(t, err, 404, "NOT_FOUND", "operation-1-2")

	// The discovery client decodes the same errors into *googleapi.Error.
	d := discoveryClient(t)
	_, err = d.Projects.Locations.Clusters.Get(testLocation + "/clusters/nope").Do()
	wantGoogleError(t, err, 404, "NOT_FOUND", "clusters/nope")
	_, err = d.Projects.Locations.Clusters.NodePools.Create(cluster, &gcontainer.CreateNodePoolRequest{NodePool: &gcontainer.NodePool{
		Name: "bad", InitialNodeCount: 1, Config: &gcontainer.NodeConfig{MachineType: "ct6e-standard-4t"},
		PlacementPolicy: &gcontainer.PlacementPolicy{Type: "COMPACT", TpuTopology: "2x2"},
	}}).Do()
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "TPU topology can't be specified with single-host TPU slice pool")
}

func TestCapacityStockoutAndQuota(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })

	// The zone has 8 v6e chips: a 16-chip slice is a stockout, an 8-chip one fits.
	if err := testEmu.SetCapacity(ctx, Capacity{Zone: testZone, Generation: "v6e", Chips: 8}); err != nil {
		t.Fatal(err)
	}
	op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("big", "ct6e-standard-4t", 4, compact("4x4"))})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := waitOp(t, c, op)
	if done.Error == nil || done.Error.Code != int32(codes.ResourceExhausted) ||
		!strings.Contains(done.Error.Message, "does not have enough resources available to fulfill the request") ||
		len(done.NodepoolConditions) != 1 || done.NodepoolConditions[0].Code != containerpb.StatusCondition_GCE_STOCKOUT { //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		t.Fatalf("want a GCE_STOCKOUT operation error, got %v / %v", done.Error, done.NodepoolConditions) //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
	np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/big"})
	if err != nil || np.Status != containerpb.NodePool_ERROR || !strings.Contains(np.StatusMessage, "enough resources") { //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		t.Fatalf("stocked-out pool: %v %v", np, err)
	}
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/big"}))
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("fits", "ct6e-standard-8t", 1, nil)}))

	// A project quota of 12 v6e chips: 8 are in use, 8 more are refused at once.
	if err := testEmu.SetQuota(ctx, Quota{Project: testProject, Generation: "v6e", Chips: 12}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("over", "ct6e-standard-8t", 1, nil)})
	ge := wantGoogleError(t, err, 429, "RESOURCE_EXHAUSTED", "Quota 'TPU_V6E_CHIPS' exceeded")
	if status.Code(err) != codes.ResourceExhausted || ge.Reason != "GCE_QUOTA_EXCEEDED" {
		t.Fatalf("quota: code %s reason %q", status.Code(err), ge.Reason)
	}
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/fits"}))
}

// resetControl restores the shared emulator's control settings and capacity without deleting clusters.
func resetControl(t *testing.T) {
	t.Helper()
	testEmu.ctl.mu.Lock()
	testEmu.ctl.resetLocked()
	testEmu.ctl.mu.Unlock()
	testEmu.capacity.reset()
}

func TestFaultsAndRequestLog(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })
	ctl := NewClient(testEmu.Endpoint(), testEmu.Token()) // the control API over HTTP, as a standalone user has it

	// One UNAVAILABLE: the REST client retries GetCluster and succeeds; the log shows both tries.
	if _, err := ctl.InjectFault(ctx, Fault{Method: "GET", Path: "/clusters/shared$", Status: "UNAVAILABLE", Times: 1}); err != nil {
		t.Fatal(err)
	}
	before, _ := ctl.Counters(ctx)
	if _, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster}); err != nil {
		t.Fatalf("GetCluster after one UNAVAILABLE: %v", err)
	}
	after, _ := ctl.Counters(ctx)
	if after["GetCluster"]-before["GetCluster"] != 2 {
		t.Fatalf("GetCluster counter went from %d to %d, want two tries", before["GetCluster"], after["GetCluster"])
	}
	reqs, err := ctl.Requests(ctx)
	if err != nil || len(reqs) < 2 {
		t.Fatalf("request log: %v %v", reqs, err)
	}
	last, prev := reqs[len(reqs)-1], reqs[len(reqs)-2]
	if prev.Status != 503 || last.Status != 200 || last.RPC != "GetCluster" || last.Method != "GET" || !strings.HasSuffix(last.Path, "/clusters/shared") {
		t.Fatalf("request log tail: %+v %+v", prev, last)
	}

	// A fault until cleared, by RPC, with a Google error both clients decode.
	if _, err := testEmu.InjectFault(ctx, Fault{RPC: "ListClusters", Status: "PERMISSION_DENIED", Message: "Required 'container.clusters.list' permission"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err := c.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: testLocation})
		wantGoogleError(t, err, 403, "PERMISSION_DENIED", "container.clusters.list")
		if status.Code(err) != codes.PermissionDenied {
			t.Fatal(err)
		}
	}
	_, err = discoveryClient(t).Projects.Locations.Clusters.List(testLocation).Do()
	wantGoogleError(t, err, 403, "PERMISSION_DENIED", "container.clusters.list")
	if err := ctl.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: testLocation}); err != nil {
		t.Fatal(err)
	}

	// The next CREATE_NODE_POOL fails as a stockout; the one after succeeds.
	if err := ctl.FailNextOperation(ctx, OperationFault{OperationType: "CREATE_NODE_POOL", Status: "RESOURCE_EXHAUSTED",
		Reason: "GCE_STOCKOUT", Message: "The zone 'projects/raytpu-test/zones/us-central2-b' does not have enough resources available to fulfill the request."}); err != nil {
		t.Fatal(err)
	}
	op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("doomed", "ct5lp-hightpu-4t", 1, nil)})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := waitOp(t, c, op)
	if done.Error == nil || done.Error.Code != int32(codes.ResourceExhausted) || done.NodepoolConditions[0].Code != containerpb.StatusCondition_GCE_STOCKOUT { //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		t.Fatalf("injected operation failure: %v", done)
	}
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/doomed"}))
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("lucky", "ct5lp-hightpu-4t", 1, nil)}))
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/lucky"}))

	// A probabilistic fault fails about that share of requests.
	if _, err := testEmu.InjectFault(ctx, Fault{Path: "/serverConfig$", Status: "INTERNAL", Probability: 0.5}); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := 0; i < 60; i++ {
		resp := rawGet(t, "/v1/"+testLocation+"/serverConfig")
		if resp == 500 {
			failed++
		}
	}
	if failed < 10 || failed > 50 {
		t.Fatalf("a 0.5 fault failed %d of 60 requests", failed)
	}
	if err := ctl.SetLatencies(ctx, map[string]time.Duration{"default": 50 * time.Millisecond, "CREATE_CLUSTER": time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := testEmu.ctl.latency("", "CREATE_CLUSTER"); got != time.Second {
		t.Fatalf("latency set over HTTP: %s", got)
	}
	// One cluster's latencies come first for it, and for it only.
	slow := testLocation + "/clusters/slow"
	if err := ctl.SetClusterLatencies(ctx, slow, map[string]time.Duration{"default": 3 * time.Second, "CREATE_CLUSTER": 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cluster, opType string
		want            time.Duration
	}{
		{slow, "CREATE_CLUSTER", 2 * time.Second},
		{slow, "CREATE_NODE_POOL", 3 * time.Second},
		{testLocation + "/clusters/other", "CREATE_CLUSTER", time.Second},
		{testLocation + "/clusters/other", "CREATE_NODE_POOL", 50 * time.Millisecond},
	} {
		if got := testEmu.ctl.latency(c.cluster, c.opType); got != c.want {
			t.Errorf("latency of %s on %s = %s, want %s", c.opType, c.cluster, got, c.want)
		}
	}
	if err := ctl.SetClusterLatencies(ctx, "slow", map[string]time.Duration{"default": time.Second}); err == nil {
		t.Fatal("a cluster that is no cluster name accepted")
	}
	if err := ctl.SetLatencies(ctx, map[string]time.Duration{"NOT_A_TYPE": time.Second}); err == nil {
		t.Fatal("unknown operation type accepted")
	}
}

func rawGet(t *testing.T, path string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", testEmu.Endpoint()+path, nil)
	req.Header.Set("Authorization", "Bearer "+testEmu.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestResizeAndUpdateCPUPool(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	name := cluster + "/nodePools/cpu"
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("cpu", "n2-standard-8", 1, nil)}))
	op := mustSucceed(t, c)(c.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: name, NodeCount: 3}))
	if op.OperationType != containerpb.Operation_SET_NODE_POOL_SIZE {
		t.Fatalf("operation type %s", op.OperationType)
	}
	op = mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name,
		Labels: &containerpb.NodeLabels{Labels: map[string]string{"team": "ml"}}}))
	if op.OperationType != containerpb.Operation_UPGRADE_NODES {
		t.Fatalf("operation type %s", op.OperationType)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=cpu"})
	if err != nil || len(nodes.Items) != 3 {
		t.Fatalf("nodes after resize: %d %v", len(nodes.Items), err)
	}
	for _, n := range nodes.Items {
		if n.Labels["team"] != "ml" || n.Labels[tpu.LabelInstanceType] != "n2-standard-8" {
			t.Fatalf("node labels %v", n.Labels)
		}
	}
	np, _ := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name})
	if np.Config.Labels["team"] != "ml" || np.Status != containerpb.NodePool_RUNNING {
		t.Fatalf("pool after update: %v", np)
	}
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: name}))
}

// TestClusterCreateDelete runs a second cluster through its whole life with the discovery client
// and checks that deleting it stops its kube-apiserver.
func TestClusterCreateDelete(t *testing.T) {
	c := restClient(t, testEmu.Token())
	d := discoveryClient(t)
	ctx := testCtx(t)
	parent := "projects/raytpu-other/locations/us-east5"
	op, err := d.Projects.Locations.Clusters.Create(parent, &gcontainer.CreateClusterRequest{Cluster: &gcontainer.Cluster{
		Name: "life", InitialNodeCount: 1, NodeConfig: &gcontainer.NodeConfig{MachineType: "e2-standard-4"},
		ReleaseChannel: &gcontainer.ReleaseChannel{Channel: "EXTENDED"}, InitialClusterVersion: "1.30.0-gke.1167000",
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if op.OperationType != "CREATE_CLUSTER" || op.Status != "PENDING" {
		t.Fatalf("create operation %+v", op)
	}
	name := parent + "/clusters/life"
	cl, err := d.Projects.Locations.Clusters.Get(name).Do()
	if err != nil || cl.Status != "PROVISIONING" {
		t.Fatalf("cluster while provisioning: %v %v", cl.Status, err)
	}
	for op.Status != "DONE" {
		time.Sleep(50 * time.Millisecond)
		if op, err = d.Projects.Locations.Operations.Get(parent + "/operations/" + op.Name).Do(); err != nil {
			t.Fatal(err)
		}
	}
	if op.Error != nil {
		t.Fatalf("create failed: %+v", op.Error)
	}
	cl, err = d.Projects.Locations.Clusters.Get(name).Do()
	if err != nil || cl.Status != "RUNNING" || cl.CurrentMasterVersion != "1.30.0-gke.1167000" ||
		len(cl.NodePools) != 1 || cl.NodePools[0].Name != "default-pool" || len(cl.Locations) != 3 {
		t.Fatalf("cluster: %+v %v", cl, err)
	}
	// The Ray add-on needs a newer cluster: the cluster upgrades, then turns it on.
	enableRay := &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{
		DesiredAddonsConfig: &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: true}}}}
	_, err = c.UpdateCluster(ctx, enableRay)
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "requires GKE version "+tpu.RayOperatorMinVersion.String())
	_, err = c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.29"}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "downgrades are not supported")
	up := mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.33"}}))
	if up.OperationType != containerpb.Operation_UPGRADE_MASTER {
		t.Fatalf("upgrade operation type %s", up.OperationType)
	}
	if got, _ := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name}); got.GetCurrentMasterVersion() != "1.33.5-gke.1308000" {
		t.Fatalf("version after upgrading to 1.33: %s", got.GetCurrentMasterVersion())
	}
	op2 := mustSucceed(t, c)(c.UpdateCluster(ctx, enableRay))
	if op2.OperationType != containerpb.Operation_UPDATE_CLUSTER {
		t.Fatalf("update operation type %s", op2.OperationType)
	}

	dop, err := d.Projects.Locations.Clusters.Delete(name).Do()
	if err != nil {
		t.Fatal(err)
	}
	cl, err = d.Projects.Locations.Clusters.Get(name).Do()
	if err != nil || cl.Status != "STOPPING" {
		t.Fatalf("cluster while deleting: %v %v", clusterStatus(cl), err)
	}
	_, err = d.Projects.Locations.Clusters.NodePools.Create(name, &gcontainer.CreateNodePoolRequest{NodePool: &gcontainer.NodePool{Name: "late", InitialNodeCount: 1}}).Do()
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "incompatible operation "+dop.Name)
	pb, _ := c.GetOperation(ctx, &containerpb.GetOperationRequest{Name: parent + "/operations/" + dop.Name})
	mustSucceed(t, c)(pb, nil)
	_, err = c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	wantGoogleError(t, err, 404, "NOT_FOUND", "clusters/life")
	// The dial is expected to fail: its second running out on a busy machine cannot fail the test.
	conn, err := net.DialTimeout("tcp", cl.Endpoint, time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("the kube-apiserver of a deleted cluster still listens on %s", cl.Endpoint)
	}
}

func clusterStatus(c *gcontainer.Cluster) string {
	if c == nil {
		return ""
	}
	return c.Status
}

// TestClusterWithTPUPoolStockout creates a cluster whose TPU pool does not fit its zone: the
// operation ends with GCE_STOCKOUT, the cluster and the pool in ERROR, and the cluster can be
// deleted.
func TestClusterWithTPUPoolStockout(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })
	const zone = "europe-west4-a"
	parent := "projects/" + testProject + "/locations/" + zone
	if err := testEmu.SetCapacity(ctx, Capacity{Zone: zone, Generation: "v5e", Chips: 0}); err != nil {
		t.Fatal(err)
	}
	op, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: parent, Cluster: &containerpb.Cluster{
		Name: "stockout", NodePools: []*containerpb.NodePool{tpuPool("v5e", "ct5lp-hightpu-4t", 4, compact("4x4"))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := waitOp(t, c, op)
	if done.Error == nil || !strings.Contains(done.Error.Message, "does not have enough resources") {
		t.Fatalf("want a stockout, got %v", done.Error)
	}
	name := parent + "/clusters/stockout"
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil || cl.Status != containerpb.Cluster_ERROR || cl.NodePools[0].Status != containerpb.NodePool_ERROR {
		t.Fatalf("cluster after a stockout: %v %v", cl, err)
	}
	_, err = c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: name, NodePool: tpuPool("more", "e2-standard-4", 1, nil)})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "ERROR")
	mustSucceed(t, c)(c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: name}))
}
