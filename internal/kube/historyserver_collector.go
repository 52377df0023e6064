package kube

import (
	corev1 "k8s.io/api/core/v1"
)

// The History Server's collector runs beside the Ray container of every head and worker Pod of a
// RayCluster whose runs the server is to show: it reads the Ray session folder they share (an
// emptyDir at /tmp/ray), receives the Ray events the Ray container exports to it on port 8084,
// and writes both to the bucket. Everything here is KubeRay's setup for Cloud Storage (kuberay
// v1.7.0, historyserver/config/raycluster-gcs.yaml), where the Pods run as the service account
// that Workload Identity lets write the bucket.

// Collector is what a RayCluster's collector sidecars need.
type Collector struct {
	// Bucket is the Cloud Storage bucket's name.
	Bucket string
	// Image is the collector's image.
	Image string
	// ServiceAccount is the Kubernetes service account the Ray Pods run as, bound through
	// Workload Identity to a Google service account that may write the bucket; empty keeps the
	// Pods' own.
	ServiceAccount string
	// GoogleServiceAccount is that Google service account (HistoryAccount); AddCollector does
	// not need it.
	GoogleServiceAccount string
}

// HistoryAccount is the service account that the Pods of s run as for their collectors, made for
// owner (HistoryAccount.Owner); false when s has no collectors or keeps the Pods' own.
func (s RayClusterSpec) HistoryAccount(owner string) (HistoryAccount, bool) {
	c := s.HistoryServer
	if c == nil || c.ServiceAccount == "" {
		return HistoryAccount{}, false
	}
	return HistoryAccount{Namespace: s.Namespace, Name: c.ServiceAccount, GoogleServiceAccount: c.GoogleServiceAccount, Owner: owner}, true
}

const (
	// CollectorContainer names the sidecar, as KubeRay's manifests do.
	CollectorContainer = "collector"
	// CollectorVolume is the emptyDir of the Ray session folder both containers share, mounted at
	// CollectorMountPath.
	CollectorVolume    = "historyserver"
	CollectorMountPath = rayTmpRoot
	rayTmpRoot         = "/tmp/ray"
	collectorEventPort = "8084"
)

// collectorRayEnv is what the Ray container needs to keep its session folder where the collector
// reads it and to export its events to the collector.
var collectorRayEnv = []corev1.EnvVar{
	{Name: "RAY_TMP_ROOT", Value: rayTmpRoot},
	{Name: "RAY_enable_ray_event", Value: "true"},
	{Name: "RAY_enable_core_worker_ray_event_to_aggregator", Value: "true"},
	{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR", Value: "http://localhost:" + collectorEventPort + "/v1/events"},
	{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES", Value: "ALL"},
}

// CollectorRayEnv are the names of the variables AddCollector sets on the Ray container.
func CollectorRayEnv() []string {
	names := make([]string, len(collectorRayEnv))
	for i, e := range collectorRayEnv {
		names[i] = e.Name
	}
	return names
}

// AddCollector adds the collector to a Ray Pod template whose first container is Ray's: the shared
// session folder, the Ray event settings of the Ray container, the sidecar with its role (Head or
// Worker) and the service account.
func AddCollector(t *corev1.PodTemplateSpec, c Collector, head bool) {
	spec := &t.Spec
	if len(spec.Containers) == 0 {
		return
	}
	mount := corev1.VolumeMount{Name: CollectorVolume, MountPath: rayTmpRoot}
	ray := &spec.Containers[0]
	ray.Env = append(ray.Env, collectorRayEnv...)
	ray.VolumeMounts = append(ray.VolumeMounts, mount)
	role := "Worker"
	if head {
		role = "Head"
	}
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	spec.Containers = append(spec.Containers, corev1.Container{
		Name:  CollectorContainer,
		Image: c.Image,
		Env: []corev1.EnvVar{
			field("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
			field("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
			field("POD_IP", "status.podIP"),
			{Name: "FQ_RAY_IP", Value: "$(RAY_CLUSTER_NAME)-head-svc.$(RAY_CLUSTER_NAMESPACE).svc.cluster.local"},
			{Name: "RAY_TMP_ROOT", Value: rayTmpRoot},
			{Name: "GCS_BUCKET", Value: c.Bucket},
			{Name: "RAY_ROLE", Value: role},
			{Name: "STORAGE_BACKEND", Value: "gcs"},
			{Name: "EVENTS_PORT", Value: collectorEventPort},
		},
		VolumeMounts: []corev1.VolumeMount{mount},
	})
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: CollectorVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	if c.ServiceAccount != "" {
		spec.ServiceAccountName = c.ServiceAccount
	}
}
