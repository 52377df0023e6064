// Package emulator is a local GKE control plane for tests and the quickstart. It serves the
// container v1 REST API closely enough that Google's Go clients (cloud.google.com/go/container/apiv1
// with NewClusterManagerRESTClient, and google.golang.org/api/container/v1) cannot tell it from
// GKE, and backs every cluster with a real kube-apiserver.
//
// # Use
//
// In tests:
//
//	e, err := emulator.Start(ctx, emulator.Options{DefaultLatency: 100 * time.Millisecond})
//	defer e.Close()
//	c, _ := container.NewClusterManagerRESTClient(ctx, option.WithEndpoint(e.Endpoint()),
//		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.Token()})))
//
// Standalone: go run ./internal/emulator/cmd/raytpu-emulator prints
// "export RAYTPU_CONTAINER_ENDPOINT=..." and "export GOOGLE_OAUTH_ACCESS_TOKEN=..." and serves until
// SIGINT/SIGTERM; with -state-dir it keeps its clusters across restarts.
//
// Start needs kube-apiserver, etcd and the KubeRay CRDs, built by `make tools`
// (tools/install-kube.sh) into DefaultKubeBinDir(); RAYTPU_KUBE_BIN_DIR points elsewhere. A
// missing binary is an error naming `make tools`.
//
// # The GKE API
//
// Plain HTTP on loopback, JSON as protojson of containerpb, paths as the REST clients send them:
// /v1/projects/{p}/locations/{l}/clusters[/{c}[:setAddons|:setResourceLabels]], .../clusters/{c}/nodePools[/{n}
// [:setSize]], /v1/projects/{p}/locations/{l}/operations[/{o}[:cancel]] and .../serverConfig
// (location "-" lists every location). Every request needs "Authorization: Bearer <token>" (401
// otherwise). Errors have Google's shape, {"error":{"code","message","status","details"}}, with
// an ErrorInfo reason where GKE gives one.
//
// Mutations return an Operation (PENDING, RUNNING after a fifth of its latency, DONE after its
// latency and its work); a failed one is DONE with error (google.rpc.Status) and, for stockouts
// and quota, a GCE_STOCKOUT or GCE_QUOTA_EXCEEDED condition. Operation types follow GKE:
// CREATE_CLUSTER, DELETE_CLUSTER, UPDATE_CLUSTER (update and setAddons), UPGRADE_MASTER (update
// with desiredMasterVersion), CREATE_NODE_POOL, DELETE_NODE_POOL, UPGRADE_NODES (node pool
// update) and SET_NODE_POOL_SIZE. selfLink and targetLink use the emulator's endpoint in place of
// https://container.googleapis.com, so they resolve.
//
// # Concurrent operations
//
// As GKE "generally allows one cluster-level operation, or one operation per node pool, at the
// same time" (GKE docs, "Troubleshoot concurrent operations"):
//   - a cluster-level operation (CREATE_CLUSTER, DELETE_CLUSTER, UPDATE_CLUSTER, UPGRADE_MASTER:
//     updates, add-ons, labels, versions) starts only when no other operation runs on the
//     cluster, and while it runs no node pool operation starts;
//   - node pool operations (CREATE_NODE_POOL, DELETE_NODE_POOL, UPGRADE_NODES, SET_NODE_POOL_SIZE)
//     of different pools run concurrently, one at a time per pool;
//   - a refused operation gets 400 FAILED_PRECONDITION "Cluster is running incompatible operation
//     OP." (the docs' wording; reason CLUSTER_ALREADY_HAS_OPERATION, as GKE reports it);
//   - at most Options.MaxNodePoolOperations (default 5) node pool operations run at once on one
//     cluster; the next gets 429 RESOURCE_EXHAUSTED "Too many operations: cluster "NAME" hits the
//     concurrent operations quota 5, please try again later." (the text users report from GKE in
//     terraform-provider-google #15205 and #15579).
//
// Cluster updates model desiredAddonsConfig, desiredMasterVersion and desiredReleaseChannel;
// node pool updates model nodeVersion, labels, taints and resourceLabels and refuse a new
// machineType or locations. Other fields are accepted and ignored.
//
// Node pools are validated against the emulator's own TPU tables in internal/emulator/gketpu
// (machine_types.txt and rules.txt, a source on every row: GKE's documentation, GKE's cluster
// autoscaler, xpk): machine types, topologies, hosts (chips ÷ chips per VM), placement (a workload
// policy rather than COMPACT for multi-host tpu7x) and generation minimum versions, with GKE's
// error texts where they are known. The emulator never takes these rules from internal/tpu, the
// provider's catalog; a test compares the two tables row by row and lists where they differ on
// purpose. On top of them the emulator applies GKE's other rules: names, versions on offer, a
// multi-host slice in one zone and never resized, zone capacity (GCE_STOCKOUT at the end of the
// operation, pool in ERROR) and project quota (429 RESOURCE_EXHAUSTED at once).
//
// # Kubernetes
//
// Each cluster has its own kube-apiserver on 127.0.0.1 (HTTPS, its own CA, reported as endpoint
// and masterAuth.clusterCaCertificate) and one etcd serves them all (--etcd-prefix per cluster).
// The emulator's token is cluster-admin on every cluster. A pool's nodes are registered Ready, with
// GKE's labels, as the last step of its creation, moments before the operation is DONE and the
// pool RUNNING (as in GKE, which ends the creation once the nodes have registered); TPU nodes also
// get google.com/tpu capacity and the google.com/tpu=present:NoSchedule taint. Node names are
//
//	gke-<cluster, ≤20 chars>-<pool, ≤20 chars>-<8 hex digits of the pool>-<worker, 4+ digits>
//
// where worker is the host's index in the slice (TPU_WORKER_ID order); WorkerIndex recovers it.
// Enabling the Ray Operator add-on creates the KubeRay CRDs (rayclusters, rayjobs, rayservices of
// the ray-operator version in go.mod) Options.RayCRDDelay later; disabling it deletes them.
//
// # Control
//
// Controller (implemented by *Emulator in-process and by *Client over HTTP) resets the emulator,
// sets latencies, zone capacity and project quota, injects request faults and operation faults,
// fails hosts, and reads the request log, the per-method counters and how long each Ray Operator
// add-on took to serve its CRDs. Its HTTP form, under /emulator/v1/ with the same bearer token:
// POST reset, PUT latencies, POST capacity, POST quota, POST and DELETE faults, POST
// operationFaults, POST hostFailures, GET requests, GET counters, GET rayCRDInstalls.
package emulator
