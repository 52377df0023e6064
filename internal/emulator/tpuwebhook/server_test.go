package tpuwebhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook/tpuwebhooktest"
)

// The HTTP layer without TLS: a review per cluster path, 403 where the webhook cannot decide,
// 400 for what is not a review of the right kind.
func TestServerAnswersReviews(t *testing.T) {
	kube := fake.NewClientset()
	var logged []string
	s := &Server{cfg: Config{
		Kube: func(uid string) (kubernetes.Interface, bool) { return kube, uid == "c1" },
		Logf: func(format string, args ...any) { logged = append(logged, format) },
	}}
	post := func(path string, review *admissionv1.AdmissionReview) *httptest.ResponseRecorder {
		t.Helper()
		body, err := json.Marshal(review)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
		return rec
	}

	rec := post("/clusters/c1/validate", rayClusterReview(t, tpuwebhooktest.RayCluster("rc", "g", 1, 3, 4, "4x4"), "RayCluster"))
	var got admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != http.StatusOK || err != nil || got.Response == nil || got.Response.Allowed {
		t.Fatalf("validate: %d %s %v", rec.Code, rec.Body, err)
	}
	rec = post("/clusters/c1/mutate", rayClusterReview(t, workerPod("rc", "g", "2x2", nil), "Pod"))
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != http.StatusOK || err != nil || got.Response == nil || got.Response.Patch == nil {
		t.Fatalf("mutate: %d %s %v", rec.Code, rec.Body, err)
	}
	// A cluster that is not running: the call fails and the Pod is refused.
	rec = post("/clusters/gone/mutate", rayClusterReview(t, workerPod("rc", "g", "2x2", nil), "Pod"))
	if rec.Code != http.StatusForbidden || strings.TrimSpace(rec.Body.String()) != "Failed to mutate Pod" || len(logged) != 1 {
		t.Errorf("unknown cluster: %d %q, logged %v", rec.Code, rec.Body, logged)
	}
	rec = post("/clusters/c1/mutate", rayClusterReview(t, tpuwebhooktest.RayCluster("rc", "g", 1, 4, 4, "4x4"), "RayCluster"))
	if rec.Code != http.StatusBadRequest || strings.TrimSpace(rec.Body.String()) != "Invalid Kind" {
		t.Errorf("RayCluster to mutate: %d %q", rec.Code, rec.Body)
	}
}

// Install creates both registrations, then updates them; Remove deletes them, twice without error.
func TestInstallAndRemove(t *testing.T) {
	ctx := t.Context()
	kube := fake.NewClientset()
	s := &Server{cfg: Config{CAPEM: []byte("ca")}, url: "https://127.0.0.1:1"}
	for range 2 {
		if err := s.Install(ctx, kube, "uid-7"); err != nil {
			t.Fatal(err)
		}
	}
	api := kube.AdmissionregistrationV1()
	mut, err := api.MutatingWebhookConfigurations().Get(ctx, tpuWebhookMutatingConfig, metav1.GetOptions{})
	if err != nil || len(mut.Webhooks) != 1 || *mut.Webhooks[0].ClientConfig.URL != "https://127.0.0.1:1/clusters/uid-7/mutate" ||
		string(mut.Webhooks[0].ClientConfig.CABundle) != "ca" {
		t.Fatalf("mutating: %v %v", mut, err)
	}
	val, err := api.ValidatingWebhookConfigurations().Get(ctx, tpuWebhookValidatingConfig, metav1.GetOptions{})
	if err != nil || len(val.Webhooks) != 1 || *val.Webhooks[0].ClientConfig.URL != "https://127.0.0.1:1/clusters/uid-7/validate" {
		t.Fatalf("validating: %v %v", val, err)
	}
	for range 2 {
		if err := Remove(ctx, kube); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := api.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("left %v", l.Items)
	}
}
