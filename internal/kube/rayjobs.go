package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Ray's Jobs REST API (docs.ray.io/en/latest/cluster/running-applications/job-submission/rest.html
// and its OpenAPI page, api.html) is served by a RayCluster's dashboard, on the head Service's
// port named "dashboard" (ray-operator v1.5.0 controllers/ray/utils/constant.go,
// DashboardPortName). raytpu reaches it through the API server's proxy to Services
// (/api/v1/namespaces/N/services/http:S:dashboard/proxy/...), as `kubectl proxy` users do: it
// needs nothing but the cluster's API and the caller's credentials, on GKE as anywhere.

// RayJobStatus is a Ray job's status (ray.job_submission.JobStatus).
type RayJobStatus string

const (
	RayJobPending   RayJobStatus = "PENDING"
	RayJobRunning   RayJobStatus = "RUNNING"
	RayJobStopped   RayJobStatus = "STOPPED"
	RayJobSucceeded RayJobStatus = "SUCCEEDED"
	RayJobFailed    RayJobStatus = "FAILED"
)

// Terminal says whether a job in status s has ended: "SUCCEEDED, STOPPED, FAILED" are the statuses
// the Jobs REST API's polling example stops at.
func (s RayJobStatus) Terminal() bool {
	return s == RayJobSucceeded || s == RayJobStopped || s == RayJobFailed
}

