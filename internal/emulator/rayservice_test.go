package emulator

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

var rayServiceGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}

// KubeRay's TPU RayService sample, applied as shipped, reaches Running on a v4 2x2x1 slice: the
// real operator creates its RayCluster, finds the head ready, sends the Serve config to the
// RayCluster's dashboard through the cluster's Ray proxy, reads the application RUNNING and the
// head's Serve proxy healthy, and the serve Service gets its endpoints. Users reach the same
// dashboard through the kube-apiserver's Service proxy. A change of the Serve config alone is
// applied in place: the same RayCluster, no pending one.
func TestRayServiceSampleRuns(t *testing.T) {
	full, _, _, kube, dyn := rayTestCluster(t, "ray-service", tpuPool("v4", "ct4p-hightpu-4t", 1, nil))
	ctx := testCtx(t)
	svcs := dyn.Resource(rayServiceGVR).Namespace("default")

	sample := rayServiceSample(t)
	if _, err := svcs.Create(ctx, sample, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := sample.GetName()
	var status map[string]any
	testwait.For(t, "the RayService to be Running", func() bool {
		rs, err := svcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status, _ = rs.Object["status"].(map[string]any)
		return status["serviceStatus"] == "Running"
	})
	active, _, _ := unstructured.NestedString(status, "activeServiceStatus", "rayClusterName")
	app, _, _ := unstructured.NestedString(status, "activeServiceStatus", "applicationStatuses", "stable_diffusion", "status")
	if active == "" || app != "RUNNING" {
		t.Fatalf("active RayCluster %q, application stable_diffusion %q; want one, RUNNING: %v", active, app, status)
	}
	if n, _, _ := unstructured.NestedInt64(status, "numServeEndpoints"); n < 1 {
		t.Fatalf("numServeEndpoints %d, want the worker at least", n)
	}
	workers := rayPods(t, kube, active, "worker")
	if len(workers) != 1 || !strings.Contains(nodesOf(t, kube)[workers[0].Spec.NodeName].Labels["cloud.google.com/gke-nodepool"], "v4") {
		t.Fatalf("the TPU worker is not on the v4 slice: %v", workers)
	}
	head := rayPods(t, kube, active, "head")
	if len(head) != 1 || head[0].Labels["ray.io/serve"] != "true" {
		t.Fatalf("KubeRay did not find the head's Serve proxy healthy: %v", head)
	}

	// The dashboard through the kube-apiserver's Service proxy: Serve, then a job. (AbsPath keeps
	// the trailing slash Ray's paths have; ProxyGet would drop it.)
	dashboard := "/api/v1/namespaces/default/services/http:" + name + "-head-svc:dashboard/proxy"
	body, err := kube.CoreV1().RESTClient().Get().AbsPath(dashboard + "/api/serve/applications/").DoRaw(ctx)
	if err != nil || !strings.Contains(string(body), `"stable_diffusion"`) {
		t.Fatalf("Serve applications through the kube-apiserver: %s, %v", body, err)
	}
	jobs := dashboard + "/api/jobs/"
	body, err = kube.CoreV1().RESTClient().Post().AbsPath(jobs).Body([]byte(`{"entrypoint":"python -c 'print(1)'"}`)).DoRaw(ctx)
	var submitted struct {
		SubmissionID string `json:"submission_id"`
	}
	if err != nil || json.Unmarshal(body, &submitted) != nil || submitted.SubmissionID == "" {
		t.Fatalf("submitting a job through the kube-apiserver: %s, %v", body, err)
	}
	testwait.For(t, "the job to succeed", func() bool {
		body, err := kube.CoreV1().RESTClient().Get().AbsPath(jobs + submitted.SubmissionID).DoRaw(ctx)
		return err == nil && strings.Contains(string(body), `"status":"SUCCEEDED"`)
	})

	// A job ends as SetRayJobOutcome says, its logs in its message.
	if err := testEmu.SetRayJobOutcome(ctx, RayJobOutcome{Cluster: full, Match: "train.py", Status: "FAILED", Logs: "ValueError: no TPU\n"}); err != nil {
		t.Fatal(err)
	}
	body, err = kube.CoreV1().RESTClient().Post().AbsPath(jobs).Body([]byte(`{"entrypoint":"python train.py","submission_id":"train-1"}`)).DoRaw(ctx)
	if err != nil {
		t.Fatalf("submitting a job through the kube-apiserver: %s, %v", body, err)
	}
	testwait.For(t, "the job to fail", func() bool {
		body, err = kube.CoreV1().RESTClient().Get().AbsPath(jobs + "train-1").DoRaw(ctx)
		return err == nil && strings.Contains(string(body), `"status":"FAILED"`)
	})
	if !strings.Contains(string(body), `ValueError: no TPU`) {
		t.Fatalf("the failed job's message has no logs: %s", body)
	}

	// A second application: the Serve config changes, the RayCluster does not.
	rs, err := svcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config, _, _ := unstructured.NestedString(rs.Object, "spec", "serveConfigV2")
	// The sample's applications are a list at two spaces.
	config += "  - name: echo\n    import_path: echo:app\n    route_prefix: /echo\n"
	if err := unstructured.SetNestedField(rs.Object, config, "spec", "serveConfigV2"); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Update(ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the new application to be RUNNING", func() bool {
		rs, err := svcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status, _ = rs.Object["status"].(map[string]any)
		echo, _, _ := unstructured.NestedString(status, "activeServiceStatus", "applicationStatuses", "echo", "status")
		return echo == "RUNNING"
	})
	now, _, _ := unstructured.NestedString(status, "activeServiceStatus", "rayClusterName")
	pending, _, _ := unstructured.NestedString(status, "pendingServiceStatus", "rayClusterName")
	if now != active || pending != "" {
		t.Fatalf("a Serve config change moved the RayService to RayCluster %q (pending %q), want %q in place", now, pending, active)
	}
	rcs, err := dyn.Resource(rayClusterGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(rcs.Items) != 1 {
		t.Fatalf("RayClusters after a Serve config change: %v, %v; want the one", rcs, err)
	}
}

// rayServiceSample is KubeRay's ray-service.tpu-single-host.yaml, in the ray-operator module go.mod
// requires, as shipped, in namespace default.
func rayServiceSample(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ray-project/kuberay/ray-operator").Output()
	if err != nil {
		t.Fatalf("locating the ray-operator module: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "samples", "ray-service.tpu-single-host.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetNamespace("default")
	return u
}
