package emulator

import (
	"context"
	"time"
)

// Controller is the control surface of an emulator, implemented by *Emulator in-process and by
// *Client over the control API, so tests use the same calls either way.
type Controller interface {
	// Reset deletes every cluster (stopping its kube-apiserver) and operation and restores the
	// default latencies, capacity, quotas, faults, request log and counters.
	Reset(ctx context.Context) error
	// SetLatencies sets the time operations take, by containerpb.Operation_Type name
	// ("CREATE_NODE_POOL"); the key "default" sets the latency of every other type.
	SetLatencies(ctx context.Context, latencies map[string]time.Duration) error
	// SetClusterLatencies sets latencies as SetLatencies does, for one cluster only
	// (projects/P/locations/L/clusters/C): its operations, its node pools' and its Ray Operator
	// add-on's CRDs. They come before SetLatencies' and last until Reset, so that a test slowing
	// one cluster leaves the others as they are.
	SetClusterLatencies(ctx context.Context, cluster string, latencies map[string]time.Duration) error
	// SetCapacity sets the TPU chips a zone has for a generation (negative: unlimited).
	SetCapacity(ctx context.Context, c Capacity) error
	// SetQuota sets the TPU chips a project may hold for a generation (negative: unlimited).
	SetQuota(ctx context.Context, q Quota) error
	// InjectFault makes matching GKE or Compute Engine API requests fail (before or after taking
	// effect, see Fault.Lost); it returns the fault's id.
	InjectFault(ctx context.Context, f Fault) (string, error)
	// ClearFaults removes every request fault and operation fault.
	ClearFaults(ctx context.Context) error
	// FailNextOperation makes the next matching operation(s) end DONE with the given error.
	FailNextOperation(ctx context.Context, f OperationFault) error
	// FailHost marks one node of a pool NotReady and the pool RUNNING_WITH_ERROR; on a cluster
	// with the Ray Operator add-on, the node's Pods fail (package nodeagent).
	FailHost(ctx context.Context, h HostFailure) error
	// Requests returns the GKE API request log, oldest first.
	Requests(ctx context.Context) ([]RequestRecord, error)
	// Counters returns the number of GKE API requests per ClusterManager method (e.g.
	// "CreateNodePool"; "Unknown" for paths that match none).
	Counters(ctx context.Context) (map[string]int, error)
	// RayCRDInstalls returns, oldest first, how long each enabled Ray Operator add-on took to
	// serve its KubeRay CRDs: work of the emulated GKE that, like an operation, a client waits for.
	RayCRDInstalls(ctx context.Context) ([]RayCRDInstall, error)
	// CreateReservation creates (or replaces) a Compute Engine reservation of TPU chips in a zone.
	CreateReservation(ctx context.Context, r Reservation) error
	// ScalePool does what the cluster autoscaler (or a fulfilled ProvisioningRequest) does: brings
	// an autoscaled or queued node pool to a number of nodes, a multi-host slice to 0 or all hosts.
	ScalePool(ctx context.Context, s PoolScale) error
	// CreateResourcePolicy creates a Compute Engine workload policy at once (no operation), as
	// `gcloud compute resource-policies create workload-policy` would have before a test starts.
	CreateResourcePolicy(ctx context.Context, p ResourcePolicy) error
	// SetRayJobOutcome decides how Ray jobs submitted to a cluster's RayClusters end (through
	// their dashboards' Jobs API): those whose entrypoint contains Match end as Status, with Logs,
	// or with Status RUNNING run until they are stopped.
	// The latest matching outcome applies; a job no outcome matches succeeds with no logs.
	SetRayJobOutcome(ctx context.Context, o RayJobOutcome) error
	// DNSEndpointCA returns the PEM of the CA that signs the clusters' DNS-based endpoints
	// (localhost:PORT): trust it as a public root (SSL_CERT_FILE) to use them.
	DNSEndpointCA(ctx context.Context) ([]byte, error)
}

