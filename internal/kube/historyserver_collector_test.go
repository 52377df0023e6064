package kube

import (
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
