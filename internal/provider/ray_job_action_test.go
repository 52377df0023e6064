package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// jobsCluster is the cluster of TestAccSubmitRayJob: a single-host v6e slice and RayCluster
// "jobs" with a worker on it.
const jobsCluster = "acc-ray-jobs"

func jobsConfig(actions string) string {
	return testAccSliceConfig(jobsCluster, v6eSlice("one", "2x2", "")+`
resource "raytpu_ray_cluster" "jobs" {
  cluster_id    = raytpu_cluster.test.id
  name          = "jobs"
  worker_groups = [{ name = "one", slices = [raytpu_slice.one.id] }]
}
`+actions)
}

// rayJobAction is raytpu_submit_ray_job <name> on RayCluster jobs, invoked when the terraform_data
// of the same name is created or its input changes. The input refers to the RayCluster, so that
// the job goes to a RayCluster that runs.
func rayJobAction(name, input, config string) string {
	return fmt.Sprintf(`
action "raytpu_submit_ray_job" %q {
  config {
    ray_cluster = raytpu_ray_cluster.jobs.id
    %s
  }
}
`, name, config) + trigger(name, "action.raytpu_submit_ray_job."+name, "${raytpu_ray_cluster.jobs.id} run "+input)
}

const helloJob = `
    entrypoint    = "python -c 'print(1)'"
    submission_id = "hello-1"
    runtime_env   = jsonencode({ env_vars = { GREETING = "hi" } })`

