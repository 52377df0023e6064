package raydashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// JobStatus is a job's status, Ray's (ray.job_submission.JobStatus).
type JobStatus string

const (
	JobPending   JobStatus = "PENDING"
	JobRunning   JobStatus = "RUNNING"
	JobStopped   JobStatus = "STOPPED"
	JobSucceeded JobStatus = "SUCCEEDED"
	JobFailed    JobStatus = "FAILED"
)

// Job is a submitted job as its submitter sent it, for Config.Outcome.
type Job struct {
	SubmissionID string
	Entrypoint   string
	RuntimeEnv   map[string]any
	Metadata     map[string]string
}

// job is a submitted job and what became of it.
type job struct {
	Job
	submitted time.Time
	// asksResources is whether the entrypoint asked for resources of its own.
	asksResources bool
	// ended is set once the job reached a terminal state, with its status, message and logs.
	ended   time.Time
	status  JobStatus
	message string
	logs    string
}

// jobSubmitRequest is the body of POST /api/jobs/ (Ray's JobSubmitRequest).
type jobSubmitRequest struct {
	Entrypoint   string            `json:"entrypoint"`
	SubmissionID string            `json:"submission_id"`
	JobID        string            `json:"job_id"` // deprecated name of submission_id
	RuntimeEnv   map[string]any    `json:"runtime_env"`
	Metadata     map[string]string `json:"metadata"`
	// What the entrypoint itself asks for, apart from its tasks and actors.
	NumCPUs   float64            `json:"entrypoint_num_cpus"`
	NumGPUs   float64            `json:"entrypoint_num_gpus"`
	Memory    int64              `json:"entrypoint_memory"`
	Resources map[string]float64 `json:"entrypoint_resources"`
}

// asksResources says whether the entrypoint asks for resources of its own.
func (r jobSubmitRequest) asksResources() bool {
	return r.NumCPUs > 0 || r.NumGPUs > 0 || r.Memory > 0 || len(r.Resources) > 0
}

// jobDetails is Ray's JobDetails, as GET /api/jobs/{id} and the list send it.
type jobDetails struct {
	Type         string            `json:"type"`
	JobID        string            `json:"job_id"`
	SubmissionID string            `json:"submission_id"`
	Status       JobStatus         `json:"status"`
	Entrypoint   string            `json:"entrypoint"`
	Message      string            `json:"message"`
	StartTime    uint64            `json:"start_time"`
	EndTime      uint64            `json:"end_time,omitempty"`
	Metadata     map[string]string `json:"metadata"`
	RuntimeEnv   map[string]any    `json:"runtime_env"`
}

func (d *Dashboard) submitJob(w http.ResponseWriter, r *http.Request) {
	var req jobSubmitRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "invalid job submission: "+err.Error(), http.StatusBadRequest)
		return
	}
	if strings.TrimSpace(req.Entrypoint) == "" {
		http.Error(w, "invalid job submission: entrypoint is required", http.StatusBadRequest)
		return
	}
	id := req.SubmissionID
	if id == "" {
		id = req.JobID
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if id == "" {
		d.seq++
		id = fmt.Sprintf("raysubmit_%016d", d.seq)
	}
	if _, taken := d.jobs[id]; taken {
		http.Error(w, fmt.Sprintf("Job with submission_id %s already exists. Please use a different submission_id.", id), http.StatusBadRequest)
		return
	}
	d.jobs[id] = &job{Job: Job{SubmissionID: id, Entrypoint: req.Entrypoint, RuntimeEnv: req.RuntimeEnv, Metadata: req.Metadata},
		submitted: d.cfg.Now(), asksResources: req.asksResources()}
	writeJSON(w, map[string]string{"job_id": id, "submission_id": id})
}

// withJob runs do with the job the path names, settled at now, under d.mu; 404 for an unknown one.
func (d *Dashboard) withJob(w http.ResponseWriter, r *http.Request, do func(j *job, now time.Time)) {
	id := r.PathValue("id")
	now := d.cfg.Now()
	d.settle(now)
	d.mu.Lock()
	defer d.mu.Unlock()
	j, ok := d.jobs[id]
	if !ok {
		http.Error(w, fmt.Sprintf("Job %s does not exist", id), http.StatusNotFound)
		return
	}
	do(j, now)
}

func (d *Dashboard) getJob(w http.ResponseWriter, r *http.Request) {
	d.withJob(w, r, func(j *job, now time.Time) { writeJSON(w, d.details(j, now)) })
}

