package provider

import (
	"sort"
	"strings"
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

func names(pods []kube.RayPod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// A group leaves its replicas only whole: those on the slices it no longer has, then, when it
// has more than it is to have, the ones not running first.
func TestLeavingReplicas(t *testing.T) {
	pod := func(name, replica, pool string, running bool) kube.RayPod {
		return kube.RayPod{Name: name, Group: "g", Replica: replica, NodePool: pool, Node: pool + "-node", Running: running}
	}
	pods := []kube.RayPod{{Name: "head", Head: true},
		pod("a0", "ra", "a", true), pod("a1", "ra", "a", true),
		pod("b0", "rb", "b", true), pod("b1", "rb", "b", true),
		pod("c0", "rc", "c", false), pod("c1", "rc", "c", true)}
	slice := func(name string) groupSlice { return groupSlice{id: gke.NodePoolID{Name: name}} }
	claim := &kube.SliceClaim{Group: "g"}
	group := func(replicas int, claim *kube.SliceClaim, slices ...string) []resolvedGroup {
		g := resolvedGroup{RayWorkerGroup: kube.RayWorkerGroup{Name: "g", Replicas: replicas, Claim: claim}}
		for _, s := range slices {
			g.slices = append(g.slices, slice(s))
		}
		return []resolvedGroup{g}
	}
	for what, tc := range map[string]struct {
		groups []resolvedGroup
		want   string
	}{
		"slice b leaves":              {group(2, claim, "a", "c"), "b0 b1"},
		"nothing leaves":              {group(3, claim, "a", "b", "c"), ""},
		"a shape group of 2 replicas": {group(2, nil), "c0 c1"},
		"a shape group of 1 replica":  {group(1, nil), "b0 b1 c0 c1"},
	} {
		if got := names(leavingReplicas(pods, tc.groups)); got != tc.want {
			t.Errorf("%s: %q leave, want %q", what, got, tc.want)
		}
	}
}

// A stale head restarts everything; a stale worker its whole replica; a Pod of a group the
// RayCluster no longer has goes; a Pod without a stamp only where the update changed its part.
func TestOutdatedPods(t *testing.T) {
	tpl := kube.Templates{Head: "h1", Groups: map[string]string{"g": "g1", "k": "k1"}}
	pod := func(name, group, replica, stamp string) kube.RayPod {
		return kube.RayPod{Name: name, Group: group, Replica: replica, Template: stamp, Head: group == ""}
	}
	current := []kube.RayPod{pod("head", "", "", "h1"), pod("g0", "g", "r1", "g1"), pod("g1", "g", "r1", "g1"), pod("k0", "k", "k0", "k1")}
	for what, tc := range map[string]struct {
		pods    []kube.RayPod
		restart restartPlan
		want    string
	}{
		"all current":        {current, restartPlan{}, ""},
		"a stale head":       {append([]kube.RayPod{pod("old-head", "", "", "h0")}, current[1:]...), restartPlan{}, "g0 g1 k0 old-head"},
		"one stale host":     {append(current[:2:2], pod("g1", "g", "r1", "g0"), current[3]), restartPlan{}, "g0 g1"},
		"a group gone":       {append(current, pod("x0", "x", "x0", "x1")), restartPlan{}, "x0"},
		"unstamped, kept":    {append(current[:3:3], pod("k0", "k", "k0", "")), restartPlan{}, ""},
		"unstamped, changed": {append(current[:3:3], pod("k0", "k", "k0", "")), restartPlan{groups: map[string]bool{"k": true}}, "k0"},
	} {
		if got := names(outdated(tc.pods, tpl, tc.restart)); got != tc.want {
			t.Errorf("%s: %q restart, want %q", what, got, tc.want)
		}
	}
}

// A slice replaced under its id shows in the plan: gone, of another shape, or without its claim.
func TestSlicesReplaced(t *testing.T) {
	small, err := tpu.NewSlice("v6e", "2x2", 0)
	if err != nil {
		t.Fatal(err)
	}
	large, err := tpu.NewSlice("v6e", "2x4", 4)
	if err != nil {
		t.Fatal(err)
	}
	claim := kube.SliceClaim{Namespace: "default", Cluster: "rc", Group: "g"}
	settings := groupSettings([]resolvedGroup{{RayWorkerGroup: kube.RayWorkerGroup{Name: "g", NumOfHosts: small.Hosts,
		ChipsPerHost: small.ChipsPerHost(), Replicas: 1}, slice: small}}, "rc", "2.55.0")
	pool := func(labels map[string]string) []groupSlice {
		return []groupSlice{{id: gke.NodePoolID{Name: "one"}, labels: labels}}
	}
	for _, c := range []struct {
		name   string
		group  string
		shape  *tpu.Slice
		slices []groupSlice
		want   sliceChange
	}{
		{"the same pool", "g", small, pool(claim.Labels()), slicesSame},
		{"a group the state lacks", "h", large, pool(nil), slicesSame},
		{"the pool is gone", "g", nil, nil, slicesReshaped},
		{"another shape", "g", large, pool(claim.Labels()), slicesReshaped},
		{"a new pool without the claim", "g", small, pool(map[string]string{"other": "label"}), slicesUnclaimed},
		{"a pool claimed by another group", "g", small, pool(kube.SliceClaim{Namespace: "default", Cluster: "rc", Group: "x"}.Labels()), slicesUnclaimed},
	} {
		if got := slicesReplaced(settings, kube.SliceClaim{Namespace: "default", Cluster: "rc", Group: c.group}, 1, c.shape, c.slices); got != c.want {
			t.Errorf("%s: slicesReplaced = %v, want %v", c.name, got, c.want)
		}
	}
}
