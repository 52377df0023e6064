package tpuwebhook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook/tpuwebhooktest"
)

// workerPod is a worker Pod as KubeRay makes it from tpuRayCluster's template (4 chips a Pod).
func workerPod(rc, group, topo string, labels map[string]string) *corev1.Pod {
	tmpl := tpuwebhooktest.RayCluster(rc, group, 1, 1, 4, topo).Spec.WorkerGroupSpecs[0].Template
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: rc + "-" + group + "-worker-", Namespace: "default",
		Labels: map[string]string{ClusterLabel: rc, GroupLabel: group, rayNodeTypeLabel: "worker",
			k8sCreatedByLabel: kubeRayComponent, k8sAppNameLabel: kubeRayAppName}}, Spec: tmpl.Spec}
	for k, v := range labels {
		p.Labels[k] = v
	}
	return p
}

func patchOps(t *testing.T, resp *admissionv1.AdmissionResponse) map[string]any {
	t.Helper()
	var ops []map[string]any
	if err := json.Unmarshal(resp.Patch, &ops); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, op := range ops {
		path, _ := op["path"].(string)
		if strings.HasSuffix(path, "/env") || strings.HasSuffix(path, "/env/-") {
			vars, ok := op["value"].([]any)
			if !ok {
				vars = []any{op["value"]}
			}
			for _, v := range vars {
				m, _ := v.(map[string]any)
				name, _ := m["name"].(string)
				out["env:"+name] = m["value"]
			}
			continue
		}
		out[path] = op["value"]
	}
	return out
}

func TestTPUWebhookMutation(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset()
	// KubeRay's indexing labels (RayMultiHostIndexing): the webhook takes them as they are.
	pod := workerPod("train", "tpu", "4x4", map[string]string{ReplicaIndexLabel: "1", HostIndexLabel: "2", ReplicaNameLabel: "tpu-abcde"})
	resp, err := mutateTPUPod(ctx, kube, rayClusterReview(t, pod, "Pod"))
	if err != nil || !resp.Allowed || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("mutate: %v %v", resp, err)
	}
	got := patchOps(t, resp)
	for k, want := range map[string]any{
		"/spec/hostname":             "tpu-1-2",
		"/spec/subdomain":            "train-headless",
		"env:TPU_WORKER_ID":          "2",
		"env:TPU_NAME":               "tpu-1",
		"env:TPU_WORKER_HOSTNAMES":   "tpu-1-0.train-headless,tpu-1-1.train-headless,tpu-1-2.train-headless,tpu-1-3.train-headless",
		"env:TPU_DEVICE_PLUGIN_ADDR": "$(TPU_DEVICE_PLUGIN_HOST_IP):2112",
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	aff, _ := json.Marshal(got["/spec/affinity"])
	if !strings.Contains(string(aff), `"topologyKey":"cloud.google.com/gke-nodepool"`) || !strings.Contains(string(aff), `"values":["tpu-abcde"]`) {
		t.Errorf("affinity %s", aff)
	}
	if _, ok := got["/metadata/labels/replicaIndex"]; ok {
		t.Error("the legacy replicaIndex label with KubeRay's indexing labels")
	}

	// Without them (a single-host group: KubeRay sets only the replica index), the webhook
	// counts the group's Pods: replica 0 is taken, so this one is replica 1.
	taken := workerPod("solo", "one", "2x2", map[string]string{LegacyReplicaLabel: "one-0"})
	taken.Name = "solo-one-worker-aaaaa"
	taken.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TPU_WORKER_ID", Value: "0"}}
	if _, err := kube.CoreV1().Pods("default").Create(ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, err = mutateTPUPod(ctx, kube, rayClusterReview(t, workerPod("solo", "one", "2x2", map[string]string{ReplicaIndexLabel: "1"}), "Pod"))
	if err != nil {
		t.Fatal(err)
	}
	got = patchOps(t, resp)
	if got["/metadata/labels/replicaIndex"] != "one-1" || got["env:TPU_WORKER_ID"] != "0" || got["env:TPU_NAME"] != "one-1" {
		t.Errorf("single-host mutation %v", got)
	}
	if _, ok := got["/spec/hostname"]; ok {
		t.Error("a hostname for a single-host Pod")
	}
	if _, ok := got["env:TPU_WORKER_HOSTNAMES"]; ok {
		t.Error("TPU_WORKER_HOSTNAMES for a single-host Pod")
	}

	// A Pod without TPUs is admitted as it is.
	cpu := workerPod("train", "cpu", "4x4", nil)
	cpu.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	if resp, err := mutateTPUPod(ctx, kube, rayClusterReview(t, cpu, "Pod")); err != nil || !resp.Allowed || resp.Patch != nil {
		t.Errorf("CPU Pod: %v %v", resp, err)
	}
	// A TPU Pod without a topology selector is an error (HTTP 403, the Pod refused).
	bad := workerPod("train", "tpu", "4x4", nil)
	delete(bad.Spec.NodeSelector, "cloud.google.com/gke-tpu-topology")
	if _, err := mutateTPUPod(ctx, kube, rayClusterReview(t, bad, "Pod")); err == nil || !strings.Contains(err.Error(), "missing TPU topology nodeSelector") {
		t.Errorf("no topology: %v", err)
	}
}