func (d *Dashboard) jobLogs(w http.ResponseWriter, r *http.Request) {
	d.withJob(w, r, func(j *job, _ time.Time) { writeJSON(w, map[string]string{"logs": j.logs}) })
}

// deleteJob deletes a job in a terminal state only, as Ray does.
func (d *Dashboard) deleteJob(w http.ResponseWriter, r *http.Request) {
	d.withJob(w, r, func(j *job, _ time.Time) {
		if !terminal(j.status) {
			http.Error(w, fmt.Sprintf("Job %s is not in a terminal state: %s", j.SubmissionID, j.status), http.StatusBadRequest)
			return
		}
		delete(d.jobs, j.SubmissionID)
		writeJSON(w, map[string]bool{"deleted": true})
	})
}

// stopJob stops a job that has not ended; "stopped" says whether it did.
func (d *Dashboard) stopJob(w http.ResponseWriter, r *http.Request) {
	d.withJob(w, r, func(j *job, now time.Time) {
		stopped := !terminal(j.status)
		if stopped {
			j.ended, j.status, j.message = now, JobStopped, "Job was intentionally stopped."
		}
		writeJSON(w, map[string]bool{"stopped": stopped})
	})
}

func (d *Dashboard) listJobs() []jobDetails {
	now := d.cfg.Now()
	d.settle(now)
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]jobDetails, 0, len(d.jobs))
	for _, j := range d.jobs {
		out = append(out, d.details(j, now))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].SubmissionID < out[b].SubmissionID })
	return out
}

func terminal(s JobStatus) bool { return s == JobStopped || s == JobSucceeded || s == JobFailed }

// settle ends every job that has run its time by now, as Config.Outcome says. Outcome is called
// with d.mu released; a job stopped meanwhile stays STOPPED.
func (d *Dashboard) settle(now time.Time) {
	runFor := d.cfg.JobStartTime + d.cfg.JobRunTime
	d.mu.Lock()
	var due []*job
	var sent []Job
	for _, j := range d.jobs {
		if !terminal(j.status) && now.Sub(j.submitted) >= runFor {
			due, sent = append(due, j), append(sent, j.Job)
		}
	}
	d.mu.Unlock()
	type result struct {
		status JobStatus
		logs   string
	}
	results := make([]result, len(sent))
	for i, job := range sent {
		results[i] = result{JobSucceeded, ""}
		if d.cfg.Outcome != nil {
			results[i].status, results[i].logs = d.cfg.Outcome(job)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, j := range due {
		// A job whose outcome is RUNNING runs until it is stopped.
		if terminal(j.status) || results[i].status == JobRunning {
			continue
		}
		j.ended, j.status, j.logs = j.submitted.Add(runFor), results[i].status, results[i].logs
		switch j.status {
		case JobSucceeded:
			j.message = "Job finished successfully."
		case JobFailed:
			j.message = "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\n" + j.logs
		}
	}
}

// pendingMessage is what Ray's JobInfo says of a PENDING job: not started, and what it may be
// waiting for.
func pendingMessage(j *job) string {
	m := "Job has not started yet."
	if j.asksResources {
		m += " It may be waiting for resources (CPUs, GPUs, memory, custom resources) to become available."
	}
	if len(j.RuntimeEnv) > 0 {
		m += " It may be waiting for the runtime environment to be set up."
	}
	return m
}

// details is j's JobDetails at now. Called with d.mu held, after settle.
func (d *Dashboard) details(j *job, now time.Time) jobDetails {
	status, message := j.status, j.message
	var start time.Time
	switch {
	case terminal(status):
		// A job stopped while PENDING never started.
		if started := j.submitted.Add(d.cfg.JobStartTime); !j.ended.Before(started) {
			start = started
		}
	case now.Sub(j.submitted) < d.cfg.JobStartTime:
		status, message = JobPending, pendingMessage(j)
	default:
		status, message, start = JobRunning, "Job is currently running.", j.submitted.Add(d.cfg.JobStartTime)
	}
	return jobDetails{Type: "SUBMISSION", JobID: j.SubmissionID, SubmissionID: j.SubmissionID, Status: status,
		Entrypoint: j.Entrypoint, Message: message, StartTime: unixMillis(start), EndTime: unixMillis(j.ended),
		Metadata: j.Metadata, RuntimeEnv: j.RuntimeEnv}
}
