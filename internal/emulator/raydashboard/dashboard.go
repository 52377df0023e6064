package raydashboard

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// Config is what a Dashboard is built from. Its functions are called without the dashboard's
// lock held, so they may take locks of their own and call Kubernetes.
type Config struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// DeployTime is how long a changed Serve application stays DEPLOYING.
	DeployTime time.Duration
	// Place says whether a deployment's replicas can be placed with the resources each asks for
	// (Ray's resource names: "CPU", "TPU", "TPU-v6e-16-head", ...), and why not; nil places all.
	Place func(app, deployment string, replicas int, resources map[string]float64) (ok bool, why string)
	// JobStartTime and JobRunTime are how long a job stays PENDING, then RUNNING.
	JobStartTime, JobRunTime time.Duration
	// Outcome is how a job ends, SUCCEEDED or FAILED, with its logs, or RUNNING for a job that runs
	// until it is stopped; nil: SUCCEEDED, no logs.
	Outcome func(job Job) (status JobStatus, logs string)
}

// Dashboard is one RayCluster's dashboard: its Serve applications and its jobs.
type Dashboard struct {
	cfg    Config
	routes *http.ServeMux

	mu   sync.Mutex
	apps map[string]*application
	jobs map[string]*job
	seq  int
}

// New returns the dashboard of a RayCluster with no applications and no jobs.
func New(cfg Config) *Dashboard {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &Dashboard{cfg: cfg, apps: map[string]*application{}, jobs: map[string]*job{}}
	// One route table. Paths end in a slash, as Ray's docs write them ("Don't forget the
	// trailing slash!"); anything else is 404, a known path with another method 405.
	r := http.NewServeMux()
	r.HandleFunc("GET "+servePath+"{$}", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, d.serveDetails()) })
	r.HandleFunc("PUT "+servePath+"{$}", d.putApplications)
	r.HandleFunc("DELETE "+servePath+"{$}", func(w http.ResponseWriter, _ *http.Request) { d.shutdownServe() })
	r.HandleFunc("GET "+jobsPath+"{$}", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, d.listJobs()) })
	r.HandleFunc("POST "+jobsPath+"{$}", d.submitJob)
	r.HandleFunc("GET "+jobsPath+"{id}", d.getJob)
	r.HandleFunc("DELETE "+jobsPath+"{id}", d.deleteJob)
	r.HandleFunc("GET "+jobsPath+"{id}/logs", d.jobLogs)
	r.HandleFunc("POST "+jobsPath+"{id}/stop", d.stopJob)
	d.routes = r
	return d
}

// ServeHTTP answers the Serve and Jobs REST APIs.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.routes.ServeHTTP(w, r) }

const (
	servePath = "/api/serve/applications/"
	jobsPath  = "/api/jobs/"
)

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

// unixSeconds is t as Ray reports times in the Serve API: seconds since the epoch, fractional.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// unixMillis is t as Ray reports a job's start and end: milliseconds since the epoch.
func unixMillis(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMilli())
}
