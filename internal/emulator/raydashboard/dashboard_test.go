package raydashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/dashboardclient"
	utiltypes "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/types"
)

// clock is a settable time for the dashboard's Config.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time        { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration)   { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func newClock() *clock                 { return &clock{now: time.Unix(1_790_000_000, 0)} }
func ctx(t *testing.T) context.Context { return t.Context() }
func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// kubeRayClient is KubeRay's own dashboard client (ray-operator v1.5.0) pointed at d.
func kubeRayClient(t *testing.T, d *Dashboard) dashboardclient.RayDashboardClientInterface {
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	c := &dashboardclient.RayDashboardClient{}
	c.InitClient(srv.Client(), srv.URL)
	return c
}

const tpuServeConfig = `{"applications":[{"name":"llm","route_prefix":"/","import_path":"serve_tpu:model",
  "runtime_env":{"pip":["jax[tpu]"]},
  "deployments":[{"name":"Model","num_replicas":2,"ray_actor_options":{"num_cpus":1,"resources":{"TPU":4}}}]}]}`

// A Serve config goes through KubeRay's client: DEPLOYING, then RUNNING with its deployments
// HEALTHY; sent again unchanged it stays RUNNING; changed, it deploys again; an application left
// out is removed.
func TestServeApplicationsThroughKubeRaysClient(t *testing.T) {
	clk := newClock()
	d := New(Config{Now: clk.Now, DeployTime: 5 * time.Second})
	c := kubeRayClient(t, d)

	mustOK(t, c.UpdateDeployments(ctx(t), []byte(tpuServeConfig)))
	st, err := c.GetMultiApplicationStatus(ctx(t))
	mustOK(t, err)
	if st["llm"] == nil || st["llm"].Status != AppDeploying || st["llm"].Deployments["Model"].Status != DeploymentUpdating {
		t.Fatalf("right after the PUT: %+v, want llm DEPLOYING with Model UPDATING", st["llm"])
	}
	clk.Add(5 * time.Second)
	st, err = c.GetMultiApplicationStatus(ctx(t))
	mustOK(t, err)
	if st["llm"].Status != AppRunning || st["llm"].Deployments["Model"].Status != DeploymentHealthy {
		t.Fatalf("after the deploy time: %+v, want RUNNING and HEALTHY", st["llm"])
	}

	mustOK(t, c.UpdateDeployments(ctx(t), []byte(tpuServeConfig)))
	if st, _ = c.GetMultiApplicationStatus(ctx(t)); st["llm"].Status != AppRunning {
		t.Errorf("the same config again: llm is %s, want it RUNNING on", st["llm"].Status)
	}
	changed := strings.Replace(tpuServeConfig, `"num_replicas":2`, `"num_replicas":3`, 1)
	mustOK(t, c.UpdateDeployments(ctx(t), []byte(changed)))
	if st, _ = c.GetMultiApplicationStatus(ctx(t)); st["llm"].Status != AppDeploying {
		t.Errorf("a changed config: llm is %s, want DEPLOYING", st["llm"].Status)
	}

	mustOK(t, c.UpdateDeployments(ctx(t), []byte(`{"applications":[{"name":"other","route_prefix":"/o","import_path":"m:app"}]}`)))
	details, err := c.GetServeDetails(ctx(t))
	mustOK(t, err)
	if _, ok := details.Applications["llm"]; ok || len(details.Applications) != 1 || details.DeployMode != "MULTI_APP" {
		t.Errorf("after a config without llm: %+v, want only other, MULTI_APP", details)
	}
}

// A deployment whose resources cannot be placed keeps its application DEPLOYING, saying why.
func TestServeDeploymentThatCannotBePlaced(t *testing.T) {
	var asked map[string]float64
	d := New(Config{Place: func(app, dep string, replicas int, res map[string]float64) (bool, string) {
		asked = res
		return false, "2 replicas need TPU 4 each; the cluster has no TPU worker free"
	}})
	c := kubeRayClient(t, d)
	mustOK(t, c.UpdateDeployments(ctx(t), []byte(tpuServeConfig)))
	st, err := c.GetMultiApplicationStatus(ctx(t))
	mustOK(t, err)
	if st["llm"].Status != AppDeploying || !strings.Contains(st["llm"].Message, "no TPU worker free") {
		t.Errorf("unplaceable: %+v, want DEPLOYING saying why", st["llm"])
	}
	if asked["TPU"] != 4 || asked["CPU"] != 1 {
		t.Errorf("Place was asked for %v, want TPU 4 and CPU 1 per replica", asked)
	}
}

