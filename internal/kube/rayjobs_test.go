package kube

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/raydashboard"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// fakeRayAPIServer stands in for a cluster's API server: it serves RayCluster default/tpu and
// passes requests to the proxy path of service to the emulator's dashboard, after before has had
// a say (nil: every request goes on).
type fakeRayAPIServer struct {
	dashboard *raydashboard.Dashboard
	service   string
	before    func(w http.ResponseWriter, r *http.Request) bool
	proxied   atomic.Int32
	// proxiedElsewhere counts the requests to the proxy of a Service that does not exist.
	proxiedElsewhere atomic.Int32
	// serviceAfter is how many reads of the head Service answer 404 before it exists.
	serviceAfter atomic.Int32
	// jobs are the jobs the dashboard ran, as submitted.
	mu   sync.Mutex
	jobs []raydashboard.Job
	now  time.Time
}

func newFakeRayAPIServer(t *testing.T, headService string) (*fakeRayAPIServer, *RayDashboard) {
	t.Helper()
	f := &fakeRayAPIServer{service: "tpu-head-svc", now: time.Unix(1_800_000_000, 0)}
	if headService != "" {
		f.service = headService
	}
	f.dashboard = raydashboard.New(raydashboard.Config{
		Now:          f.clock,
		JobStartTime: time.Second, JobRunTime: 2 * time.Second,
		Outcome: func(j raydashboard.Job) (raydashboard.JobStatus, string) {
			f.mu.Lock()
			f.jobs = append(f.jobs, j)
			f.mu.Unlock()
			if strings.Contains(j.Entrypoint, "fail") {
				return raydashboard.JobFailed, "Traceback (most recent call last):\nValueError: no TPU\n"
			}
			return raydashboard.JobSucceeded, ""
		},
	})
	rc := map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": map[string]any{"name": "tpu", "namespace": "default"},
		"spec": map[string]any{"headGroupSpec": map[string]any{"rayStartParams": map[string]any{}}}}
	if headService != "" {
		rc["spec"] = map[string]any{"headGroupSpec": map[string]any{"rayStartParams": map[string]any{}, "headService": map[string]any{
			"metadata": map[string]any{"name": headService}}}}
	}
	proxy := "/api/v1/namespaces/default/services/http:" + f.service + ":dashboard/proxy"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apis/ray.io/v1/namespaces/default/rayclusters/tpu", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rc)
	})
	mux.HandleFunc(proxy+"/", func(w http.ResponseWriter, r *http.Request) {
		f.proxied.Add(1)
		if f.before != nil && !f.before(w, r) {
			return
		}
		http.StripPrefix(proxy, f.dashboard).ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /api/v1/namespaces/default/services/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != f.service || f.serviceAfter.Add(-1) >= 0 {
			apiServerStatusAnswer(w, http.StatusNotFound, "NotFound", `services "`+r.PathValue("name")+`" not found`,
				map[string]any{"name": r.PathValue("name"), "kind": "services"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": f.service, "namespace": "default"}})
	})
	mux.HandleFunc("GET /apis/ray.io/v1/namespaces/default/rayclusters/{name}", func(w http.ResponseWriter, r *http.Request) {
		apiServerStatusAnswer(w, http.StatusNotFound, "NotFound", `rayclusters.ray.io "`+r.PathValue("name")+`" not found`,
			map[string]any{"name": r.PathValue("name"), "group": "ray.io", "kind": "rayclusters"})
	})
	mux.HandleFunc("/api/v1/namespaces/default/services/{proxy}/", func(w http.ResponseWriter, r *http.Request) {
		f.proxiedElsewhere.Add(1)
		svc := strings.Split(r.PathValue("proxy"), ":")[1]
		apiServerStatusAnswer(w, http.StatusNotFound, "NotFound", `services "`+svc+`" not found`, map[string]any{"name": svc, "kind": "services"})
	})
	c := testClientOf(t, httptest.NewTLSServer(mux))
	d, err := c.RayDashboard(testwait.Context(t), "default", "tpu")
	if err != nil {
		t.Fatal(err)
	}
	d.retryEvery = 10 * time.Millisecond
	return f, d
}

func (f *fakeRayAPIServer) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeRayAPIServer) ran() []raydashboard.Job {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]raydashboard.Job(nil), f.jobs...)
}

