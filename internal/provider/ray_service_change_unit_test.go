package provider

import (
	"strings"
	"testing"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// A failed create is tainted and replaced; a failed update is not, and the message says so.
func TestNextApply(t *testing.T) {
	if got := nextApply("creating raytpu_ray_service (x)"); !strings.Contains(got, "taints") {
		t.Errorf("after a create: %q", got)
	}
	if got := nextApply("updating raytpu_ray_service (x)"); strings.Contains(got, "taint") || !strings.Contains(got, "tries the update again") {
		t.Errorf("after an update: %q", got)
	}
}

// The slices listed in one run: a group of another RayCluster or RayService listing one again is
// named; the same RayCluster's groups, and the same group planned again, are not.
func TestPlannedSlices(t *testing.T) {
	var p plannedSlices
	id := gke.NodePoolID{Cluster: gke.ClusterID{Project: "p", Location: "l", Name: "c"}, Name: "a"}
	svc := kube.SliceClaim{Namespace: "default", Cluster: kube.RayServiceClaimer("llm"), Group: "tpu"}
	if _, ok := p.claim(id, svc); ok {
		t.Fatal("first claim refused")
	}
	if _, ok := p.claim(id, svc); ok {
		t.Error("the same group planned again is refused")
	}
	if _, ok := p.claim(id, kube.SliceClaim{Namespace: "default", Cluster: kube.RayServiceClaimer("llm"), Group: "other"}); ok {
		t.Error("a group of the same RayService is refused (checkShapesApart's to judge)")
	}
	other := kube.SliceClaim{Namespace: "default", Cluster: "train", Group: "t"}
	if held, ok := p.claim(id, other); !ok || !held.SameRayCluster(svc) {
		t.Errorf("another RayCluster's group: held %v, %v; want %v", held, ok, svc)
	}
}

func TestWithoutAndUnion(t *testing.T) {
	if got := without([]string{"a", "b", "c"}, []string{"b"}); strings.Join(got, ",") != "a,c" {
		t.Errorf("without = %v", got)
	}
	if got := union([]string{"a", "b"}, []string{"c", "a"}); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("union = %v", got)
	}
}

// Each row of the page's table of changes is classified as KubeRay's rule classifies it.
func TestServiceChangeKindsAsKubeRayClassifies(t *testing.T) {
	base := func() kube.RayServiceSpec {
		return kube.RayServiceSpec{
			RayClusterSpec: kube.RayClusterSpec{Namespace: "default", Name: "llm", RayVersion: "2.55.0", Image: "rayproject/ray:2.55.0-py310-tpu",
				Head: kube.RayHead{CPU: "1", Memory: "2Gi", ServiceType: "ClusterIP"},
				Groups: []kube.RayWorkerGroup{{Name: "tpu", Replicas: 2, NumOfHosts: 4, ChipsPerHost: 4, MegascaleSlices: 2,
					Claim: &kube.SliceClaim{Namespace: "default", Cluster: kube.RayServiceClaimer("llm"), Group: "tpu"}}}},
			ServeConfigV2: "applications: []\n",
		}
	}
	for _, k := range serviceChangeKinds {
		s := base()
		k.mutate(&s)
		before, err := kube.RayServiceObject(base())
		if err != nil {
			t.Fatal(err)
		}
		after, err := kube.RayServiceObject(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := kube.ClassifyConfig(before.Spec.RayClusterSpec, after.Spec.RayClusterSpec); err != nil || got != k.class {
			t.Errorf("%s: %v (%v), the table says %v", k.change, got, err, k.class)
		}
	}
	if rows := (&rayServiceResource{}).Changes(); len(rows) != len(serviceChangeKinds) || rows[1].AppliedBy != classAppliedBy[kube.ConfigSame] {
		t.Errorf("rows %+v", rows)
	}
}
