package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

const (
	// rayJobPoll is how often a job's status is read: every second, as the Jobs REST API's polling
	// example does.
	rayJobPoll = time.Second
	// rayJobHeartbeat is how often a job that keeps its status is reported still there.
	rayJobHeartbeat = 5 * time.Minute
	// rayJobStopTimeout bounds the stop of a job the action gives up on.
	rayJobStopTimeout = 30 * time.Second
	// rayJobLogLines is how much of a failed job's logs its error shows.
	rayJobLogLines = 20
)

// rayJobRun is one invocation of raytpu_submit_ray_job: the job it submits or finds, followed to
// its end.
type rayJobRun struct {
	dash *kube.RayDashboard
	job  kube.RayJobRequest
	// chosenID is whether the configuration chose the submission id: only then may a job of that
	// id exist before the action submits it.
	chosenID bool
	// following is set once the job is known to be on the cluster.
	following       bool
	poll, heartbeat time.Duration
	say             func(format string, args ...any)
}

// run submits the job, or finds the one of its id, and follows it until it ends or ctx does;
// parent is the invocation's own context, which ends only when Terraform cancels it.
func (r *rayJobRun) run(ctx, parent context.Context) diag.Diagnostics {
	var diags diag.Diagnostics
	id := r.job.SubmissionID
	submit := true
	if r.chosenID {
		info, err := r.dash.RayJob(ctx, id)
		switch {
		case errors.Is(err, kube.ErrRayJobNotFound):
		case err != nil:
			return r.interrupted(ctx, parent, err)
		case info.Status == kube.RayJobSucceeded:
			r.say("job %s has already SUCCEEDED; not submitted again", id)
			return nil
		case info.Status.Terminal():
			diags.AddAttributeError(path.Root("submission_id"), "Ray Job Already Ended",
				fmt.Sprintf("%s\n\nRay keeps a job's id for as long as its Ray cluster runs and runs one job per id: set submission_id "+
					"to a new value to run the job again.", r.ended(ctx, info)))
			return diags
		default:
			r.say("job %s is already %s; following it", id, info.Status)
			submit = false
		}
	}
	if submit {
		_, err := r.dash.SubmitRayJob(ctx, r.job)
		switch {
		case errors.Is(err, kube.ErrRayJobExists):
			// This submission's own, sent again after a lost answer, or another's of the same id.
			r.say("job %s was submitted already; following it", id)
		case err != nil:
			return r.interrupted(ctx, parent, err)
		default:
			r.say("submitted job %s", id)
		}
	}
	r.following = true
	info, err := r.follow(ctx)
	if err != nil {
		return r.interrupted(ctx, parent, err)
	}
	if info.Status == kube.RayJobSucceeded {
		return nil
	}
	diags.AddError("Ray Job Failed", r.ended(ctx, info)+"\n\nFix what the logs show and invoke the action again.")
	return diags
}

// follow reads the job's status every poll until it ends, saying each new status and, every
// heartbeat, one that stays.
func (r *rayJobRun) follow(ctx context.Context) (kube.RayJobInfo, error) {
	id := r.job.SubmissionID
	var last kube.RayJobStatus
	start := time.Now()
	said := start
	for {
		info, err := r.dash.RayJob(ctx, id)
		if err != nil {
			return info, err
		}
		switch {
		case info.Status != last:
			r.say("job %s %s: %s", id, info.Status, firstLine(info.Message))
			last, said = info.Status, time.Now()
		case time.Since(said) >= r.heartbeat:
			r.say("job %s still %s after %s", id, info.Status, time.Since(start).Round(time.Second))
			said = time.Now()
		}
		if info.Status.Terminal() {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(r.poll):
		}
	}
}

// interrupted is the error of a run cut short by err: the timeout, Terraform's cancellation, or
// the dashboard out of reach. A job that may still run is stopped when the run ends.
func (r *rayJobRun) interrupted(ctx, parent context.Context, err error) diag.Diagnostics {
	var diags diag.Diagnostics
	id := r.job.SubmissionID
	switch {
	case parent.Err() != nil:
		diags.AddError("Ray Job Interrupted", fmt.Sprintf("Terraform cancelled the action while it waited for Ray job %s; %s.", id, r.stop(parent)))
	case ctx.Err() != nil:
		diags.AddError("Ray Job Timed Out",
			fmt.Sprintf("Ray job %s did not end within timeout; %s. Raise timeout if the job needs longer.", id, r.stop(parent)))
	case r.following:
		diags.AddError(rayJobSummary, fmt.Sprintf("Ray job %s: %s\n\nThe job may still run: invoke the action again with "+
			"submission_id = %q to follow it, or stop it with `ray job stop %s`.", id, err, id, id))
	default:
		diags.AddError(rayJobSummary, fmt.Sprintf("Ray job %s: %s\n\nCheck that the RayCluster's head Pod runs, then invoke the "+
			"action again.", id, err))
	}
	return diags
}

// stop stops the job, if it was submitted, with a context of its own: the run's has ended.
func (r *rayJobRun) stop(parent context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), rayJobStopTimeout)
	defer cancel()
	stopped, err := r.dash.StopRayJob(ctx, r.job.SubmissionID)
	switch {
	case errors.Is(err, kube.ErrRayJobNotFound):
		return "it had not been submitted"
	case err != nil:
		return fmt.Sprintf("stopping it failed, so it may still run (stop it with `ray job stop %s`): %s", r.job.SubmissionID, err)
	case stopped:
		return "the job was stopped"
	}
	return "it had ended already"
}

// ended says how a job ended: its id, status and message, and the tail of its logs.
func (r *rayJobRun) ended(ctx context.Context, info kube.RayJobInfo) string {
	id := r.job.SubmissionID
	out := fmt.Sprintf("Ray job %s ended %s: %s", id, info.Status, firstLine(info.Message))
	logs, err := r.dash.RayJobLogs(ctx, id)
	switch tail := lastLines(logs, rayJobLogLines); {
	case err != nil:
		out += fmt.Sprintf("\n\nIts logs could not be read: %s", err)
	case tail == "":
		out += "\n\nIt wrote no logs."
	default:
		out += fmt.Sprintf("\n\nThe last lines of its logs (`ray job logs %s` shows them all):\n%s", id, tail)
	}
	return out
}

// firstLine is a message's first line: a failed job's message goes on with its logs, which the
// error shows on their own.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// lastLines is the last n lines of logs, each cut to a readable length.
func lastLines(logs string, n int) string {
	const width = 500
	lines := strings.Split(strings.TrimRight(logs, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > width {
			lines[i] = strings.ToValidUTF8(l[:width], "") + "…"
		}
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