func (f *fakeRayAPIServer) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// apiServerStatusAnswer answers as the API server does for itself: a metav1.Status in JSON.
func apiServerStatusAnswer(w http.ResponseWriter, code int, reason, message string, details map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"message": message, "reason": reason, "details": details, "code": code})
}

// A job goes through the Service proxy as submitted, runtime env included; its status follows
// it to the end, and a failed one's logs are read back.
func TestRayJobThroughTheServiceProxy(t *testing.T) {
	f, d := newFakeRayAPIServer(t, "")
	ctx := testwait.Context(t)
	id, err := d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: "python train.py", SubmissionID: "train-1",
		RuntimeEnv: json.RawMessage(`{"pip":["jax[tpu]"],"env_vars":{"A":"1"}}`), Metadata: map[string]string{"by": "raytpu"},
		EntrypointResources: map[string]float64{"TPU": 4}})
	if err != nil || id != "train-1" {
		t.Fatalf("SubmitRayJob = %q, %v; want train-1", id, err)
	}
	for _, want := range []RayJobStatus{RayJobPending, RayJobRunning, RayJobSucceeded} {
		info, err := d.RayJob(ctx, id)
		if err != nil || info.Status != want || info.SubmissionID != id || info.Message == "" {
			t.Fatalf("RayJob = %+v, %v; want %s with a message", info, err, want)
		}
		f.advance(1500 * time.Millisecond)
	}
	ran := f.ran()
	var envVars map[string]any
	if len(ran) == 1 {
		envVars, _ = ran[0].RuntimeEnv["env_vars"].(map[string]any)
	}
	if len(ran) != 1 || ran[0].Entrypoint != "python train.py" || ran[0].Metadata["by"] != "raytpu" || envVars["A"] != "1" {
		t.Errorf("the dashboard ran %+v, not the job as submitted", ran)
	}

	id, err = d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: "python fail.py", SubmissionID: "fail-1"})
	if err != nil {
		t.Fatal(err)
	}
	f.advance(5 * time.Second)
	info, err := d.RayJob(ctx, id)
	if err != nil || info.Status != RayJobFailed || !info.Status.Terminal() {
		t.Fatalf("RayJob = %+v, %v; want FAILED", info, err)
	}
	logs, err := d.RayJobLogs(ctx, id)
	if err != nil || !strings.Contains(logs, "ValueError: no TPU") {
		t.Errorf("RayJobLogs = %q, %v; want the job's logs", logs, err)
	}
}

// Ray's answers about ids: a submission id taken, an unknown job, a job stopped once.
func TestRayJobIDs(t *testing.T) {
	f, d := newFakeRayAPIServer(t, "")
	ctx := testwait.Context(t)
	if _, err := d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: "sleep 1", SubmissionID: "once"}); err != nil {
		t.Fatal(err)
	}
	_, err := d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: "sleep 1", SubmissionID: "once"})
	if !errors.Is(err, ErrRayJobExists) || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("a second submission of one id: %v; want ErrRayJobExists with Ray's 400", err)
	}
	if _, err := d.RayJob(ctx, "never"); !errors.Is(err, ErrRayJobNotFound) {
		t.Errorf("RayJob of an unknown id: %v; want ErrRayJobNotFound", err)
	}
	if stopped, err := d.StopRayJob(ctx, "once"); err != nil || !stopped {
		t.Errorf("StopRayJob of a pending job = %v, %v; want stopped", stopped, err)
	}
	if stopped, err := d.StopRayJob(ctx, "once"); err != nil || stopped {
		t.Errorf("StopRayJob of a stopped job = %v, %v; want not stopped again", stopped, err)
	}
	if info, err := d.RayJob(ctx, "once"); err != nil || info.Status != RayJobStopped {
		t.Errorf("RayJob after a stop = %+v, %v; want STOPPED", info, err)
	}
	if n := f.proxied.Load(); n != 6 {
		t.Errorf("%d requests for 6 calls: none of these answers is to be retried", n)
	}
}

