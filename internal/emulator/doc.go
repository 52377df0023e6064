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
// Start needs kube-apiserver, etcd, kube-scheduler, kube-controller-manager, KubeRay's ray-operator
// and the KubeRay CRDs, built by `make tools` (tools/install-kube.sh) into DefaultKubeBinDir();
// RAYTPU_KUBE_BIN_DIR points elsewhere. A missing binary is an error naming `make tools`.
//
// # The GKE API
//
// Plain HTTP on loopback, JSON as protojson of containerpb, paths as the REST clients send them,
// in both forms of the v1 API (google.golang.org/api/container/v1's container-api.json): the
// locations form, /v1/projects/{p}/locations/{l}/clusters[/{c}[:verb]], .../clusters/{c}/nodePools
// [/{n}[:verb]], /v1/projects/{p}/locations/{l}/operations[/{o}[:cancel]] and .../serverConfig
// (location "-" lists every location), and the legacy zonal form of Projects.Zones,
// /v1/projects/{p}/zones/{z}/clusters[/{c}[/addons|/legacyAbac|/locations|/logging|/master|
// /monitoring|/resourceLabels|:setMaintenancePolicy|:setMasterAuth|:setNetworkPolicy|
// :startIpRotation|:completeIpRotation]], .../nodePools[/{n}[/autoscaling|/setManagement|/setSize|
// /update|:rollback]], .../operations[/{o}[:cancel]] and .../serverconfig. The cluster verbs
// (setAddons, setLegacyAbac, setLocations, setLogging, setMonitoring, updateMaster,
// setResourceLabels, setMaintenancePolicy, setMasterAuth, setNetworkPolicy, IP rotation) set what
// they name; update applies every desired_X field of ClusterUpdate to the cluster's X (or
// networkConfig's X); the node pool verbs are setSize, setAutoscaling, setManagement, update,
// rollback and completeUpgrade. Every request needs "Authorization: Bearer <token>" (401
// otherwise).
//
// Errors have Google's shape, {"error":{"code","message","errors","status","details"}}, with an
// ErrorInfo reason where GKE gives one and the legacy "errors" list ({"message","domain":"global",
// "reason"}, reason badRequest, failedPrecondition, notFound, alreadyExists, rateLimitExceeded,
// ...) that GKE users quote ("googleapi: Error 400: ..., failedPrecondition",
// terraform-provider-google #3650) and that terraform-provider-google's
// IsFailedPreconditionError reads. The list goes to the discovery clients (alt=json); the REST
// gapic clients ($alt=json) get the plain google.rpc.Status, the only shape gax-go's apierror
// parses for details.
//
// A cluster reads back as GKE fills it in (rules/cluster_defaults.go, after a recorded GKE
// response in k8s-config-connector): networkConfig.network and .subnetwork as resource paths, the add-ons GKE
// turns on and off, logging, monitoring, security posture, shielded nodes, database encryption,
// IP aliases, the default pool's nodeConfig, and the requested initialNodeCount; so
// terraform-provider-google plans nothing after an apply.
//
// Mutations return an Operation (PENDING, RUNNING after a fifth of its latency, DONE after its
// latency and its work); a failed one is DONE with error (google.rpc.Status) and, for stockouts
// and quota, a GCE_STOCKOUT or GCE_QUOTA_EXCEEDED condition. Operation types follow GKE:
// CREATE_CLUSTER, DELETE_CLUSTER, UPDATE_CLUSTER (update and the cluster setters), UPGRADE_MASTER
// (update with desiredMasterVersion, updateMaster), CREATE_NODE_POOL, DELETE_NODE_POOL,
// UPGRADE_NODES (node pool update, setAutoscaling, rollback), SET_NODE_POOL_MANAGEMENT and
// SET_NODE_POOL_SIZE. selfLink and targetLink use the emulator's endpoint in place of
// https://container.googleapis.com, so they resolve.
//
// # Compute Engine
//
// Under /compute/v1/ (google.golang.org/api/compute/v1 with that base path, or
// terraform-provider-google's compute_custom_endpoint), in Compute Engine's JSON and errors
// ({"error":{"code","message","errors":[{"message","domain":"global","reason"}]}}, reason notFound,
// alreadyExists, invalid, resourceInUseByAnotherResource):
//   - instanceGroupManagers get and list, zonal: one per zone of each node pool, as its
//     instanceGroupUrls name them (gke-<cluster>-<pool>-<hash>-grp; the pool's nodes are its
//     instances), targetSize the pool's nodes in the zone, currentActions and status following the
//     pool; terraform-provider-google reads node_count from them and takes their 404 as the pool
//     gone;
//   - machineTypes get and list, zonal: the machine types of the emulator's table
//     (internal/emulator/machines, below), guestCpus and memoryMb as Compute Engine reports them;
//   - reservations get and list, zonal, and aggregatedList: the reservations made with a machine
//     type (Controller.CreateReservation), with specificReservation {count, inUseCount,
//     instanceProperties.machineType} in VMs, inUseCount the VMs of the node pools consuming it,
//     specificReservationRequired and status READY; such a reservation is consumed only by node
//     pools of its machine type (compute_reservations.go says what is left out);
//   - resourcePolicies insert, get, list and delete, regional, with workloadPolicy {type
//     HIGH_AVAILABILITY|HIGH_THROUGHPUT, acceleratorTopology (HIGH_THROUGHPUT only, not with
//     maxTopologyDistance), acceleratorTopologyMode, maxTopologyDistance} (compute v1
//     ResourcePolicyWorkloadPolicy; terraform-provider-google's compute_resource_policy docs); a
//     policy exists once its insert operation is DONE, and one a node pool uses cannot be deleted;
//   - operations get and wait, zonal and regional: PENDING, RUNNING, DONE with progress 100 and,
//     when failed, error.errors[] (OperationFault with a Compute method as OperationType); wait
//     returns at DONE or before Compute's 2-minute limit.
//
// Resource policies are the workload policies that place multi-host tpu7x slices
// (placementPolicy.policyName). GKE's rules apply: the policy "must be in
// the same project and region as the node pool. If not found, InvalidArgument" (containerpb
// NodePool.PlacementPolicy.policy_name; a name or a full or partial URL); a tpu7x slice takes its
// topology from the policy's acceleratorTopology, which must be set ("does not support TPU
// topology with group placement policy and workload policy at the same time") and equal any
// tpuTopology given (capacity-facts.md §5). Resource policies and Compute operations persist
// with the state.
//
// # Credentials
//
// At /token (TokenURL) the emulator answers as Google's OAuth 2.0 token endpoint does for the
// refresh token grant of authorized_user credentials, the kind Application Default Credentials
// hold after `gcloud auth application-default login` (oauth.go): RefreshToken gets Token(); any
// other refresh token, one revoked or expired, gets 400 {"error": "invalid_grant",
// "error_description": "Token has been expired or revoked."}, Google's words (RFC 6749 §5.2;
// googleworkspace/python-samples#1644).
//
// # Reaching a cluster
//
// GKE's control plane endpoints (containerpb ControlPlaneEndpointsConfig, PrivateClusterConfig;
// GKE's DNS-based endpoint, Google Cloud blog "A new flexible DNS-based approach for accessing the
// GKE control plane", 2024-11-11), as endpoints.go models them:
//   - IP endpoints: Cluster.endpoint and ipEndpointsConfig.publicEndpoint are the kube-apiserver
//     at 127.0.0.1:PORT with the cluster CA; ipEndpointsConfig.privateEndpoint is 127.0.0.1:1,
//     where a connection is refused at once (no private network reaches the runner). A private
//     cluster (privateClusterConfig.enablePrivateEndpoint, or ipEndpointsConfig.enablePublicEndpoint
//     false) reports that as its endpoint and no public endpoint; ipEndpointsConfig.enabled false
//     reports none. Both private and public set is refused.
//   - The DNS-based endpoint: every cluster has dnsEndpointConfig.endpoint, localhost:PORT, the
//     same kube-apiserver reached by name, with a certificate (kube-apiserver --tls-sni-cert-key)
//     of an emulator-wide CA standing for the public roots GKE's DNS endpoint chains to
//     (DNSEndpointCAPEM, Controller.DNSEndpointCA, <state>/dns-endpoint/ca.crt; trust it with
//     SSL_CERT_FILE) and the emulator's token standing for the IAM-checked Google token. It takes
//     user traffic only with dnsEndpointConfig.allowExternalTraffic (otherwise no certificate for
//     localhost is served); changing it restarts the kube-apiserver within the update.
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
// Cluster updates model desiredAddonsConfig (each add-on it sets replaces that add-on's
// configuration, the others stay; the slice controller add-on is refused outside the Rapid
// channel and below 1.35.2-gke.1842000, rules/slice_controller.go), desiredMasterVersion and
// desiredReleaseChannel;
// node pool updates (UpgradeNodes operations, the pool RECONCILING meanwhile) model nodeVersion,
// labels, taints, resourceLabels, and in place, as GKE migrates the nodes, machineType, diskType,
// diskSizeGb (at least 10GB) and maxRunDuration (flex-start's seven days at most), after the
// UpdateNodePoolRequest field comments and GKE's "Vertically scale your node pools"; a TPU slice's
// machine type is refused (INFERRED: its topology follows from it), and so are new locations.
// SetNodePoolSize resizes any pool but a multi-host TPU slice, the cluster's CPU pools included
// ("Resize a node pool"). Other fields are accepted and ignored. New Kubernetes labels and taints
// reach the pool's running nodes in place, as GKE applies them "without re-creating the node pool
// and disrupting running workloads" (GKE, "Update Kubernetes node labels and taints for node
// pools"); raytpu_ray_cluster claims its slices this way.
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
// # GKE's own answers
//
// GKE answers with more than it was sent, and in its own spelling. The catalogue below was mined
// from terraform-provider-google's container resources (each diff suppressor, custom flattener and
// field kept Computed because GKE sets it; hashicorp/terraform-provider-google@e03b7622,
// google/services/container), GKE answers recorded against Google Cloud by
// k8s-config-connector (@cdb85ecf, pkg/test/resourcefixture/testdata/basic/container/v1beta1/
// .../_http.log, "the canonical real GCP baseline"), the container v1 reference, and drift
// reports of other GKE clients. Each entry: what GKE does and its source; what the emulator does;
// how raytpu handles it; the tests.
//
//  1. Reserved node pool labels. Every node pool's config.resourceLabels gains
//     goog-gke-node-pool-provisioning-model (on-demand, spot, flex-start), TPU pools
//     goog-gke-accelerator-type and, multi-host, goog-gke-tpu-node-pool-type=multi-host; "Any
//     changes made to reserved labels are reconciled automatically" (GKE "Automatically applied
//     labels"; recorded answers; terraform-provider-google containerNodePoolResourceLabelsDiffSuppress,
//     magic-modules#12877; crossplane-contrib/provider-upjet-gcp#742, pools reconciling for ever).
//     Emulator: rules/additions.go, on create and after every update; a reservation's value is
//     INFERRED on-demand. raytpu: resource_labels leaves goog-gke-* out and refuses them in
//     configuration (common_gke_answers.go). Tests: TestNodePoolsGetGKEsReservedLabels,
//     TestAccGKEAnswers_labelsNetworksScopes.
//  2. Network names. Cluster.network and .subnetwork read back as names whatever form was sent,
//     their paths in networkConfig ("On output this shows the network ID instead of the name",
//     containerpb; recorded answers; terraform-provider-google CompareSelfLinkOrResourceName).
//     Emulator: rules/cluster_defaults.go. raytpu: keeps the written name, path or self link when it
//     names the same network, and plans no replacement for another spelling. Tests:
//     TestClusterNetworkNamesAndAutoscalingDefaults, TestAccGKEAnswers_labelsNetworksScopes,
//     TestNetworkSpellingDoesNotReplace.
//  3. Default OAuth scopes. A pool sent none gets the six gke-default scopes; scopes read back
//     sorted (recorded answers; terraform-provider-google defaultOauthScopes; the order INFERRED
//     from every recorded answer). Emulator: rules/additions.go. raytpu: compares scopes as sets,
//     keeping the configuration's order. Tests: TestNodePoolsGetGKEsReservedLabels,
//     TestAccGKEAnswers_labelsNetworksScopes, TestSameScopes.
//  4. Auto-provisioning defaults. Cluster.autoscaling reads back with autoscalingProfile BALANCED
//     and autoprovisioningNodePoolDefaults filled in (scopes, service account, image type,
//     management; with NAP on, disk size and upgrade strategy), a monitoring scope added to scopes
//     that lack one (recorded answers; terraform-provider-google
//     containerClusterAddedScopesSuppress). Emulator: rules/additions.go; auto-provisioned pools
//     take these defaults. raytpu: reads only what it sets (enable, limits, locations). Test:
//     TestClusterNetworkNamesAndAutoscalingDefaults.
//  5. A daily recurrence written out. FREQ=DAILY reads back as
//     FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU once the policy has exclusions
//     (terraform-provider-google rfc5545RecurrenceDiffSuppress; that GKE itself does it on every
//     set is INFERRED). Emulator: rules/maintenance.go. raytpu: compares recurrences by their
//     occurrences (gke.SameRecurrence). Tests: TestAccClusterMaintenance_policy, TestSameRecurrence.
//  6. Maintenance times. Times read back in UTC, a daily window with duration PT4H0M0S, a
//     NO_UPGRADES exclusion with empty options (terraform-provider-google#7406, #8226; recorded
//     answers). Emulator: rules/maintenance.go; NO_UPGRADES is the enum's zero value, which JSON
//     leaves out. raytpu: keeps the written time when it names the same instant. Test:
//     TestAccClusterMaintenance_policy.
//  7. Node defaults. 100 GB pd-balanced disks, service account default, auto-upgrade and
//     auto-repair on, SURGE upgrades of one, 110 Pods per node, exact versions for aliases, the
//     REGULAR channel for a cluster sent none (recorded answers; terraform-provider-google's
//     Computed fields). Emulator: rules/validate.go, rules/versions.go, rules/management.go.
//     raytpu: disk_size_gb and disk_type are computed when unset, service account default reads as unset, versions are
//     resolved before they are sent. Tests: TestAccSlice_everyGeneration, TestAccSlice_versionGate.
//  8. Node auto-provisioning limits count every node, TPU hosts included ("Any auto-provisioning
//     limits that you define are enforced based on the total CPU and memory resources used across
//     all node pools", GKE "About node auto-provisioning"; the cluster autoscaler's
//     resource/manager.go). Emulator: rules/nap.go, with machines/'s table. raytpu: warns at
//     plan time when an auto-provisioned worker group cannot fit (ray_cluster_nap_limits.go); the
//     quickstart and the examples use limits that hold their hosts. Tests: TestRayOnSlices (node
//     auto-provisioning), TestNAPExceeded, TestNAPLimitsCountTPUHosts.
//  9. Machine shapes and allocatable (the Machine types section). Test:
//     TestMachineTypesAndNodeResources.
//  10. Admission. GKE runs ExtendedResourceToleration (the Kubernetes section). Test:
//     TestAccKubeRaySamples_runOnSlices, which applies KubeRay's TPU samples as shipped.
//  11. Controllers. A GKE cluster runs kube-controller-manager: Deployments get Pods, namespaces
//     are deleted, dependents are garbage-collected (the Kubernetes section). Tests:
//     TestWorkloadsWithoutTheRayAddon, TestAccKubernetesProvider_deploymentRuns.
//  12. Draining. A node pool's nodes are drained before they are deleted (the Kubernetes section).
//     Test: TestWorkloadsWithoutTheRayAddon.
//  13. The TPU taint. TPU nodes carry google.com/tpu=present:NoSchedule (GKE "About TPUs in GKE"),
//     and TPU pools' config.taints hold it (terraform-provider-google reads it as effective_taints;
//     INFERRED that GKE's answer lists it). Emulator: nodes.go, rules/additions.go. raytpu: the
//     tolerations output; never sent back. Tests: TestRayOnSlices, TestNodePoolsGetGKEsConfigAnswers.
//  14. Node configuration answers. Every pool reads back with metadata disable-legacy-endpoints=true
//     (GKE "Protect cluster metadata"; recorded answers), effectiveCgroupMode (output only,
//     cgroupv2 by default), bootDisk as diskType and diskSizeGb describe it (INFERRED), and, in a
//     VPC-native cluster, networkConfig.podRange and podIpv4CidrBlock, the cluster's
//     clusterSecondaryRangeName (gke-CLUSTER-pods-HASH) and block (recorded answers). Emulator:
//     rules/additions.go. raytpu: reads none of them; raytpu_recreate_slice creates a pool again
//     from raytpu_slice's request, not from the old pool's answer. Tests:
//     TestNodePoolsGetGKEsConfigAnswers, TestAccSlice_recreateSendsRaytpusRequest.
//
// Found but not modelled, each for want of a second source or of a rule: the
// goog-gke-node-pool-protection-tier label of TPU pools from reservations (a release note of
// 2026-09-30; when each value applies is not published); an initialNodeCount of 1 read back for a
// queued pool created with none (one recorded answer); node pool GETs without locations (one
// recorded answer, likely its recorder's normalisation); whether a Shared VPC network reads back
// with its host project; a Kubernetes label of GKE's own in TPU pools' config.labels (none is on
// record: "Right now, GKE only applies its own out-of-band labels when you enable Sandbox",
// terraform-provider-google containerNodePoolLabelsSuppress; hashicorp/terraform-provider-google
// #4210, #6910), which raytpu_slice's labels would leave out all the same, as they leave out any
// label its configuration does not set.
//
// # GKE's rules
//
// The emulator accepts what GKE accepts and refuses what GKE refuses, each rule from a named
// source: package rules holds them and its documentation lists them with their sources.
//
// # Kubernetes
//
// Each cluster has its own kube-apiserver on 127.0.0.1 (HTTPS, its own CA, reported as endpoint
// and masterAuth.clusterCaCertificate) and one etcd serves them all (--etcd-prefix per cluster).
// The emulator's token is cluster-admin on every cluster. A pool's nodes are registered Ready, with
// GKE's labels, as the last step of its creation, moments before the operation is DONE and the
// pool RUNNING (as in GKE, which ends the creation once the nodes have registered); TPU nodes also
// get google.com/tpu capacity and the google.com/tpu=present:NoSchedule taint. Every node reports
// its machine type's vCPUs and memory as capacity and, less GKE's reservations, as allocatable
// (below). Node names are
//
//	gke-<cluster, ≤20 chars>-<pool, ≤20 chars>-<8 hex digits of the pool>-<worker, 4+ digits>
//
// where worker is the host's index in the slice (TPU_WORKER_ID order); WorkerIndex recovers it.
// Nodes are drained before they go, as GKE drains a node pool it deletes ("When you delete a node
// pool, GKE drains all the nodes in the node pool. The draining process involves GKE deleting Pods
// on each node", gcloud container node-pools delete): cordoned, their Pods deleted, then removed
// (nodes.go removeNodes; the same for a resize down, INFERRED).
//
// The kube-apiserver runs GKE's ExtendedResourceToleration admission plugin: "Kubernetes Engine
// automatically applies the corresponding tolerations to Pods requesting GPUs by running the
// ExtendedResourceToleration admission controller" (GKE's GPU docs); it tolerates the taint of
// every extended resource a Pod requests, google.com/tpu included, which KubeRay's TPU samples
// rely on. ServiceAccount and TaintNodesByCondition, on in upstream Kubernetes, are off: the
// default ServiceAccount and the lifting of the not-ready taint are the controller manager's,
// which does not run from a cluster's start (envtest turns ServiceAccount off too).
//
// Beside the kube-apiserver runs what acts on the cluster's objects (package clusterkube), each
// part started only once needed and stopped with the kube-apiserver: on the first workload (a Pod;
// a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job or CronJob; a Namespace being deleted)
// kube-scheduler, kube-controller-manager and the node agent; with the Ray Operator add-on,
// KubeRay's operator (below). kube-controller-manager (k8s.io/kubernetes at the pinned version)
// runs the controllers of workloads, ownerReference garbage collection, namespaces, Endpoints and
// EndpointSlices, ServiceAccounts, PodGC, disruption budgets and taint eviction
// (kubeproc/controller_manager.go lists them and those left out: node lifecycle, whose part the
// node agent plays for a failed host, the cloud provider's, storage, certificates, quotas and
// autoscaling).
// While running, kube-scheduler takes about 65 MB, kube-controller-manager about 90 MB and
// ray-operator about 45 MB of memory (RSS) per cluster.
//
// Enabling the Ray Operator add-on creates the KubeRay CRDs (rayclusters, rayjobs, rayservices of
// the ray-operator version in go.mod) Options.RayCRDDelay later; disabling it deletes them. The
// first cluster creates them through its API; later clusters get copies of the objects it stored,
// written into their storage with their own uid and times (ray_crds_seed.go: the same Established
// CRDs, without the 8 CPU-seconds a kube-apiserver spends creating these multi-megabyte objects;
// INFERRED equivalent).
//
// # Ray on the slices
//
// A cluster with the Ray Operator add-on runs what consumes its RayCluster worker groups on GKE,
// so that Ray Pods land on whole TPU slices as they would there (ray_addon.go, clusterkube/ray.go):
//   - GKE's KubeRay TPU webhook (tpuwebhook; webhook_tpu.go): registered with the CRDs as a
//     MutatingWebhookConfiguration (Pods, CREATE, objectSelector app.kubernetes.io/name=kuberay)
//     and a ValidatingWebhookConfiguration (RayClusters, CREATE), both calling an HTTPS server of
//     the emulator with its own CA in caBundle, so the kube-apiserver itself calls it, as
//     ai-on-gke/kuberay-tpu-webhook@ef658db registers and implements it (cited WH:line). A Pod
//     asking google.com/tpu with labels ray.io/cluster and ray.io/group and the
//     cloud.google.com/gke-tpu-topology node selector gets TPU_WORKER_ID (its host index),
//     TPU_NAME (<group>-<replica>), TPU_DEVICE_PLUGIN_HOST_IP and _ADDR, and, when the topology
//     holds more than one host at its request (hosts = max(chips / request, 1)),
//     TPU_WORKER_HOSTNAMES (<group>-<replica>-<host>.<cluster>-headless, comma separated),
//     hostname, subdomain and the Pod affinity that keeps a replica on one node pool (topologyKey
//     cloud.google.com/gke-nodepool) and other replicas and RayClusters off it; MEGASCALE_* when
//     MEGASCALE_NUM_SLICES is set, TPU_PROCESS_* on tpu7x. Replica and host come from KubeRay's
//     labels when it sets both, else from the group's Pods (label replicaIndex). A RayCluster
//     whose TPU worker group's numOfHosts is not that host count is refused: "admission webhook
//     "raycluster-kuberay-tpu-webhook.ray-system.svc" denied the request: Number of workers in
//     worker group not equal to specified topology"; a group without numOfHosts, topology or TPU
//     request, like a TPU Pod without the labels or the selector, fails the webhook call (403).
//   - KubeRay's ray-operator (the version in go.mod), started on the first RayCluster, RayJob or
//     RayService, with a kubeconfig, --enable-leader-election=false and the feature gate
//     RayMultiHostIndexing=true, under which KubeRay labels each multi-host replica's Pods with
//     their replica and host index and creates and deletes them together (Alpha and off by
//     default in v1.5.0, on in v1.6.0; GKE's add-on does not publish its gates); stopped when the
//     add-on is disabled. Its HTTP_PROXY is the cluster's Ray proxy (rayproxy), so that the
//     RayService and RayJob controllers reach each RayCluster's dashboard and Serve proxies.
//   - kube-scheduler and kube-controller-manager, as on every cluster (above): node selectors, the
//     TPU taint's tolerations, google.com/tpu requests and the webhook's affinity are Kubernetes'
//     own to decide, and the garbage collector removes a deleted RayCluster's Pods and Services.
//   - A node agent (nodeagent) plays the kubelet of the emulated nodes: a Pod bound to a Ready
//     node is Running and Ready at once, with container statuses, a Pod IP from the node's /24 of
//     the cluster's Pod range and the node's InternalIP as hostIP; a Pod being deleted is removed
//     (grace period 0, as the kubelet's last delete). A failed host (FailHost) fails its Pods:
//     Ready false and phase Failed, reason NodeLost, containers terminated ContainerStatusUnknown
//     (the node lifecycle controller's and kubelet's words), and KubeRay replaces them, a
//     multi-host replica whole. The other hosts of a multi-host slice with a failed host are
//     cordoned: Cloud TPU recovers a multi-host slice's instances together, never one alone, and
//     no workload runs on it until then (docs.cloud.google.com/tpu/docs/failure-recovery), so a
//     replacement replica cannot start on the slice's healthy hosts. INFERRED: the cordon as
//     GKE's way of showing that on the Nodes.
//
// On a cluster without the add-on the TPU webhook and KubeRay do not run; its Pods run all the
// same.
//
// # Node auto-provisioning
//
// Cluster.autoscaling takes and reports GKE's node auto-provisioning settings
// (enableNodeAutoprovisioning, resourceLimits, autoprovisioningLocations,
// autoprovisioningNodePoolDefaults, ...), in a create and in UpdateCluster's
// desiredClusterAutoscaling, with GKE's refusals: "Resource limits are supported only with node
// autoprovisioning.", "Resource limits for cpu, memory must be specified when enabling node
// autoprovisioning.", "Invalid resource: X." and "Resource_limit.maximum must be greater than 0."
// (rules/nap.go cites them). A Pod the scheduler marked Unschedulable whose node selector names a
// TPU accelerator and topology gets
// a node pool of its slice, as GKE's NAP would make it: nap-<machine type, cropped to 14>-<8
// random characters>, autoscaling.autoprovisioned true, the generation's machine type whose chips
// per VM are the Pod's google.com/tpu request (a v6e 2x4 at 4 chips is two ct6e-standard-4t
// hosts, at 8 one ct6e-standard-8t), all its hosts, COMPACT with its tpuTopology when multi-host,
// in the first autoprovisioning location (else the cluster's first zone), one pool per replica of
// a multi-host worker group. The pool is created as CreateNodePool creates one (validation,
// quota, capacity, a CREATE_NODE_POOL operation under GKE's concurrency rules, retried when
// refused) and shows in ListNodePools and GetNodePool. NAP keeps every node of the cluster, in any
// pool, within its resourceLimits: their vCPUs within cpu, their memory within memory (GB, counted
// as the machine types' GiB, INFERRED) and their chips within the accelerator's limit (none without
// one), so that one ct6e-standard-4t host counts 180 cores and 720 GB ("Any auto-provisioning
// limits that you define are enforced based on the total CPU and memory resources used across all
// node pools, not just auto-provisioned pools", GKE "About node auto-provisioning"). It passes
// over Pods held to named node pools (a new pool's name is its own),
// needs GKE 1.27.6 for v4 and v5e, 1.28.7-gke.1020000 (1.28) or 1.29.2-gke.1035000 for v5p and
// 1.31.1-gke.1146000 for v6e, and skips a multi-host tpu7x slice, which needs a workload policy
// NAP cannot create. The Pods get the cluster autoscaler's events: TriggeredScaleUp, or
// NotTriggerScaleUp ("pod didn't trigger scale-up: 1 max cluster cpu, memory limit reached",
// the limits passed, sorted). Auto-provisioned pools are never scaled down or deleted.
//
// Every cluster serves GKE's ComputeClass (cloud.google.com/v1, cluster-scoped;
// computeclass_crd.yaml). A Pod whose node selector names a class
// (cloud.google.com/compute-class) gets a pool of the class's first TPU priority it fits that is
// not in backoff, with that priority's capacity (a specific reservation, on demand, flex-start
// with its maximum run duration, or Spot), labelled and tainted cloud.google.com/compute-class=
// CLASS as GKE does its class's pools; a priority whose pool failed (a stockout) is in backoff as
// a shape is, so the next one is tried, and with all of them in backoff the Pod stays pending with
// "pod didn't trigger scale-up: 1 in backoff after failed scale-up". A class with
// nodePoolAutoCreation.enabled creates pools without cluster-level NAP from GKE
// 1.33.3-gke.1136000; classes need 1.30.3-gke.1451000 (rules/computeclass.go and
// nodeagent/nap_class.go cite their sources). GKE's admission adds the class's toleration to
// the Pods that select it; the emulated cluster does not, so such Pods carry it themselves.
//
// # Machine types
//
// The machine types node pools may use are the emulator's own table,
// internal/emulator/machines/machine_types.txt, a source on every row: the TPU VMs' vCPUs and
// memory from Cloud TPU's pages per generation (ct6e-standard-4t: 180 vCPUs, 720 GB), the CPU
// families' from Compute Engine's (e2-standard-N: N vCPUs, 4N GB; n1-standard-N: 3.75N GB), and
// custom-VCPUS-MEMORY_MB. Any other is refused: "Machine type "X" does not exist in zone "Z"." A
// node's allocatable is its capacity less GKE's reservations ("Plan GKE Standard node sizes":
// memory 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2%
// above, and 100 MiB for eviction; CPU 6% of the first core, 1% of the next, 0.5% of the next 2,
// 0.25% above 4, 1060 millicores for shared-core E2). Compute Engine's machineTypes serve the table.
//
// # Control
//
// Controller (implemented by *Emulator in-process and by *Client over HTTP) resets the emulator,
// sets latencies (of every cluster, or of one), zone capacity and project quota, creates
// reservations, scales autoscaled and queued node pools as the cluster autoscaler would, injects
// request faults and operation faults, fails hosts, creates resource policies, hands out the DNS
// endpoint CA, and reads the request log (with the body of each request but a GET), the
// per-method counters and how long each Ray Operator add-on took to serve its CRDs. Its HTTP
// form, under /emulator/v1/ with the same bearer token: POST reset, PUT latencies, PUT
// clusterLatencies, POST capacity, POST quota, POST reservations, POST poolScales, POST and DELETE
// faults, POST operationFaults, POST hostFailures, POST resourcePolicies, GET dnsEndpointCA, GET
// requests, GET counters, GET rayCRDInstalls.
//
// # Capacity
//
// A zone's TPU chips come in kinds, each with its own stock (Capacity.Type): on demand, Spot and
// flex-start (GKE "About GPU and TPU provisioning with flex-start"), unlimited until set. Reservations
// (Reservation) hold chips of their own in a zone: a pool naming one (SPECIFIC_RESERVATION, key
// compute.googleapis.com/reservation-name, value NAME, projects/PROJECT/reservations/NAME for a
// shared one, with /reservationBlocks/BLOCK for a block: containerpb ReservationAffinity, xpk
// core/reservation.py) takes its chips from it alone; ANY_RESERVATION, or no affinity, takes them
// from a reservation that does not require to be named, else from the pool's kind; NO_RESERVATION
// from its kind. A pool without room ends its creation in GCE_STOCKOUT, in ERROR, holding nothing
// (for a full reservation with xpk's quote of GKE, "... cannot be created now due to lack of
// capacity in your reservation"). Queued and flex-start pools start empty: ScalePool brings them
// their hosts when a request is fulfilled, and scales autoscaled pools, a multi-host slice as one
// unit, to zero or to all of its hosts (GKE "About TPUs in GKE").
//
// A request fault (Fault) matches GKE and Compute Engine requests by method, path and RPC (a
// ClusterManager method or a Compute method id such as compute.resourcePolicies.insert). By
// default the request fails without taking effect. With Lost it fails after the fact: the request
// takes effect, then its response is lost on the way back, as when a connection or front end
// fails after the backend acted: Lost "error" answers the fault's error (default 503
// UNAVAILABLE), "reset" resets the connection, "timeout" holds the response for Hold (default one
// minute; JSON nanoseconds) or until the client gives up, then closes the connection. Only
// mutating requests (not GET) match a lost-response fault; a client's retry of a lost create
// meets 409 ALREADY_EXISTS.
//
// # Locks
//
// The emulator's lock (Emulator.mu) guards GKE's and Compute Engine's state: clusters, node pools,
// operations and resource policies. A cluster's Kubernetes side (clusterKube: its kube-apiserver,
// the clients of it, its Ray proxy and dashboards, its runtime) has a lock of its own, which is
// never taken while the emulator's is held. The world's TPU capacity, quota and reservations
// (capacityState) and a test's settings and records (controlState) each have theirs, taken after
// the emulator's when both are.
//
// # Packages
//
// This package is the facade: what its callers use is its exported API. Parts of one concern live
// in subpackages, which it imports and which never import it:
//   - rules: GKE's rules on their own, without locks, I/O or goroutines: versions, names and
//     locations, node pool planning, labels, maintenance policies, release channels, capacity
//     options, autoscaling, node auto-provisioning (the pool a Pod's TPU request needs, its name,
//     what it counts against the cluster's resource limits), and what GKE adds to a cluster or
//     node pool.
//   - apierr: the GKE API error (code, HTTP status, status name, legacy reason, JSON body).
//   - kubeproc: the Kubernetes processes. It finds the binaries (DefaultKubeBinDir delegates to
//     it), makes a cluster's key material, starts etcd and each cluster's kube-apiserver, holds the
//     flags of kube-scheduler and kube-controller-manager, and keeps every child process in one
//     group that stops with the emulator. It knows nothing of GKE's state or of Emulator.
//   - tpuwebhook: GKE's KubeRay TPU webhook (the mutation of TPU worker Pods, the validation of
//     RayClusters) and its HTTPS server, built from a Config of clients and functions (a cluster's
//     Kubernetes client by UID, Logf, the key material) with no pointer back to Emulator; the
//     emulator starts it, and registers it in a cluster when the Ray Operator add-on is enabled.
//   - nodeagent: what acts on a cluster's Pods where GKE has kubelets and the cluster autoscaler:
//     the node agent (a bound Pod starts, with a Pod IP; a failed host's Pods fail) and node
//     auto-provisioning's loop (a node pool for unschedulable TPU Pods, the autoscaler's events).
//     It is built from a Config of the cluster's Kubernetes client and functions of the emulator's
//     (a snapshot of the cluster's node pools, CreateNodePool's path), each taking the emulator's
//     lock itself; it holds no pointer to Emulator or its clusters.
//   - clusterkube: what runs beside each cluster's kube-apiserver: kube-scheduler,
//     kube-controller-manager and the node agent from the cluster's first workload, and, while the
//     Ray Operator add-on is armed, KubeRay's ray-operator from its first Ray object, each process
//     started again if it exits. It is built from a Config of the cluster's clients, its
//     kube-apiserver's port, CA and token, the emulator's process group and binaries, and
//     functions of the emulator's (the node agent's Config, Logf); it holds no pointer to Emulator
//     or its clusters, and the emulator keeps the Runtime it returns, which it stops before the
//     kube-apiserver.
//   - raydashboard: the Ray dashboard of one RayCluster as KubeRay and Ray's job tools reach it,
//     its Serve and Jobs REST APIs in Ray's documented shapes, built from a Config of a clock,
//     timings and functions that place deployments and end jobs; standard library only.
//   - rayproxy: each cluster's proxy to its Ray endpoints, ray-operator's HTTP_PROXY and the
//     kube-apiserver's cluster egress (HTTP CONNECT, as Konnectivity is GKE's):
//     a Service's DNS name or a Pod's address resolved to a RayCluster's Pod, its head's dashboard
//     port answered by that RayCluster's raydashboard, its Serve proxies' health by whether Serve
//     runs; replicas placed by the resources of the RayCluster's running Pods. Built from a Config
//     of the cluster's client and its dashboards, which the emulator keeps across kube-apiserver
//     restarts; the proxy stops with the kube-apiserver.
//   - gketpu and machines: GKE's TPU and machine type tables, each row with its source.
//
// The imports point one way: emulator -> rules -> apierr; rules -> gketpu, machines;
// emulator -> kubeproc; emulator -> tpuwebhook -> gketpu; emulator -> nodeagent -> rules, apierr,
// gketpu; emulator -> clusterkube -> kubeproc, nodeagent; emulator -> rayproxy -> raydashboard,
// which imports none of them. `go list -deps ./internal/emulator/<package>` shows it, and
// TestImportsPointOneWay fails on an import outside it.
package emulator