// RayJobRequest is the body of POST /api/jobs/ (Ray's JobSubmitRequest).
type RayJobRequest struct {
	Entrypoint   string `json:"entrypoint"`
	SubmissionID string `json:"submission_id,omitempty"`
	// RuntimeEnv is a JSON object, sent as it is: Ray's runtime_env has open-ended fields.
	RuntimeEnv json.RawMessage   `json:"runtime_env,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	// What the entrypoint itself reserves, apart from the tasks and actors it starts.
	EntrypointNumCPUs   float64            `json:"entrypoint_num_cpus,omitempty"`
	EntrypointResources map[string]float64 `json:"entrypoint_resources,omitempty"`
}

// RayJobInfo is what GET /api/jobs/{id} says of a job (Ray's JobDetails).
type RayJobInfo struct {
	SubmissionID string       `json:"submission_id"`
	Status       RayJobStatus `json:"status"`
	Message      string       `json:"message"`
	Entrypoint   string       `json:"entrypoint"`
	// StartTime and EndTime are milliseconds since the epoch, 0 when not reached.
	StartTime uint64 `json:"start_time"`
	EndTime   uint64 `json:"end_time"`
}

var (
	// ErrRayJobNotFound is returned (wrapped) when the dashboard knows no job of the id.
	ErrRayJobNotFound = errors.New("no Ray job of that id")
	// ErrRayJobExists is returned (wrapped) when a job of the submission id exists already.
	ErrRayJobExists = errors.New("a Ray job of that submission id exists already")
)

// RayDashboard is the Jobs API of one RayCluster's dashboard.
type RayDashboard struct {
	c                  *Client
	namespace, service string
	// jobs is the Jobs API's path through the Service proxy, ending in a slash as Ray writes it
	// ("Don't forget the trailing slash!").
	jobs string
	// what names the dashboard in errors.
	what string
	// retryFor bounds the retries of one call after transient answers, retryEvery paces them.
	retryFor, retryEvery time.Duration
}

// Transient answers (the dashboard starting, the head Pod not ready yet) are retried this long.
const (
	dashboardRetryFor   = time.Minute
	dashboardRetryEvery = 2 * time.Second
)

// RayDashboard returns the dashboard of RayCluster namespace/name, reached through its head
// Service. A missing RayCluster gives an error wrapping ErrRayClusterNotFound.
func (c *Client) RayDashboard(ctx context.Context, namespace, name string) (*RayDashboard, error) {
	rc, err := c.GetRayCluster(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	svc := headServiceName(rc)
	d := &RayDashboard{
		c:       c,
		service: svc, namespace: namespace,
		jobs: fmt.Sprintf("/api/v1/namespaces/%s/services/http:%s:dashboard/proxy/api/jobs/", url.PathEscape(namespace), url.PathEscape(svc)),
		what: fmt.Sprintf("the Ray dashboard of RayCluster %s/%s (Service %s, port dashboard)", namespace, name, svc),
		// A request's own answer arrives within requestTimeout; these bound the waits between.
		retryFor: dashboardRetryFor, retryEvery: dashboardRetryEvery,
	}
	if err := d.waitForHeadService(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// serviceExists says whether the head Service exists; false when that cannot be read either.
func (d *RayDashboard) serviceExists(ctx context.Context) bool {
	_, err := d.c.core.Services(d.namespace).Get(ctx, d.service, metav1.GetOptions{})
	return err == nil
}

// waitForHeadService waits, for retryFor at most, until the head Service exists: KubeRay makes it
// when it reconciles the RayCluster, before the head Pod (ray-operator v1.5.0
// controllers/ray/raycluster_controller.go, reconcileHeadService precedes reconcilePods), and
// raytpu makes it again when the head's service settings change.
func (d *RayDashboard) waitForHeadService(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, d.retryFor)
	defer cancel()
	err := waitFor(wctx, d.retryEvery, func(ctx context.Context) (bool, error) {
		_, err := d.c.core.Services(d.namespace).Get(ctx, d.service, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, d.c.explain(err)
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: %s: the Service does not exist after %s", d.what, waited)
	})
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		// The wait's own bound, not the caller's: the Service is not coming.
		return fmt.Errorf("kube: %s: the Service does not exist after %s, and KubeRay makes it as soon as it reconciles the "+
			"RayCluster: check that the Ray Operator runs and what the RayCluster's events say", d.what, roundWait(d.retryFor))
	}
	return err
}

// SubmitRayJob submits a job and returns its submission id. A job of req.SubmissionID that exists
// already gives an error wrapping ErrRayJobExists: that may be this call's own job, when an
// answer was lost and the request sent again, so give every request a SubmissionID and follow
// the job of that id.
func (d *RayDashboard) SubmitRayJob(ctx context.Context, req RayJobRequest) (string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("kube: encoding the Ray job: %w", err)
	}
	var out struct {
		SubmissionID string `json:"submission_id"`
	}
	if err := d.call(ctx, http.MethodPost, "", body, &out); err != nil {
		return "", fmt.Errorf("kube: submitting a Ray job to %s: %w", d.what, err)
	}
	return out.SubmissionID, nil
}

// RayJob reads a job's status and message; an unknown id gives an error wrapping
// ErrRayJobNotFound.
func (d *RayDashboard) RayJob(ctx context.Context, id string) (RayJobInfo, error) {
	var info RayJobInfo
	if err := d.call(ctx, http.MethodGet, url.PathEscape(id), nil, &info); err != nil {
		return RayJobInfo{}, fmt.Errorf("kube: reading Ray job %s from %s: %w", id, d.what, err)
	}
	return info, nil
}

// RayJobLogs reads all of a job's logs.
func (d *RayDashboard) RayJobLogs(ctx context.Context, id string) (string, error) {
	var out struct {
		Logs string `json:"logs"`
	}
	if err := d.call(ctx, http.MethodGet, url.PathEscape(id)+"/logs", nil, &out); err != nil {
		return "", fmt.Errorf("kube: reading the logs of Ray job %s from %s: %w", id, d.what, err)
	}
	return out.Logs, nil
}

// StopRayJob stops a job; stopped is false when it had ended already.
func (d *RayDashboard) StopRayJob(ctx context.Context, id string) (stopped bool, err error) {
	var out struct {
		Stopped bool `json:"stopped"`
	}
	if err := d.call(ctx, http.MethodPost, url.PathEscape(id)+"/stop", nil, &out); err != nil {
		return false, fmt.Errorf("kube: stopping Ray job %s through %s: %w", id, d.what, err)
	}
	return out.Stopped, nil
}

// call sends one request to the Jobs API at path (below /api/jobs/) and decodes a success into
// out. Transient answers are retried for retryFor; anything else ends the call at once.
func (d *RayDashboard) call(ctx context.Context, verb, path string, body []byte, out any) error {
	give := time.Now().Add(d.retryFor)
	for {
		err := d.once(ctx, verb, path, body, out)
		var t *transientError
		if !errors.As(err, &t) {
			return err
		}
		if time.Now().Add(d.retryEvery).After(give) {
			return fmt.Errorf("%w (still so after %s)", t.err, roundWait(d.retryFor))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; the last attempt: %w", ctx.Err(), t.err)
		case <-time.After(d.retryEvery):
		}
	}
}

// transientError is an answer worth asking again.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func (d *RayDashboard) once(ctx context.Context, verb, path string, body []byte, out any) error {
	req := d.c.core.RESTClient().Verb(verb).AbsPath(d.jobs + path)
	if body != nil {
		req = req.SetHeader("Content-Type", "application/json").Body(body)
	}
	a := answerOf(req.Do(ctx))
	switch {
	case a.err != nil && ctx.Err() != nil:
		return a.err
	case a.err != nil && retryable(a.err):
		return &transientError{d.c.explain(a.err)}
	case a.err != nil:
		return d.c.explain(a.err)
	case a.code >= 200 && a.code < 300:
		if err := json.Unmarshal(a.body, out); err != nil {
			return fmt.Errorf("the answer is not Ray's JSON: %w: %s", err, clip(a.body))
		}
		return nil
	}
	return d.refusal(ctx, path, a)
}

// refusal is the error of an answer that is not a success. Sources: KubeRay's dashboard client
// (ray-operator v1.5.0 controllers/ray/utils/dashboardclient/dashboard_httpclient.go) reads 404 as
// a job that does not exist and a refused submission whose body says "Please use a different
// submission_id" as a duplicate id, which Ray answers with 500 (the job agent's ValueError
// passed on by the head) or 400 (job_head.py's own); job_head.py's submit_job answers 500 "No
// available agent to submit job, please try again later." while the dashboard's agent is not up.
// The API server's proxy answers 503 while the Service has no ready endpoint and passes on what
// a gateway says when the head Pod does not answer; it reads the Service's Endpoints, which the
// endpoints controller publishes after the Service (k8s.io/kubernetes v1.34
// pkg/registry/core/service/storage/storage.go, ResourceLocation), and answers 404 until then.
func (d *RayDashboard) refusal(ctx context.Context, path string, a answer) error {
	text := string(a.body)
	status, fromAPIServer := apiServerStatus(a.body)
	if fromAPIServer {
		text = status.Message
	}
	err := fmt.Errorf("%d %s: %s", a.code, http.StatusText(a.code), clip([]byte(text)))
	switch {
	case fromAPIServer && a.code == http.StatusNotFound && d.serviceExists(ctx):
		// The Service is there and what it routes to not yet published.
		return &transientError{fmt.Errorf("the API server answered %w", err)}
	case fromAPIServer && a.code == http.StatusNotFound:
		return fmt.Errorf("the API server answered %w: the head Service or its namespace does not exist", err)
	case a.code == http.StatusUnauthorized || a.code == http.StatusForbidden:
		return fmt.Errorf("the API server refused the request to its Service proxy (%w): the credentials need "+
			"services/proxy in the RayCluster's namespace", err)
	case strings.Contains(text, "already exists") && strings.Contains(text, "submission_id"):
		return fmt.Errorf("%w: %w", ErrRayJobExists, err)
	case a.code == http.StatusNotFound && path != "":
		return fmt.Errorf("%w: %w", ErrRayJobNotFound, err)
	case a.code == http.StatusNotFound:
		return fmt.Errorf("the dashboard does not serve the Jobs API (%w): it needs Ray's dashboard, as in the ray[default] images", err)
	case a.code == http.StatusInternalServerError && strings.Contains(text, "try again later"),
		a.code == http.StatusTooManyRequests, a.code == http.StatusBadGateway,
		a.code == http.StatusServiceUnavailable, a.code == http.StatusGatewayTimeout:
		return &transientError{err}
	}
	return err
}

// answer is what came back of a request through the Service proxy: a status and a body, or no
// answer at all (err).
type answer struct {
	code int
	body []byte
	err  error
}

// answerOf takes client-go's Result apart. For an error status client-go keeps the body when
// its content type is one it decodes (JSON) and otherwise only puts a text body into its error's
// cause of type UnexpectedServerResponse.
func answerOf(res rest.Result) answer {
	body, err := res.Raw()
	var code int
	res.StatusCode(&code)
	if err == nil {
		return answer{code: code, body: body}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return answer{err: err}
	}
	st := status.Status()
	if len(body) == 0 && st.Details != nil {
		for _, cause := range st.Details.Causes {
			if cause.Type == metav1.CauseTypeUnexpectedServerResponse {
				body = []byte(cause.Message)
			}
		}
	}
	return answer{code: int(st.Code), body: body}
}

// apiServerStatus decodes a body that is the API server's own metav1.Status, not Ray's.
func apiServerStatus(body []byte) (metav1.Status, bool) {
	var st metav1.Status
	if json.Unmarshal(body, &st) != nil || st.Kind != "Status" {
		return metav1.Status{}, false
	}
	return st, true
}

// clip keeps an error's text readable: a refused submission's body is a Python traceback, whose
// end says what was wrong.
func clip(b []byte) string {
	const most = 1500
	s := strings.TrimSpace(string(b))
	if len(s) > most {
		s = "…" + s[len(s)-most:]
	}
	return s
}
