package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestRayClusterObjectKeepsGroupsOnTheirSlices: a slice group is held to its own node pools (by
// node selector for one slice, which GKE's TPU webhook leaves alone), and a group of a shape keeps
// off them, so that it never lands on another group's slice that happens to carry the same labels
// (a single-host v6e-8 is labelled 2x4). The shape's own selector is not changed.
func TestRayClusterObjectKeepsGroupsOnTheirSlices(t *testing.T) {
	shape := map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"}
	rc, err := RayClusterObject(RayClusterSpec{
		Name: "rc", Namespace: "default", Image: "rayproject/ray:2.55.0-py310-tpu",
		Groups: []RayWorkerGroup{
			{Name: "single", Replicas: 1, NumOfHosts: 1, ChipsPerHost: 8, NodeSelector: shape, NodePools: []string{"v6e-8"}},
			{Name: "multi", Replicas: 2, NumOfHosts: 4, ChipsPerHost: 4, NodeSelector: shape, NodePools: []string{"a", "b"}},
			{Name: "on-demand", Replicas: 1, NumOfHosts: 2, ChipsPerHost: 4, NodeSelector: shape},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	pools := func(i int) (corev1.NodeSelectorOperator, []string) {
		spec := rc.Spec.WorkerGroupSpecs[i].Template.Spec
		if pool := spec.NodeSelector["cloud.google.com/gke-nodepool"]; pool != "" {
			if spec.Affinity != nil {
				t.Errorf("group %d: node selector and affinity", i)
			}
			return "selector", []string{pool}
		}
		a := spec.Affinity
		if a == nil {
			return "", nil
		}
		e := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
		if e.Key != "cloud.google.com/gke-nodepool" {
			t.Fatalf("group %d: affinity on %s", i, e.Key)
		}
		return e.Operator, e.Values
	}
	for i, want := range []struct {
		op    corev1.NodeSelectorOperator
		pools []string
	}{
		{"selector", []string{"v6e-8"}},
		{corev1.NodeSelectorOpIn, []string{"a", "b"}},
		{corev1.NodeSelectorOpNotIn, []string{"v6e-8", "a", "b"}},
	} {
		if op, got := pools(i); op != want.op || !reflect.DeepEqual(got, want.pools) {
			t.Errorf("group %s: %s %v, want %s %v", rc.Spec.WorkerGroupSpecs[i].GroupName, op, got, want.op, want.pools)
		}
	}

	if len(shape) != 2 {
		t.Errorf("the group's selector map was changed: %v", shape)
	}
	alone, err := RayClusterObject(RayClusterSpec{Name: "rc", Namespace: "default", Image: "i",
		Groups: []RayWorkerGroup{{Name: "on-demand", Replicas: 1, NumOfHosts: 2, ChipsPerHost: 4, NodeSelector: shape}}})
	if err != nil {
		t.Fatal(err)
	}
	if a := alone.Spec.WorkerGroupSpecs[0].Template.Spec.Affinity; a != nil {
		t.Errorf("a RayCluster of shapes only got node affinity %+v", a)
	}
}

// The Pod settings reach the head and the worker template, and an extra node selector never
// replaces a key raytpu derived from the slice.
func TestRayClusterObjectCarriesPodSettings(t *testing.T) {
	shape := map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
	pod := PodSettings{
		Image: "mine", Env: map[string]string{"B": "2", "A": "1"}, ServiceAccountName: "sa",
		Labels: map[string]string{"team": "ml"}, Annotations: map[string]string{"a": "b"},
		NodeSelector: map[string]string{"cloud.google.com/gke-tpu-topology": "2x2", "disk": "ssd"},
		Volumes:      []Volume{{Name: "shm", MountPath: "/dev/shm", Source: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
	}
	rc, err := RayClusterObject(RayClusterSpec{Name: "rc", Namespace: "default", Image: "ray",
		Head:   RayHead{Pod: PodSettings{ServiceAccountName: "head-sa"}},
		Groups: []RayWorkerGroup{{Name: "g", Replicas: 1, NumOfHosts: 4, ChipsPerHost: 4, NodeSelector: shape, NodePools: []string{"a"}, Pod: pod}},
	})
	if err != nil {
		t.Fatal(err)
	}
	head, w := rc.Spec.HeadGroupSpec.Template, rc.Spec.WorkerGroupSpecs[0].Template
	c := w.Spec.Containers[0]
	switch {
	case head.Spec.ServiceAccountName != "head-sa" || head.Spec.Containers[0].Image != "ray":
		t.Errorf("head: %+v", head.Spec)
	case c.Image != "mine" || w.Spec.ServiceAccountName != "sa":
		t.Errorf("worker image %q, service account %q", c.Image, w.Spec.ServiceAccountName)
	case !reflect.DeepEqual(c.Env, []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}):
		t.Errorf("env %v, want A and B in order", c.Env)
	case w.Labels["team"] != "ml" || w.Annotations["a"] != "b":
		t.Errorf("metadata %v %v", w.Labels, w.Annotations)
	case w.Spec.NodeSelector["cloud.google.com/gke-tpu-topology"] != "4x4" || w.Spec.NodeSelector["disk"] != "ssd":
		t.Errorf("node selector %v: the slice's topology must stay and the extra key be added", w.Spec.NodeSelector)
	case len(w.Spec.Volumes) != 1 || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/dev/shm":
		t.Errorf("volumes %v, mounts %v", w.Spec.Volumes, c.VolumeMounts)
	}
	if shape["cloud.google.com/gke-tpu-topology"] != "4x4" || len(shape) != 2 {
		t.Errorf("the group's selector map was changed: %v", shape)
	}
}
