package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestRayClusterObjectKeepsGroupsOnTheirSlices: a slice group is held to the slices of its claim
// by node selector, which GKE's TPU webhook leaves alone, whether it has one slice or several, and
// a group of a shape keeps off every claimed slice, so that it never lands on another group's
// slice that happens to carry the same labels (a single-host v6e-8 is labelled 2x4). The shape's
// own selector is not changed.
func TestRayClusterObjectKeepsGroupsOnTheirSlices(t *testing.T) {
	shape := map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"}
	claim := func(group string) *SliceClaim { return &SliceClaim{Namespace: "default", Cluster: "rc", Group: group} }
	rc, err := RayClusterObject(RayClusterSpec{
		Name: "rc", Namespace: "default", Image: "rayproject/ray:2.55.0-py310-tpu",
		Groups: []RayWorkerGroup{
			{Name: "single", Replicas: 1, NumOfHosts: 1, ChipsPerHost: 8, NodeSelector: shape, Claim: claim("single")},
			{Name: "multi", Replicas: 2, NumOfHosts: 4, ChipsPerHost: 4, NodeSelector: shape, Claim: claim("multi")},
			{Name: "on-demand", Replicas: 1, NumOfHosts: 2, ChipsPerHost: 4, NodeSelector: shape},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, group := range []string{"single", "multi"} {
		spec := rc.Spec.WorkerGroupSpecs[i].Template.Spec
		want := map[string]string{ClaimNamespaceLabel: "default", ClaimClusterLabel: "rc", ClaimGroupLabel: group}
		for k, v := range shape {
			want[k] = v
		}
		if !reflect.DeepEqual(spec.NodeSelector, want) || spec.Affinity != nil {
			t.Errorf("group %s: node selector %v and affinity %v, want the selector %v alone", group, spec.NodeSelector, spec.Affinity, want)
		}
	}
	shaped := rc.Spec.WorkerGroupSpecs[2].Template.Spec
	if !reflect.DeepEqual(shaped.NodeSelector, shape) {
		t.Errorf("group on-demand: node selector %v, want the shape's %v", shaped.NodeSelector, shape)
	}
	a := shaped.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatalf("group on-demand: no node affinity keeping it off claimed slices: %+v", a)
	}
	e := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
	if e.Key != ClaimGroupLabel || e.Operator != corev1.NodeSelectorOpDoesNotExist {
		t.Errorf("group on-demand: affinity %+v, want %s DoesNotExist", e, ClaimGroupLabel)
	}
	if len(shape) != 2 {
		t.Errorf("the group's selector map was changed: %v", shape)
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
		Groups: []RayWorkerGroup{{Name: "g", Replicas: 1, NumOfHosts: 4, ChipsPerHost: 4, NodeSelector: shape, Claim: &SliceClaim{Namespace: "default", Cluster: "rc", Group: "g"}, Pod: pod, MegascaleSlices: 2}},
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
	case !reflect.DeepEqual(c.Env, []corev1.EnvVar{{Name: "MEGASCALE_NUM_SLICES", Value: "2"}, {Name: "A", Value: "1"}, {Name: "B", Value: "2"}}):
		t.Errorf("env %v, want MEGASCALE_NUM_SLICES for the multislice group, then A and B in order", c.Env)
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

// The stamp of a template changes with what its Pods are made from, and only with that: a change
// of replicas leaves the Pods as they are.
func TestRayClusterObjectStampsTemplates(t *testing.T) {
	base := RayClusterSpec{Name: "rc", Namespace: "default", Image: "ray", RayVersion: "2.55.0",
		Groups: []RayWorkerGroup{{Name: "g", Replicas: 1, NumOfHosts: 4, ChipsPerHost: 4}}}
	stamps := func(change func(*RayClusterSpec)) Templates {
		s := base
		s.Groups = append([]RayWorkerGroup(nil), base.Groups...)
		change(&s)
		rc, err := RayClusterObject(s)
		if err != nil {
			t.Fatal(err)
		}
		return TemplatesOf(rc)
	}
	was := stamps(func(*RayClusterSpec) {})
	if was.Head == "" || was.Groups["g"] == "" {
		t.Fatalf("no stamps: %+v", was)
	}
	for what, tc := range map[string]struct {
		change      func(*RayClusterSpec)
		head, group bool // changed
	}{
		"replicas":     {func(s *RayClusterSpec) { s.Groups[0].Replicas = 3 }, false, false},
		"ray version":  {func(s *RayClusterSpec) { s.RayVersion = "2.56.0" }, true, true},
		"image":        {func(s *RayClusterSpec) { s.Image = "other" }, true, true},
		"group env":    {func(s *RayClusterSpec) { s.Groups[0].Pod.Env = map[string]string{"A": "1"} }, false, true},
		"hosts":        {func(s *RayClusterSpec) { s.Groups[0].NumOfHosts = 8 }, false, true},
		"head cpu":     {func(s *RayClusterSpec) { s.Head.CPU = "2" }, true, false},
		"head service": {func(s *RayClusterSpec) { s.Head.ServiceType = "NodePort" }, false, false},
		"collector":    {func(s *RayClusterSpec) { s.HistoryServer = &Collector{Bucket: "runs", Image: "c"} }, true, true},
	} {
		now := stamps(tc.change)
		if (now.Head != was.Head) != tc.head || (now.Groups["g"] != was.Groups["g"]) != tc.group {
			t.Errorf("%s: head stamp changed %v, group %v; want %v, %v", what, now.Head != was.Head, now.Groups["g"] != was.Groups["g"], tc.head, tc.group)
		}
	}
	stale := RayPod{Group: "g", Template: "old"}
	if !was.Stale(stale) || was.Stale(RayPod{Group: "g", Template: was.Groups["g"]}) || was.Stale(RayPod{Group: "g"}) {
		t.Error("Stale: a Pod of another stamp is stale, one of the template's or without a stamp is not")
	}
}