// While the head Pod starts, the API server's proxy answers 503 and Ray 500 "try again later":
// the call goes on until the dashboard answers. A refusal ends it at once.
func TestRayDashboardRetriesOnlyTransientAnswers(t *testing.T) {
	f, d := newFakeRayAPIServer(t, "")
	ctx := testwait.Context(t)
	var failures atomic.Int32
	f.before = func(w http.ResponseWriter, _ *http.Request) bool {
		switch failures.Add(1) {
		case 1:
			apiServerStatusAnswer(w, http.StatusServiceUnavailable, "ServiceUnavailable", `no endpoints available for service "tpu-head-svc"`, nil)
			return false
		case 2:
			http.Error(w, "No available agent to submit job, please try again later.", http.StatusInternalServerError)
			return false
		case 3:
			// The Service exists, its Endpoints not yet.
			apiServerStatusAnswer(w, http.StatusNotFound, "NotFound", `services "tpu-head-svc" not found`,
				map[string]any{"name": "tpu-head-svc", "kind": "services"})
			return false
		}
		return true
	}
	if _, err := d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: "python train.py", SubmissionID: "a"}); err != nil {
		t.Fatalf("SubmitRayJob while the dashboard starts: %v", err)
	}
	if n := f.proxied.Load(); n != 4 {
		t.Errorf("%d requests, want 4: three transient answers, then the submission", n)
	}

	f.proxied.Store(0)
	_, err := d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: " ", SubmissionID: "b"})
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "entrypoint is required") {
		t.Errorf("a submission the dashboard refuses: %v; want its 400 and its text", err)
	}
	if n := f.proxied.Load(); n != 1 {
		t.Errorf("%d requests for a refused submission, want 1", n)
	}

	f.before = func(w http.ResponseWriter, _ *http.Request) bool {
		apiServerStatusAnswer(w, http.StatusServiceUnavailable, "ServiceUnavailable", `no endpoints available for service "tpu-head-svc"`, nil)
		return false
	}
	// Safe on a busy machine: the 503 never ends, and the first attempt is made whenever it comes.
	d.retryFor = 100 * time.Millisecond
	_, err = d.RayJob(ctx, "a")
	if err == nil || !strings.Contains(err.Error(), "no endpoints available") || !strings.Contains(err.Error(), "still so after") {
		t.Errorf("a dashboard that never answers: %v; want the API server's 503 once the retries are over", err)
	}
}

// A RayCluster whose head Service is named in its spec is reached there; a Service gone is the
// API server's 404, said so and not retried.
func TestRayDashboardHeadService(t *testing.T) {
	f, d := newFakeRayAPIServer(t, "custom-head")
	ctx := testwait.Context(t)
	if _, err := d.SubmitRayJob(ctx, RayJobRequest{Entrypoint: "python train.py"}); err != nil {
		t.Fatalf("the dashboard behind the head Service the RayCluster names: %v", err)
	}

	d.jobs, d.service = strings.Replace(d.jobs, "custom-head", "gone-head-svc", 1), "gone-head-svc"
	_, err := d.RayJob(ctx, "x")
	if err == nil || errors.Is(err, ErrRayJobNotFound) || !strings.Contains(err.Error(), `services "gone-head-svc" not found`) ||
		!strings.Contains(err.Error(), "head Service") {
		t.Errorf("a missing head Service: %v; want the API server's 404 for the Service, not a missing job", err)
	}
	if n := f.proxiedElsewhere.Load(); n != 1 {
		t.Errorf("a missing head Service: %d requests to its proxy; want no retries", n)
	}
}

// A RayCluster that does not exist has no dashboard.
func TestRayDashboardOfMissingRayCluster(t *testing.T) {
	_, d := newFakeRayAPIServer(t, "")
	_, err := d.c.RayDashboard(context.Background(), "default", "other")
	if !errors.Is(err, ErrRayClusterNotFound) {
		t.Errorf("RayDashboard of a missing RayCluster: %v; want ErrRayClusterNotFound", err)
	}
}

// The head Service KubeRay has not made yet is waited for; one that never comes ends the wait
// with what to look at.
func TestRayDashboardWaitsForTheHeadService(t *testing.T) {
	f, d := newFakeRayAPIServer(t, "")
	ctx := testwait.Context(t)
	f.serviceAfter.Store(2)
	if err := d.waitForHeadService(ctx); err != nil || f.serviceAfter.Load() != -1 {
		t.Errorf("waitForHeadService = %v after %d reads; want the Service on the third", err, 2-f.serviceAfter.Load())
	}

	f.serviceAfter.Store(1 << 30)
	// Safe on a busy machine: the Service never comes, read or not before the bound.
	d.retryFor = 100 * time.Millisecond
	err := d.waitForHeadService(ctx)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "does not exist after 100ms") ||
		!strings.Contains(err.Error(), "Ray Operator runs") {
		t.Errorf("waitForHeadService of a Service that never comes: %v; want it said, not a timeout of the caller", err)
	}
}