// TestAccSubmitRayJob runs jobs on a RayCluster through the emulator's Ray dashboard: one that
// succeeds, followed from PENDING to SUCCEEDED with its runtime env as configured; the same again,
// which Ray already ran under its submission id and is not submitted twice; one whose entrypoint
// fails, whose error has the tail of its logs; one that outlives its timeout and is stopped; one
// for a RayCluster that does not exist.
func TestAccSubmitRayJob(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.Actions)
	progress := &progressRecorder{}
	var failLogs []string
	for i := 1; i < 30; i++ {
		failLogs = append(failLogs, fmt.Sprintf("step %d of 30", i))
	}
	failLogs = append(failLogs, "ValueError: no TPU")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: progress.factories(),
		Steps: []resource.TestStep{
			{
				Config: jobsConfig(rayJobAction("hello", "1", helloJob)),
				Check: func(*terraform.State) error {
					if err := progress.saidInOrder("default/jobs: submitted job hello-1", "job hello-1 PENDING: Job has not started yet.",
						"job hello-1 RUNNING: Job is currently running.", "job hello-1 SUCCEEDED: Job finished successfully."); err != nil {
						return err
					}
					var job struct {
						Status     string         `json:"status"`
						RuntimeEnv map[string]any `json:"runtime_env"`
					}
					if err := json.Unmarshal(dashboardGet(t, "hello-1"), &job); err != nil {
						return err
					}
					if env, _ := job.RuntimeEnv["env_vars"].(map[string]any); job.Status != "SUCCEEDED" || env["GREETING"] != "hi" {
						return fmt.Errorf("the dashboard has job hello-1 %+v, want SUCCEEDED with env_vars GREETING=hi", job)
					}
					return nil
				},
			},
			{
				// Invoked again: Ray has run hello-1, and the action says so instead of submitting it.
				PreConfig: progress.reset,
				Config:    jobsConfig(rayJobAction("hello", "2", helloJob)),
				Check: func(*terraform.State) error {
					if err := progress.saidInOrder("job hello-1 has already SUCCEEDED; not submitted again"); err != nil {
						return err
					}
					var jobs []json.RawMessage
					if err := json.Unmarshal(dashboardGet(t, ""), &jobs); err != nil || len(jobs) != 1 {
						return fmt.Errorf("the dashboard has %d jobs (%v), want hello-1 alone", len(jobs), err)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					if err := testEmulator.SetRayJobOutcome(context.Background(), emulator.RayJobOutcome{
						Cluster: nodePoolIDFor(jobsCluster, "").Cluster.String(), Match: "train.py", Status: "FAILED",
						Logs: strings.Join(failLogs, "\n") + "\n",
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: jobsConfig(rayJobAction("train", "1", `entrypoint = "python train.py"`)),
				// The job's id, status, message, and its last 20 lines of logs (from step 11 on).
				ExpectError: regexp.MustCompile(`(?s)Ray Job Failed.*Ray job raytpu-[0-9a-f]{16} ended FAILED: Job entrypoint\s+command\s+failed\s+with\s+exit\s+code\s+1` +
					`.*them\s+all\):\s+step\s+11\s+of\s+30\s.*step\s+29\s+of\s+30\s+ValueError:\s+no\s+TPU`),
			},
			{
				// The job runs until it is stopped, so the timeout, whenever a busy machine gets it
				// submitted, is what ends the wait.
				PreConfig: func() {
					if err := testEmulator.SetRayJobOutcome(context.Background(), emulator.RayJobOutcome{
						Cluster: nodePoolIDFor(jobsCluster, "").Cluster.String(), Match: "slow.py", Status: "RUNNING",
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: jobsConfig(rayJobAction("slow", "1", `
    entrypoint    = "python slow.py"
    submission_id = "slow-1"
    timeout       = "15s"`)),
				ExpectError: regexp.MustCompile(`(?s)Ray Job Timed Out.*Ray job slow-1 did not end within timeout;\s+the\s+job\s+was\s+stopped`),
			},
			{
				// A RayCluster that does not exist: nothing to submit to.
				Config: jobsConfig(`
action "raytpu_submit_ray_job" "nowhere" {
  config {
    ray_cluster = "${raytpu_cluster.test.id}/rayClusters/default/nope"
    entrypoint  = "python train.py"
  }
}
` + trigger("nowhere", "action.raytpu_submit_ray_job.nowhere", "1")),
				ExpectError: regexp.MustCompile(`(?s)Error Submitting Ray Job.*RayCluster default/nope.*RayCluster not found:\s+create\s+it\s+with\s+raytpu_ray_cluster`),
			},
			{
				Config: jobsConfig(""),
				Check: func(*terraform.State) error {
					if body := string(dashboardGet(t, "slow-1")); !strings.Contains(body, `"status":"STOPPED"`) {
						return fmt.Errorf("job slow-1 after the timeout: %s; want STOPPED", body)
					}
					return nil
				},
			},
		},
	})
}

// dashboardGet reads /api/jobs/<id> of RayCluster jobs's dashboard through the API server's
// Service proxy, as a user would.
func dashboardGet(t *testing.T, id string) []byte {
	t.Helper()
	body, err := testClientset(t, jobsCluster).CoreV1().RESTClient().Get().
		AbsPath("/api/v1/namespaces/default/services/http:jobs-head-svc:dashboard/proxy/api/jobs/" + id).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /api/jobs/%s: %v (%s)", id, err, body)
	}
	return body
}

// progressRecorder serves the provider and keeps the progress messages of the actions it runs,
// which the CLI shows but terraform-plugin-testing does not pass on.
type progressRecorder struct {
	mu       sync.Mutex
	messages []string
}

// actionProviderServer is what the provider's server implements of Terraform's protocol.
// terraform-plugin-go v0.31 has the action and list methods only in these interfaces, which it
// marks deprecated for the day they join ProviderServer.
type actionProviderServer interface {
	tfprotov6.ProviderServerWithActions      //nolint:staticcheck // see above
	tfprotov6.ProviderServerWithListResource //nolint:staticcheck // see above
}

type recordingServer struct {
	actionProviderServer
	r *progressRecorder
}

func (p *progressRecorder) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"raytpu": func() (tfprotov6.ProviderServer, error) {
			s, err := providerserver.NewProtocol6WithError(New("test")())()
			if err != nil {
				return nil, err
			}
			srv, ok := s.(actionProviderServer)
			if !ok {
				return nil, fmt.Errorf("the provider's server %T serves no actions or list resources", s)
			}
			return recordingServer{srv, p}, nil
		},
	}
}

func (s recordingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	stream, err := s.actionProviderServer.InvokeAction(ctx, req)
	if err != nil || stream == nil {
		return stream, err
	}
	events := stream.Events
	stream.Events = iter.Seq[tfprotov6.InvokeActionEvent](func(yield func(tfprotov6.InvokeActionEvent) bool) {
		for e := range events {
			if p, ok := e.Type.(tfprotov6.ProgressInvokeActionEventType); ok {
				s.r.mu.Lock()
				s.r.messages = append(s.r.messages, p.Message)
				s.r.mu.Unlock()
			}
			if !yield(e) {
				return
			}
		}
	})
	return stream, nil
}

func (p *progressRecorder) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.messages = nil
}

// saidInOrder checks that progress messages containing each of want came, in that order.
func (p *progressRecorder) saidInOrder(want ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := 0
	for _, m := range p.messages {
		if i < len(want) && strings.Contains(m, want[i]) {
			i++
		}
	}
	if i < len(want) {
		return fmt.Errorf("progress messages %q do not say %q (after %q)", p.messages, want[i], want[:i])
	}
	return nil
}
