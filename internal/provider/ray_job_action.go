package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var _ action.ActionWithConfigure = (*submitRayJobAction)(nil)

// Ray's documented way to run work on a running Ray cluster is a job submitted to its dashboard's
// Jobs API (docs.ray.io/en/latest/cluster/running-applications/job-submission/rest.html): an
// entrypoint command and its runtime environment, run once to completion or failure. The action
// submits one to a RayCluster through the cluster's API server (kube.RayDashboard) and waits for
// it to end, as `ray job submit` does without --no-wait.

// NewSubmitRayJobAction returns raytpu_submit_ray_job: run a Ray job on a RayCluster.
func NewSubmitRayJobAction() action.Action {
	return &submitRayJobAction{}
}

type submitRayJobAction struct {
	actionBase
}

type rayJobActionModel struct {
	RayCluster          types.String  `tfsdk:"ray_cluster"`
	Entrypoint          types.String  `tfsdk:"entrypoint"`
	RuntimeEnv          types.String  `tfsdk:"runtime_env"`
	Metadata            types.Map     `tfsdk:"metadata"`
	SubmissionID        types.String  `tfsdk:"submission_id"`
	EntrypointNumCPUs   types.Float64 `tfsdk:"entrypoint_num_cpus"`
	EntrypointResources types.Map     `tfsdk:"entrypoint_resources"`
	Timeout             types.String  `tfsdk:"timeout"`
}

const (
	rayJobTimeout = time.Hour
	rayJobSummary = "Error Submitting Ray Job"
)

// submissionIDPattern keeps an id to what fits in the Jobs API's paths (/api/jobs/{id}).
var submissionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

func (a *submitRayJobAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_submit_ray_job"
}

func (a *submitRayJobAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	timeout := actionTimeoutAttribute("the job", rayJobTimeout)
	timeout.MarkdownDescription += " A job still running then is stopped."
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Submits a job to a RayCluster through Ray's Jobs API, as `ray job submit` does, and waits for it to end: " +
			"an entrypoint command with its runtime environment, run once. Progress messages follow the job from `PENDING` to " +
			"`RUNNING` to its end; a job that ends `FAILED` or `STOPPED` fails the action with its message and the last lines " +
			"of its logs. The dashboard is reached through the cluster's API server, with the provider's credentials.",
		Attributes: map[string]actionschema.Attribute{
			"ray_cluster": actionschema.StringAttribute{
				Required: true,
				MarkdownDescription: "Id of the RayCluster to run the job on, `{cluster_id}/rayClusters/{namespace}/{name}`: the `id` " +
					"of a `raytpu_ray_cluster`.",
				Validators: []validator.String{rayClusterIDValidator{}},
			},
			"entrypoint": actionschema.StringAttribute{
				Required: true,
				MarkdownDescription: "Shell command that runs the job, such as `python train.py --steps=1000`. It runs on the head " +
					"unless `entrypoint_num_cpus` or `entrypoint_resources` ask for what only workers have.",
				Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`\S`), "must not be blank")},
			},
			"runtime_env": actionschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Ray runtime environment of the job as a JSON object, written with `jsonencode`: `working_dir`, " +
					"`pip`, `env_vars`, `py_modules` and the rest, as Ray documents them. `working_dir` and `py_modules` must be " +
					"remote URIs (`gs://`, `https://` zip files): the Jobs API does not upload local directories.",
				Validators: []validator.String{jsonObjectValidator{}},
			},
			"metadata": actionschema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Metadata Ray keeps with the job, shown by `ray job list`.",
			},
			"submission_id": actionschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Id of the job. Ray runs one job per id: when a job of this id has already succeeded, the " +
					"action does not submit it again, and when it is still running, the action waits for it. When unset, each " +
					"invocation submits a new job under a fresh id.",
				Validators: []validator.String{stringvalidator.RegexMatches(submissionIDPattern,
					"must be up to 128 letters, digits, '_', '.' or '-', starting with a letter or digit")},
			},
			"entrypoint_num_cpus": actionschema.Float64Attribute{
				Optional:            true,
				MarkdownDescription: "CPUs reserved for the entrypoint command itself, apart from the tasks and actors it starts.",
				Validators:          []validator.Float64{float64validator.AtLeast(0)},
			},
			"entrypoint_resources": actionschema.MapAttribute{
				Optional:    true,
				ElementType: types.Float64Type,
				MarkdownDescription: "Ray resources reserved for the entrypoint command itself, such as `{ TPU = 4 }` to run it on a " +
					"TPU host.",
				Validators: []validator.Map{mapvalidator.ValueFloat64sAre(float64validator.AtLeast(0))},
			},
			"timeout": timeout,
		},
	}
}

func (a *submitRayJobAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m rayJobActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	timeout, diags := actionTimeout(ctx, req.Config, "timeout", rayJobTimeout)
	resp.Diagnostics.Append(diags...)
	job, diags := m.request(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	cluster, namespace, name, err := parseRayClusterID(m.RayCluster.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ray_cluster"), "Invalid Ray Cluster ID", err.Error()+": use the id attribute of raytpu_ray_cluster.")
		return
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError(rayJobSummary, fmt.Sprintf("submitting a job to RayCluster %s/%s of cluster %s: ", namespace, name, cluster)+
			fmt.Sprintf(format, args...))
	}
	client, err := a.data.gkeClient(runCtx)
	if err != nil {
		fail("%s", err)
		return
	}
	gkeCluster, err := client.GetCluster(runCtx, cluster)
	if err != nil {
		fail("reading the cluster: %s", gke.WithAdvice(err))
		return
	}
	k, err := kubeClient(client, accessOf(gkeCluster))
	if err != nil {
		fail("reaching its API server: %s", err)
		return
	}
	defer k.Close()
	dash, err := k.RayDashboard(runCtx, namespace, name)
	switch {
	case errors.Is(err, kube.ErrRayClusterNotFound):
		fail("%s: create it with raytpu_ray_cluster before invoking the action.", err)
		return
	case err != nil:
		fail("%s", err)
		return
	}
	run := &rayJobRun{dash: dash, job: job, chosenID: !m.SubmissionID.IsNull(), poll: rayJobPoll, heartbeat: rayJobHeartbeat,
		say: func(format string, args ...any) {
			if resp.SendProgress != nil {
				resp.SendProgress(action.InvokeProgressEvent{Message: namespace + "/" + name + ": " + fmt.Sprintf(format, args...)})
			}
		}}
	resp.Diagnostics.Append(run.run(runCtx, ctx)...)
}

// request is the submission the configuration asks for; without a submission_id it gets a fresh
// one, so that a submission sent again after a lost answer finds its own job instead of starting
// a second one.
func (m rayJobActionModel) request(ctx context.Context) (kube.RayJobRequest, diag.Diagnostics) {
	r := kube.RayJobRequest{Entrypoint: m.Entrypoint.ValueString(), SubmissionID: m.SubmissionID.ValueString(),
		EntrypointNumCPUs: m.EntrypointNumCPUs.ValueFloat64()}
	if !m.RuntimeEnv.IsNull() {
		r.RuntimeEnv = json.RawMessage(m.RuntimeEnv.ValueString())
	}
	var diags diag.Diagnostics
	if !m.Metadata.IsNull() {
		diags.Append(m.Metadata.ElementsAs(ctx, &r.Metadata, false)...)
	}
	if !m.EntrypointResources.IsNull() {
		diags.Append(m.EntrypointResources.ElementsAs(ctx, &r.EntrypointResources, false)...)
	}
	if r.SubmissionID == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		r.SubmissionID = "raytpu-" + hex.EncodeToString(b)
	}
	return r, diags
}