// ResourcePolicy is a Compute Engine resource policy of the workload policy kind, the placement
// of multi-host tpu7x slices (NodePool.placementPolicy.policyName).
type ResourcePolicy struct {
	Project string `json:"project"`
	Region  string `json:"region"`
	Name    string `json:"name"`
	// Type is the workload policy type, HIGH_THROUGHPUT (the default) or HIGH_AVAILABILITY.
	Type string `json:"type,omitempty"`
	// AcceleratorTopology is the slice topology, e.g. "4x4x4".
	AcceleratorTopology string `json:"acceleratorTopology,omitempty"`
}

// RayJobOutcome is how the Ray jobs of a cluster whose entrypoint contains Match end.
type RayJobOutcome struct {
	// Cluster is the cluster's name, projects/P/locations/L/clusters/C.
	Cluster string `json:"cluster"`
	Match   string `json:"match"`
	// Status is SUCCEEDED or FAILED, or RUNNING for a job that runs until it is stopped.
	Status string `json:"status"`
	Logs   string `json:"logs,omitempty"`
}

// RayCRDInstall is the span from a Ray Operator add-on being reported enabled to its KubeRay CRDs
// being Established in the cluster (RayCRDDelay included).
type RayCRDInstall struct {
	Cluster string    `json:"cluster"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

var _ Controller = (*Emulator)(nil)

// Capacity is how many TPU chips of a generation a zone can still provision.
type Capacity struct {
	Zone       string `json:"zone"`
	Generation string `json:"generation"`
	// Type is the kind of capacity: CapacityOnDemand (the default), CapacitySpot or
	// CapacityFlexStart. Reservations have capacity of their own (Reservation).
	Type string `json:"type,omitempty"`
	// Chips is the zone's total for the generation; negative means unlimited (the default).
	Chips int `json:"chips"`
}

// The kinds of capacity a zone has for a generation, each with its own stock: Compute Engine
// offers TPUs on demand, as Spot VMs and as flex-start VMs (GKE "About GPU and TPU provisioning
// with flex-start"), besides reservations.
const (
	CapacityOnDemand  = "on-demand"
	CapacitySpot      = "spot"
	CapacityFlexStart = "flex-start"
)

// Reservation is a Compute Engine reservation of TPU chips in a zone, which node pools consume by
// reservation affinity: by name (SPECIFIC_RESERVATION, from another project when it is shared),
// optionally one of its blocks, or any matching one (ANY_RESERVATION).
type Reservation struct {
	Project    string `json:"project"`
	Zone       string `json:"zone"`
	Name       string `json:"name"`
	Generation string `json:"generation"`
	// MachineType is the VMs' machine type, as Compute Engine reserves them
	// (specificReservation.instanceProperties.machineType): set, only node pools of that machine
	// type consume the reservation, Chips is a whole number of its VMs, the generation is the
	// machine type's, and Compute Engine's reservations API serves it. Unset, pools of any machine
	// type of Generation consume it, and Compute Engine does not serve it (it would have no count
	// of VMs to report).
	MachineType string `json:"machineType,omitempty"`
	// Chips is the reservation's size in chips.
	Chips int `json:"chips"`
	// Blocks are the names of its reservation blocks, if it has any.
	Blocks []string `json:"blocks,omitempty"`
	// SpecificOnly is Compute Engine's specificReservationRequired: only node pools that name the
	// reservation consume it, never ones with ANY_RESERVATION.
	SpecificOnly bool `json:"specificOnly,omitempty"`
}

// Quota is how many TPU chips of a generation a project may hold, in every location together.
type Quota struct {
	Project    string `json:"project"`
	Generation string `json:"generation"`
	// Chips is the limit; negative means unlimited (the default).
	Chips int `json:"chips"`
}

// Fault makes matching API requests (GKE or Compute Engine) fail with a Google error instead of
// being served, or, with Lost, be served and lose their response.
type Fault struct {
	// Method is the HTTP method to match; empty matches any.
	Method string `json:"method,omitempty"`
	// Path is a regular expression matched against the request path; empty matches any.
	Path string `json:"path,omitempty"`
	// RPC is a ClusterManager method name (e.g. "CreateNodePool") or a Compute Engine method id
	// (e.g. "compute.resourcePolicies.insert"); empty matches any.
	RPC string `json:"rpc,omitempty"`
	// Status is the google.rpc.Code name, e.g. "UNAVAILABLE" or "RESOURCE_EXHAUSTED"; required
	// unless Lost is set (LostError defaults to UNAVAILABLE; LostReset and LostTimeout send no error).
	Status string `json:"status,omitempty"`
	// HTTPStatus overrides the HTTP code that Status maps to.
	HTTPStatus int    `json:"httpStatus,omitempty"`
	Message    string `json:"message,omitempty"`
	// Reason adds a google.rpc.ErrorInfo detail.
	Reason string `json:"reason,omitempty"`
	// Times is how many matching requests fail; 0 means every one until ClearFaults.
	Times int `json:"times,omitempty"`
	// Probability is the chance a matching request fails; 0 means always.
	Probability float64 `json:"probability,omitempty"`
	// Lost makes the fault act after the fact: the request takes effect (a create starts its
	// operation, a delete deletes), then its response is lost on the way back, as when a front end
	// or a connection fails after the backend acted. LostError answers the fault's error in place
	// of the response, LostReset resets the connection without a response, LostTimeout holds the
	// response for Hold or until the client gives up, then closes the connection. Only mutating
	// requests (any method but GET) match a fault with Lost set. Empty: the request fails without
	// taking effect.
	Lost string `json:"lost,omitempty"`
	// Hold is how long a LostTimeout fault holds the response (DefaultLostHold when 0); in JSON,
	// nanoseconds.
	Hold time.Duration `json:"hold,omitempty"`
}

// Values of Fault.Lost.
const (
	LostError   = "error"
	LostReset   = "reset"
	LostTimeout = "timeout"
)

// DefaultLostHold is how long a LostTimeout fault holds a response when Fault.Hold is 0.
const DefaultLostHold = time.Minute

// OperationFault makes matching operations end DONE with an error (Operation.error set) and
// their target in the state a failed operation leaves (a created pool or cluster in ERROR, a
// resource policy not created or not deleted).
type OperationFault struct {
	// OperationType is a containerpb.Operation_Type name such as "CREATE_NODE_POOL", or the
	// Compute Engine method that starts the operation ("compute.resourcePolicies.insert" or
	// "compute.resourcePolicies.delete"); empty matches any.
	OperationType string `json:"operationType,omitempty"`
	// Target is a regular expression matched against the target's resource name
	// (projects/p/locations/l/clusters/c[/nodePools/n], projects/p/regions/r/resourcePolicies/n);
	// empty matches any.
	Target string `json:"target,omitempty"`
	// Status is the google.rpc.Code name of the error; default "INTERNAL".
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	// Reason is a containerpb.StatusCondition_Code name such as "GCE_STOCKOUT", reported as an
	// ErrorInfo detail and as the operation's cluster or node pool condition; for a Compute Engine
	// operation, the code of its error.errors[] entry (e.g. "RESOURCE_OPERATION_RATE_EXCEEDED").
	Reason string `json:"reason,omitempty"`
	// Times is how many matching operations fail; 0 means 1.
	Times int `json:"times,omitempty"`
}

// HostFailure names one host (node) of a node pool by worker index.
type HostFailure struct {
	// Cluster is the full name projects/{p}/locations/{l}/clusters/{c}.
	Cluster  string `json:"cluster"`
	NodePool string `json:"nodePool"`
	// Worker is the worker index (the number at the end of the node's name).
	Worker int `json:"worker"`
}

// RequestRecord is one API request (GKE or Compute Engine) as the emulator saw it.
type RequestRecord struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	RPC    string    `json:"rpc"`
	Status int       `json:"status"`
	// Duration is how long the emulator took to answer.
	Duration time.Duration `json:"duration"`
	// Lost is the Fault.Lost of a fault that lost the response (Status is 0 when no response was
	// sent at all).
	Lost string `json:"lost,omitempty"`
	// Body is the body of a request that changes something (any method but GET), as it was sent:
	// what a client asked for, which GKE's answer no longer tells apart from what GKE added.
	Body []byte `json:"body,omitempty"`
}
