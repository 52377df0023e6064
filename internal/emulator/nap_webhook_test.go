package emulator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
)

// The cluster API takes and reports the NAP settings, and refuses wrong ones in a create and in
// an update, before any operation starts.
func TestClusterAutoscalingThroughTheAPI(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "nap-bad", InitialNodeCount: 1, Autoscaling: rulestest.Autoscaling(true, rulestest.Limit("tpu-v6e-slice", 0, 8)), //nolint:staticcheck // deprecated in the API, still sent by clients
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource limits for cpu, memory must be specified when enabling node autoprovisioning.")
	_, err = c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredClusterAutoscaling: rulestest.Autoscaling(false, rulestest.Limit("cpu", 0, 8)),
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource limits are supported only with node autoprovisioning.")

	want := rulestest.Autoscaling(true, rulestest.Limit("cpu", 1, 1000), rulestest.Limit("memory", 1, 4000), rulestest.Limit("tpu-v5-lite-podslice", 0, 32))
	want.AutoprovisioningLocations = []string{testZone}
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{DesiredClusterAutoscaling: want}}))
	t.Cleanup(func() {
		mustSucceed(t, c)(c.UpdateCluster(context.Background(), &containerpb.UpdateClusterRequest{Name: cluster,
			Update: &containerpb.ClusterUpdate{DesiredClusterAutoscaling: &containerpb.ClusterAutoscaling{}}}))
	})
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	got := cl.GetAutoscaling()
	if !got.GetEnableNodeAutoprovisioning() || len(got.ResourceLimits) != 3 || got.ResourceLimits[2].ResourceType != "tpu-v5-lite-podslice" ||
		got.ResourceLimits[2].Maximum != 32 || len(got.AutoprovisioningLocations) != 1 {
		t.Fatalf("cluster autoscaling reported as %v", got)
	}
}

func rayClusterReview(t *testing.T, obj runtime.Object, kind string) *admissionv1.AdmissionReview {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
		UID: "uid-1", Kind: metav1.GroupVersionKind{Kind: kind}, Operation: admissionv1.Create, Namespace: "default",
		Object: runtime.RawExtension{Raw: raw},
	}}
}

func TestTPUWebhookValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hosts   int32
		chips   int64
		topo    string
		allowed bool
	}{
		{"v6e 4x4 on 4-chip hosts", 4, 4, "4x4", true},
		{"v6e 2x4 on one 8-chip host", 1, 8, "2x4", true},
		{"v6e 2x4 on two 4-chip hosts", 2, 4, "2x4", true},
		{"v6e 2x4 at 8 chips with 2 hosts", 2, 8, "2x4", false},
		{"v6e 4x4 with 3 hosts", 3, 4, "4x4", false},
	} {
		resp, err := validateTPURayCluster(rayClusterReview(t, tpuRayCluster("rc", "g", 1, tc.hosts, tc.chips, tc.topo), "RayCluster"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if resp.Allowed != tc.allowed || resp.UID != "uid-1" {
			t.Errorf("%s: allowed %v, want %v", tc.name, resp.Allowed, tc.allowed)
		}
		if !tc.allowed && resp.Result.Message != "Number of workers in worker group not equal to specified topology" {
			t.Errorf("%s: message %q", tc.name, resp.Result.Message)
		}
	}
	// No topology, no numOfHosts: errors, which the server answers with 403 (WH:156-161).
	rc := tpuRayCluster("rc", "g", 1, 4, 4, "4x4")
	delete(rc.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector, "cloud.google.com/gke-tpu-topology")
	if _, err := validateTPURayCluster(rayClusterReview(t, rc, "RayCluster")); err == nil || err.Error() != "TPU topology not specified" {
		t.Errorf("no topology: %v", err)
	}
	rc = tpuRayCluster("rc", "g", 1, 0, 4, "4x4")
	if _, err := validateTPURayCluster(rayClusterReview(t, rc, "RayCluster")); err == nil || err.Error() != "workerGroupSpec NumOfHosts not set" {
		t.Errorf("no numOfHosts: %v", err)
	}
	// A group without TPUs passes.
	rc = tpuRayCluster("rc", "g", 1, 3, 4, "4x4")
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	if resp, err := validateTPURayCluster(rayClusterReview(t, rc, "RayCluster")); err != nil || !resp.Allowed {
		t.Errorf("CPU group: %v %v", resp, err)
	}
}

// workerPod is a worker Pod as KubeRay makes it from tpuRayCluster's template (4 chips a Pod).
func workerPod(rc, group, topo string, labels map[string]string) *corev1.Pod {
	tmpl := tpuRayCluster(rc, group, 1, 1, 4, topo).Spec.WorkerGroupSpecs[0].Template
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: rc + "-" + group + "-worker-", Namespace: "default",
		Labels: map[string]string{rayClusterLabel: rc, rayGroupLabel: group, rayNodeTypeLabel: "worker",
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
	pod := workerPod("train", "tpu", "4x4", map[string]string{rayReplicaIndexLabel: "1", rayHostIndexLabel: "2", rayReplicaNameLabel: "tpu-abcde"})
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
	taken := workerPod("solo", "one", "2x2", map[string]string{whLegacyReplicaLabel: "one-0"})
	taken.Name = "solo-one-worker-aaaaa"
	taken.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TPU_WORKER_ID", Value: "0"}}
	if _, err := kube.CoreV1().Pods("default").Create(ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, err = mutateTPUPod(ctx, kube, rayClusterReview(t, workerPod("solo", "one", "2x2", map[string]string{rayReplicaIndexLabel: "1"}), "Pod"))
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