// Bad Serve configs are refused with 400 and change nothing; unknown paths are 404, known paths
// with another method 405.
func TestServeConfigRefused(t *testing.T) {
	d := New(Config{})
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	for name, body := range map[string]string{
		"not JSON":          `applications:`,
		"no import path":    `{"applications":[{"name":"a"}]}`,
		"two of one name":   `{"applications":[{"name":"a","import_path":"m:a","route_prefix":"/a"},{"name":"a","import_path":"m:b","route_prefix":"/b"}]}`,
		"one route for two": `{"applications":[{"name":"a","import_path":"m:a"},{"name":"b","import_path":"m:b"}]}`,
	} {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+servePath, strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		mustOK(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, resp.StatusCode)
		}
	}
	if got := d.serveDetails(); len(got.Applications) != 0 {
		t.Errorf("refused configs left applications: %v", got.Applications)
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPatch, servePath, http.StatusMethodNotAllowed},
		{http.MethodGet, jobsPath + "nope", http.StatusNotFound},
		{http.MethodGet, "/api/cluster_status", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := srv.Client().Do(req)
		mustOK(t, err)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

// A job goes PENDING, RUNNING, then ends as Outcome says, with its logs, or runs on when Outcome
// says RUNNING; stop ends a running one;
// delete takes only a finished one; an unknown one is 404, which KubeRay reads as "does not exist".
func TestJobsThroughKubeRaysClient(t *testing.T) {
	clk := newClock()
	d := New(Config{Now: clk.Now, JobStartTime: time.Second, JobRunTime: 3 * time.Second,
		Outcome: func(j Job) (JobStatus, string) {
			switch {
			case strings.Contains(j.Entrypoint, "fail"):
				return JobFailed, "Traceback (most recent call last):\nRuntimeError: TPU not found"
			case strings.Contains(j.Entrypoint, "forever"):
				return JobRunning, ""
			}
			return JobSucceeded, "done"
		}})
	c := kubeRayClient(t, d)

	id, err := c.SubmitJobReq(ctx(t), &utiltypes.RayJobRequest{Entrypoint: "python train.py", SubmissionId: "train-1",
		RuntimeEnv: utiltypes.RuntimeEnvType{"pip": []any{"jax"}}, Metadata: map[string]string{"owner": "raytpu"}})
	mustOK(t, err)
	if id != "train-1" {
		t.Fatalf("submission id %q, want the one sent", id)
	}
	if _, err := c.SubmitJobReq(ctx(t), &utiltypes.RayJobRequest{Entrypoint: "python train.py", SubmissionId: "train-1"}); err == nil {
		t.Error("a second job with the same submission id was taken")
	}
	status := func(id string) utiltypes.RayJobInfo {
		t.Helper()
		info, err := c.GetJobInfo(ctx(t), id)
		mustOK(t, err)
		return *info
	}
	if s := status(id); s.JobStatus != "PENDING" || s.Metadata["owner"] != "raytpu" || s.Entrypoint != "python train.py" ||
		s.Message != "Job has not started yet. It may be waiting for the runtime environment to be set up." {
		t.Errorf("just submitted: %+v, want PENDING with its entrypoint, metadata and Ray's message for a job with a runtime env", s)
	}
	tpuEntry, err := c.SubmitJobReq(ctx(t), &utiltypes.RayJobRequest{Entrypoint: "python probe.py", Resources: map[string]float32{"TPU": 4}})
	mustOK(t, err)
	if s := status(tpuEntry); s.Message != "Job has not started yet. It may be waiting for resources (CPUs, GPUs, memory, custom resources) to become available." {
		t.Errorf("a job whose entrypoint asks for TPUs: message %q, want Ray's for one waiting for resources", s.Message)
	}
	clk.Add(time.Second)
	if s := status(id); s.JobStatus != "RUNNING" || s.StartTime == 0 {
		t.Errorf("after the start time: %+v, want RUNNING with a start time", s)
	}
	if err := c.DeleteJob(ctx(t), id); err != nil || status(id).JobStatus != "RUNNING" {
		t.Errorf("deleting a running job: err %v, status %s; want it kept", err, status(id).JobStatus)
	}
	clk.Add(3 * time.Second)
	if s := status(id); s.JobStatus != "SUCCEEDED" || s.EndTime == 0 {
		t.Errorf("after its run time: %+v, want SUCCEEDED with an end time", s)
	}

	failing, err := c.SubmitJobReq(ctx(t), &utiltypes.RayJobRequest{Entrypoint: "python fail.py"})
	mustOK(t, err)
	clk.Add(4 * time.Second)
	if s := status(failing); s.JobStatus != "FAILED" || !strings.Contains(s.Message, "RuntimeError: TPU not found") {
		t.Errorf("a failing job: %+v, want FAILED with its logs' tail in the message", s)
	}
	logs, err := c.GetJobLog(ctx(t), failing)
	mustOK(t, err)
	if logs == nil || !strings.HasSuffix(*logs, "RuntimeError: TPU not found") {
		t.Errorf("logs of the failing job: %v", logs)
	}

	long, err := c.SubmitJobReq(ctx(t), &utiltypes.RayJobRequest{Entrypoint: "python serve_forever.py"})
	mustOK(t, err)
	clk.Add(time.Hour)
	if s := status(long); s.JobStatus != "RUNNING" || s.EndTime != 0 {
		t.Errorf("a job whose outcome is RUNNING, an hour on: %+v, want it RUNNING still", s)
	}
	mustOK(t, c.StopJob(ctx(t), long))
	if s := status(long); s.JobStatus != "STOPPED" {
		t.Errorf("a stopped job is %s, want STOPPED", s.JobStatus)
	}
	mustOK(t, c.StopJob(ctx(t), id)) // already SUCCEEDED: KubeRay takes "not stopped" of a finished job

	jobs, err := c.ListJobs(ctx(t))
	mustOK(t, err)
	if len(*jobs) != 4 {
		t.Errorf("listed %d jobs, want 4", len(*jobs))
	}
	mustOK(t, c.DeleteJob(ctx(t), id))
	if _, err := c.GetJobInfo(ctx(t), id); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a deleted job: %v, want KubeRay's does-not-exist error", err)
	}
}

