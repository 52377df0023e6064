// Package raydashboard is the emulator's stand-in for the Ray dashboard of one RayCluster: the
// parts of its HTTP API that KubeRay and Ray's job tools call, the Serve REST API and the Jobs REST
// API, answering in Ray's documented shapes. It holds each cluster's Serve applications and jobs
// in memory behind its own lock and runs no Python: what applications and jobs do is decided by
// the functions of its Config.
//
// Sources:
//   - Serve REST API (docs.ray.io/en/latest/serve/api/rest-api.html): the dashboard port (8265)
//     serves it; PUT /api/serve/applications/ "declaratively deploys a list of Serve
//     applications", removing every application not listed, and answers 200 with no body;
//     GET /api/serve/applications/ returns the instance's details with each application's status,
//     message, route prefix, deployed config and deployments; DELETE /api/serve/applications/
//     shuts Serve down. Application statuses NOT_STARTED, DEPLOYING, DEPLOY_FAILED, RUNNING,
//     UNHEALTHY, DELETING and deployment statuses UPDATING, HEALTHY, UNHEALTHY are Ray's
//     (ray.serve.schema.ApplicationStatus, DeploymentStatus).
//   - Jobs REST API (docs.ray.io/en/latest/cluster/running-applications/job-submission/rest.html
//     and its OpenAPI page, api.html): POST /api/jobs/ with an entrypoint, an optional
//     submission_id, runtime_env, metadata and entrypoint resources answers the job_id and
//     submission_id; GET /api/jobs/{id} the job's details; GET /api/jobs/ every job; GET
//     /api/jobs/{id}/logs {"logs": ...}; POST /api/jobs/{id}/stop {"stopped": bool}; DELETE
//     /api/jobs/{id} {"deleted": bool}, for a job in a terminal state only. Job statuses PENDING,
//     RUNNING, STOPPED, SUCCEEDED, FAILED are Ray's (ray.job_submission.JobStatus).
//   - Job messages are Ray's (ray-project/ray, python/ray/dashboard/modules/job/common.py,
//     JobInfo.__post_init__): "Job has not started yet." with " It may be waiting for resources
//     (CPUs, GPUs, memory, custom resources) to become available." when the entrypoint asks for
//     resources and " It may be waiting for the runtime environment to be set up." when it has a
//     runtime env; "Job is currently running."; "Job was intentionally stopped."; "Job finished
//     successfully.". A failed job's message is the job manager's, "Job entrypoint command failed
//     with exit code 1, last available logs (truncated to 20,000 chars):\n" and the logs (Ray's
//     test_job_manager.py asserts that text). A second job of one submission id is refused with
//     400 and "Job with submission_id ... already exists. Please use a different
//     submission_id." (job_manager.py's ValueError; KubeRay's job submitter matches that text).
//     delete_job takes "a job in a terminal state" (JobSubmissionClient.delete_job's reference).
//   - What KubeRay sends and reads (ray-operator v1.5.0,
//     controllers/ray/utils/dashboardclient/dashboard_httpclient.go and utils/types): the same
//     paths, api_type=declarative on the Serve GET, the job list as a JSON array; its Go client is
//     what this package's tests talk to.
//
// INFERRED (no source gives them; the emulator's choices): an application is DEPLOYING, its
// deployments UPDATING, for Config.DeployTime after a PUT that changed it, then RUNNING and
// HEALTHY, unless Config.Place refuses a deployment's resources, which keeps the application
// DEPLOYING with "Deployment 'D' in application 'A': " and Place's reason; the instance's
// deploy_mode MULTI_APP and proxy_location EveryNode and an application's source declarative
// (the values of the schema's fields for applications a PUT deployed); a job is PENDING for Config.JobStartTime, RUNNING for
// Config.JobRunTime, then ends as Config.Outcome says (SUCCEEDED with no logs without one; RUNNING: when stopped), a
// failed one with exit code 1; generated submission ids are raysubmit_ and a counter; the
// texts of refused Serve configs, of an unknown job ("Job ID does not exist") and of deleting a
// job still running, and the 400 for the latter, are the emulator's own, in the HTTP statuses
// KubeRay's client tells apart (404 for an unknown job, which it reads as "does not exist").
//
// raydashboard imports only the standard library: the emulator routes requests to it (package
// emulator) and decides placement and outcomes.
package raydashboard
