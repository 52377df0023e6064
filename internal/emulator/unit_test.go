package emulator

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

func TestParseRoute(t *testing.T) {
	p := "/v1/projects/p/locations/us-central2-b"
	tests := []struct {
		method, path, rpc string
		name              resourceName
	}{
		{"GET", p + "/serverConfig", "GetServerConfig", resourceName{Project: "p", Location: "us-central2-b"}},
		{"GET", p + "/clusters", "ListClusters", resourceName{Project: "p", Location: "us-central2-b"}},
		{"POST", p + "/clusters", "CreateCluster", resourceName{Project: "p", Location: "us-central2-b"}},
		{"PUT", p + "/clusters/c", "UpdateCluster", resourceName{Project: "p", Location: "us-central2-b", Cluster: "c"}},
		{"POST", p + "/clusters/c:setAddons", "SetAddonsConfig", resourceName{Project: "p", Location: "us-central2-b", Cluster: "c"}},
		{"DELETE", p + "/clusters/c/nodePools/n", "DeleteNodePool", resourceName{Project: "p", Location: "us-central2-b", Cluster: "c", NodePool: "n"}},
		{"POST", p + "/clusters/c/nodePools/n:setSize", "SetNodePoolSize", resourceName{Project: "p", Location: "us-central2-b", Cluster: "c", NodePool: "n"}},
		{"POST", p + "/operations/o:cancel", "CancelOperation", resourceName{Project: "p", Location: "us-central2-b", Operation: "o"}},
		{"GET", "/v1/projects/p/locations/-/clusters", "ListClusters", resourceName{Project: "p", Location: "-"}},
	}
	for _, tc := range tests {
		rt, err := parseRoute(tc.method, tc.path)
		if err != nil || rt.rpc != tc.rpc || rt.name != tc.name {
			t.Errorf("%s %s: got %+v %v, want %s %+v", tc.method, tc.path, rt, err, tc.rpc, tc.name)
		}
	}
	for _, bad := range []struct{ method, path string }{
		{"GET", "/v1/projects/p"}, {"PATCH", p + "/clusters/c"}, {"GET", p + "/clusters/c/nodePools/n/x"},
		{"GET", "/v1/projects//locations/l/clusters"}, {"POST", p + "/clusters/c:setLabels"},
	} {
		if _, err := parseRoute(bad.method, bad.path); err == nil {
			t.Errorf("%s %s: routed", bad.method, bad.path)
		}
	}
	if _, err := parseRoute("POST", p+"/clusters/c:setLabels"); err.Code != codes.Unimplemented {
		t.Errorf("an unmodelled custom method: %v", err)
	}
}

func TestNodeNames(t *testing.T) {
	prefix := nodeNamePrefix("a-very-long-cluster-name-indeed-40-chars", "a-very-long-pool-name-that-goes-on-and-on", "uid")
	for _, w := range []int{0, 7, 2303} {
		name := nodeName(prefix, w)
		if len(name) > 63 {
			t.Fatalf("%q is longer than a DNS label", name)
		}
		if got, ok := WorkerIndex(name); !ok || got != w {
			t.Fatalf("WorkerIndex(%q) = %d %v, want %d", name, got, ok, w)
		}
	}
	if nodeName(prefix, 2) > nodeName(prefix, 10) {
		t.Fatal("names do not sort in worker order")
	}
	if nodeNamePrefix("c", "p", "uid1") == nodeNamePrefix("c", "p", "uid2") {
		t.Fatal("two pools of the same name share node names")
	}
	if _, ok := WorkerIndex("kind-worker"); ok {
		t.Fatal("a foreign node name parsed")
	}
}

// TestRouteTables: every row of each table is reached by a path of its shape, and no two rows
// share a method, shape and verb (the later would hide the earlier).
func TestRouteTables(t *testing.T) {
	if len(gkeRouteIndex) != len(gkeRoutes) || len(computeRouteIndex) != len(computeRoutes) {
		t.Fatalf("rows with the same method, shape and verb: GKE %d of %d, Compute %d of %d",
			len(gkeRouteIndex), len(gkeRoutes), len(computeRouteIndex), len(computeRoutes))
	}
	for _, r := range gkeRoutes {
		path := "/v1/projects/p/locations/l/" + strings.ReplaceAll(r.shape, "*", "x")
		if r.verb != "" {
			path += ":" + r.verb
		}
		rt, err := parseRoute(r.method, path)
		if err != nil || rt.rpc != r.rpc || rt.run == nil {
			t.Errorf("%s %s: got %q %v, want %s", r.method, path, rt.rpc, err, r.rpc)
		}
	}
	for _, r := range computeRoutes {
		path := computePrefix + "projects/p/" + strings.ReplaceAll(r.shape, "*", "x")
		rt, err := parseComputeRoute(r.method, path)
		if err != nil || rt.method != r.id || rt.run == nil {
			t.Errorf("%s %s: got %q %v, want %s", r.method, path, rt.method, err, r.id)
		}
	}
}