// Place and Outcome run without the dashboard's lock, so that they may call back into the
// emulator and Kubernetes.
func TestConfigFunctionsRunWithoutTheLock(t *testing.T) {
	var d *Dashboard
	heldIn := []string{}
	free := func(what string) {
		if !d.mu.TryLock() {
			heldIn = append(heldIn, what)
			return
		}
		d.mu.Unlock()
	}
	d = New(Config{
		Place:   func(string, string, int, map[string]float64) (bool, string) { free("Place"); return true, "" },
		Outcome: func(Job) (JobStatus, string) { free("Outcome"); return JobSucceeded, "" },
	})
	c := kubeRayClient(t, d)
	mustOK(t, c.UpdateDeployments(ctx(t), []byte(tpuServeConfig)))
	_, err := c.GetMultiApplicationStatus(ctx(t))
	mustOK(t, err)
	id, err := c.SubmitJobReq(ctx(t), &utiltypes.RayJobRequest{Entrypoint: "python x.py"})
	mustOK(t, err)
	info, err := c.GetJobInfo(ctx(t), id)
	mustOK(t, err)
	if info.JobStatus != "SUCCEEDED" {
		t.Fatalf("job %s, want SUCCEEDED at once with no run time", info.JobStatus)
	}
	if len(heldIn) != 0 {
		t.Errorf("the dashboard's lock was held while calling %v", heldIn)
	}
}
