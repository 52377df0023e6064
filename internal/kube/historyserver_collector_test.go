package kube

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestAddCollector(t *testing.T) {
	envOf := func(c corev1.Container) map[string]string {
		m := map[string]string{}
		for _, e := range c.Env {
			m[e.Name] = e.Value
			if e.ValueFrom != nil {
				m[e.Name] = e.ValueFrom.FieldRef.FieldPath
			}
		}
		return m
	}
	for _, head := range []bool{true, false} {
		tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: "own", Containers: []corev1.Container{{Name: "ray-head"}}}}
		sa := "history"
		if !head {
			sa = ""
		}
		AddCollector(&tmpl, Collector{Bucket: "runs", Image: "quay.io/kuberay/collector:v1.7.0", ServiceAccount: sa}, head)
		spec := tmpl.Spec
		if len(spec.Containers) != 2 || spec.Containers[1].Name != CollectorContainer || spec.Containers[1].Image != "quay.io/kuberay/collector:v1.7.0" {
			t.Fatalf("containers: %+v", spec.Containers)
		}
		ray, collector := envOf(spec.Containers[0]), envOf(spec.Containers[1])
		role := map[bool]string{true: "Head", false: "Worker"}[head]
		if ray["RAY_enable_ray_event"] != "true" || ray["RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR"] != "http://localhost:8084/v1/events" {
			t.Errorf("Ray container's env: %v", ray)
		}
		if collector["GCS_BUCKET"] != "runs" || collector["RAY_ROLE"] != role || collector["RAY_CLUSTER_NAME"] != "metadata.labels['ray.io/cluster']" ||
			collector["STORAGE_BACKEND"] != "gcs" {
			t.Errorf("collector's env: %v", collector)
		}
		for i, c := range spec.Containers {
			if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/tmp/ray" || c.VolumeMounts[0].Name != spec.Volumes[0].Name {
				t.Errorf("container %d does not share /tmp/ray: %+v", i, c.VolumeMounts)
			}
		}
		if len(spec.Volumes) != 1 || spec.Volumes[0].EmptyDir == nil {
			t.Errorf("volumes: %+v", spec.Volumes)
		}
		if want := map[bool]string{true: "history", false: "own"}[head]; spec.ServiceAccountName != want {
			t.Errorf("service account %q, want %q", spec.ServiceAccountName, want)
		}
	}
}

// With a History Server, the head and every worker group of a RayCluster, and of a RayService's
// rayClusterConfig, carry the collector, the shared session folder, the Ray event settings and
// the service account bound to the Google one.
func TestRayClusterConfigAddsCollectors(t *testing.T) {
	c := &Collector{Bucket: "runs", Image: "quay.io/kuberay/collector:v1.7.0", ServiceAccount: "rc-ray-history",
		GoogleServiceAccount: "writer@p.iam.gserviceaccount.com"}
	spec := RayClusterSpec{Name: "rc", Namespace: "default", Image: "ray", RayVersion: "2.55.0", HistoryServer: c,
		Groups: []RayWorkerGroup{{Name: "a", Replicas: 1, NumOfHosts: 2, ChipsPerHost: 4}, {Name: "b", Replicas: 2, NumOfHosts: 1, ChipsPerHost: 8}}}
	rs, err := RayServiceObject(RayServiceSpec{RayClusterSpec: spec, ServeConfigV2: "applications: []"})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := RayClusterObject(spec)
	if err != nil {
		t.Fatal(err)
	}
	for kind, cfg := range map[string]struct {
		head   corev1.PodTemplateSpec
		groups int
		get    func(int) corev1.PodTemplateSpec
	}{
		"RayCluster": {rc.Spec.HeadGroupSpec.Template, len(rc.Spec.WorkerGroupSpecs), func(i int) corev1.PodTemplateSpec { return rc.Spec.WorkerGroupSpecs[i].Template }},
		"RayService": {rs.Spec.RayClusterSpec.HeadGroupSpec.Template, len(rs.Spec.RayClusterSpec.WorkerGroupSpecs),
			func(i int) corev1.PodTemplateSpec { return rs.Spec.RayClusterSpec.WorkerGroupSpecs[i].Template }},
	} {
		templates := map[string]corev1.PodTemplateSpec{"head": cfg.head}
		for i := 0; i < cfg.groups; i++ {
			templates[fmt.Sprint("group ", i)] = cfg.get(i)
		}
		if len(templates) != 3 {
			t.Fatalf("%s: %d templates, want the head and 2 groups", kind, len(templates))
		}
		for what, tmpl := range templates {
			spec := tmpl.Spec
			role := map[bool]string{true: "Head", false: "Worker"}[what == "head"]
			var collector *corev1.Container
			for i := range spec.Containers {
				if spec.Containers[i].Name == CollectorContainer {
					collector = &spec.Containers[i]
				}
			}
			switch {
			case collector == nil || collector.Image != c.Image:
				t.Errorf("%s %s: no collector %s: %+v", kind, what, c.Image, spec.Containers)
			case containerEnv(*collector, "RAY_ROLE") != role || containerEnv(*collector, "GCS_BUCKET") != "runs":
				t.Errorf("%s %s: collector env %+v", kind, what, collector.Env)
			case containerEnv(spec.Containers[0], "RAY_enable_ray_event") != "true":
				t.Errorf("%s %s: Ray container env %+v", kind, what, spec.Containers[0].Env)
			case len(spec.Volumes) != 1 || spec.Volumes[0].Name != "historyserver" || spec.Volumes[0].EmptyDir == nil:
				t.Errorf("%s %s: volumes %+v", kind, what, spec.Volumes)
			case spec.ServiceAccountName != "rc-ray-history":
				t.Errorf("%s %s: service account %q", kind, what, spec.ServiceAccountName)
			}
		}
	}
	want := HistoryAccount{Namespace: "default", Name: "rc-ray-history", GoogleServiceAccount: "writer@p.iam.gserviceaccount.com", Owner: "rc"}
	if a, ok := spec.HistoryAccount("rc"); !ok || a != want {
		t.Errorf("HistoryAccount: %+v, %v; want %+v", a, ok, want)
	}
	spec.HistoryServer = nil
	if _, ok := spec.HistoryAccount("rc"); ok {
		t.Error("HistoryAccount of a spec without collectors")
	}
}

func containerEnv(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
