package provider

import (
	"strings"
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

func TestRayPlacementProblems(t *testing.T) {
	pod := func(replica, node, pool string) kube.RayPod {
		return kube.RayPod{Group: "g", Replica: replica, Node: node, NodePool: pool, Running: node != ""}
	}
	head := kube.RayPod{Head: true, Running: true}
	want := map[string]groupExpectation{"g": {replicas: 2, hosts: 2, pools: []string{"a", "b"}}}
	tests := []struct {
		name    string
		pods    []kube.RayPod
		problem string // empty: none
	}{
		{"one slice per replica", []kube.RayPod{head, pod("r1", "a-0", "a"), pod("r1", "a-1", "a"), pod("r2", "b-0", "b"), pod("r2", "b-1", "b")}, ""},
		{"a replica over two slices", []kube.RayPod{head, pod("r1", "a-0", "a"), pod("r1", "b-1", "b"), pod("r2", "b-0", "b"), pod("r2", "a-1", "a")}, "not one slice"},
		{"two workers on one host", []kube.RayPod{head, pod("r1", "a-0", "a"), pod("r1", "a-0", "a"), pod("r2", "b-0", "b"), pod("r2", "b-1", "b")}, "two Pods on host a-0"},
		{"two replicas on one slice", []kube.RayPod{head, pod("r1", "a-0", "a"), pod("r1", "a-1", "a"), pod("r2", "a-2", "a"), pod("r2", "a-3", "a")}, "share slice a"},
		{"a slice not the group's", []kube.RayPod{head, pod("r1", "c-0", "c"), pod("r1", "c-1", "c"), pod("r2", "b-0", "b"), pod("r2", "b-1", "b")}, "not one of its slices"},
		// Unscheduled Pods are the wait's business, not a placement problem.
		{"pending", []kube.RayPod{head, pod("r1", "", ""), pod("r1", "", ""), pod("r2", "b-0", "b"), pod("r2", "b-1", "b")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(placementProblems(tc.pods, want), "; ")
			if (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
				t.Fatalf("problems %q, want one saying %q", got, tc.problem)
			}
			running := tc.name != "pending"
			if allRunning(tc.pods, want) != running {
				t.Fatalf("allRunning = %v, want %v", !running, running)
			}
		})
	}
	if allRunning([]kube.RayPod{pod("r1", "a-0", "a"), pod("r1", "a-1", "a"), pod("r2", "b-0", "b"), pod("r2", "b-1", "b")}, want) {
		t.Fatal("running without a head")
	}
}

// A group of a shape may run on any pool of that shape, an auto-provisioned one included, but not
// on the slices of the RayCluster's other groups.
func TestRayPlacementOfAShapeGroup(t *testing.T) {
	want := map[string]groupExpectation{"g": {replicas: 1, hosts: 2, avoid: []string{"a", "b"}}}
	pods := func(pool string) []kube.RayPod {
		return []kube.RayPod{{Head: true, Running: true},
			{Group: "g", Replica: "r1", Node: pool + "-0", NodePool: pool, Running: true},
			{Group: "g", Replica: "r1", Node: pool + "-1", NodePool: pool, Running: true}}
	}
	if got := placementProblems(pods("nap-ct6e-standa-4t-x"), want); len(got) != 0 {
		t.Errorf("on an auto-provisioned pool: %q", got)
	}
	if got := strings.Join(placementProblems(pods("a"), want), "; "); !strings.Contains(got, "a slice of another worker group") {
		t.Errorf("on another group's slice: %q", got)
	}
}

func TestParseRayClusterImportID(t *testing.T) {
	full := "projects/p/locations/us-east5-b/clusters/c"
	for id, want := range map[string]string{
		full + "/rayClusters/ns/rc": full + " ns rc",
		full + "/ns/rc":             full + " ns rc",
		"p/us-east5-b/c/ns/rc":      full + " ns rc",
		"us-east5-b/c/ns/rc":        "projects/default-project/locations/us-east5-b/clusters/c ns rc",
		"us-east5-b/c/rc":           "",
		full + "/rayClusters/ns":    "",
		"p/us-east5-b/c/ns/Not_OK":  "",
	} {
		c, ns, name, err := rayClusterKind.parseImportID(id, "default-project")
		got := c.String() + " " + ns + " " + name
		if err != nil {
			got = ""
		}
		if got != want {
			t.Errorf("%s: got %q (%v), want %q", id, got, err, want)
		}
	}
}
