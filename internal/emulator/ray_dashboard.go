package emulator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/raydashboard"
)

// rayDashboardConfig is how the Ray dashboards of the cluster's RayClusters answer (packages
// rayproxy and raydashboard). INFERRED: a changed Serve application is DEPLOYING for two seconds,
// long enough for a client to see it deploying, short enough for tests; a job is PENDING for one
// second and RUNNING for two, then ends as SetRayJobOutcome says (or runs on until stopped).
func (e *Emulator) rayDashboardConfig(cluster string) raydashboard.Config {
	return raydashboard.Config{
		DeployTime:   2 * time.Second,
		JobStartTime: time.Second,
		JobRunTime:   2 * time.Second,
		Outcome: func(job raydashboard.Job) (raydashboard.JobStatus, string) {
			e.ctl.mu.Lock()
			defer e.ctl.mu.Unlock()
			for i := len(e.ctl.rayJobs) - 1; i >= 0; i-- {
				if o := e.ctl.rayJobs[i]; o.Cluster == cluster && strings.Contains(job.Entrypoint, o.Match) {
					return raydashboard.JobStatus(o.Status), o.Logs
				}
			}
			return raydashboard.JobSucceeded, ""
		},
	}
}

// SetRayJobOutcome implements Controller.
func (e *Emulator) SetRayJobOutcome(_ context.Context, o RayJobOutcome) error {
	if o.Cluster == "" || o.Match == "" {
		return fmt.Errorf("a Ray job outcome needs cluster and match")
	}
	switch raydashboard.JobStatus(o.Status) {
	case raydashboard.JobSucceeded, raydashboard.JobFailed, raydashboard.JobRunning:
	default:
		return fmt.Errorf("a Ray job outcome's status must be SUCCEEDED, FAILED or RUNNING, not %q", o.Status)
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	e.ctl.rayJobs = append(e.ctl.rayJobs, o)
	return nil
}
