package tpuwebhook

import (
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook/tpuwebhooktest"
)

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
		resp, err := validateTPURayCluster(rayClusterReview(t, tpuwebhooktest.RayCluster("rc", "g", 1, tc.hosts, tc.chips, tc.topo), "RayCluster"))
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
	rc := tpuwebhooktest.RayCluster("rc", "g", 1, 4, 4, "4x4")
	delete(rc.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector, "cloud.google.com/gke-tpu-topology")
	if _, err := validateTPURayCluster(rayClusterReview(t, rc, "RayCluster")); err == nil || err.Error() != "TPU topology not specified" {
		t.Errorf("no topology: %v", err)
	}
	rc = tpuwebhooktest.RayCluster("rc", "g", 1, 0, 4, "4x4")
	if _, err := validateTPURayCluster(rayClusterReview(t, rc, "RayCluster")); err == nil || err.Error() != "workerGroupSpec NumOfHosts not set" {
		t.Errorf("no numOfHosts: %v", err)
	}
	// A group without TPUs passes.
	rc = tpuwebhooktest.RayCluster("rc", "g", 1, 3, 4, "4x4")
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	if resp, err := validateTPURayCluster(rayClusterReview(t, rc, "RayCluster")); err != nil || !resp.Allowed {
		t.Errorf("CPU group: %v %v", resp, err)
	}
}
