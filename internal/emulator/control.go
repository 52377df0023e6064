package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// controlPrefix is the path prefix of the control API (JSON, same bearer token as the GKE API).
const controlPrefix = "/emulator/v1/"

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
}

type fault struct {
	id   string
	spec Fault
	path *regexp.Regexp
	left int // <0 unlimited
	err  *apierr.Error
}

type opFault struct {
	spec   OperationFault
	target *regexp.Regexp
	left   int
	err    *apierr.Error
}

// capKey keys capacity (where a zone, typ the kind) and quota (where a project, typ empty).
type capKey struct{ where, gen, typ string }

// controlState is what the control API sets. It has its own lock, taken after e.mu when both are.
type controlState struct {
	mu         sync.Mutex
	defLatency time.Duration
	latencies  map[string]time.Duration
	// clusterLatencies are SetClusterLatencies', by cluster key.
	clusterLatencies map[string]map[string]time.Duration
	capacity         map[capKey]int
	quota            map[capKey]int
	// reservations by projects/{p}/zones/{z}/reservations/{name}.
	reservations map[string]Reservation
	faults       []*fault
	opFaults     []*opFault
	requests     []RequestRecord
	counters     map[string]int
	rayCRDs      []RayCRDInstall
	nextID       int
	base         Options
}

func newControlState(o Options) *controlState {
	c := &controlState{base: o}
	c.resetLocked()
	return c
}

func (c *controlState) resetLocked() {
	c.defLatency = c.base.DefaultLatency
	if c.defLatency == 0 {
		c.defLatency = DefaultLatency
	}
	c.latencies = map[string]time.Duration{}
	c.clusterLatencies = map[string]map[string]time.Duration{}
	for k, v := range c.base.Latencies {
		if k == "default" {
			c.defLatency = v
		} else {
			c.latencies[k] = v
		}
	}
	c.capacity = map[capKey]int{}
	c.quota = map[capKey]int{}
	c.reservations = map[string]Reservation{}
	c.faults, c.opFaults = nil, nil
	c.requests = nil
	c.counters = map[string]int{}
	c.rayCRDs = nil
}

// latency is how long an operation of opType on cluster (a cluster key; empty for none) takes:
// the cluster's latency of the type or its default, else the emulator's.
func (c *controlState) latency(cluster, opType string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.clusterLatencies[cluster][opType]; ok {
		return d
	}
	if d, ok := c.clusterLatencies[cluster]["default"]; ok && opType != RayCRDsLatency {
		return d
	}
	if d, ok := c.latencies[opType]; ok {
		return d
	}
	return c.defLatency
}

// rayCRDLatency is the latency of cluster's KubeRay CRDs when one was set (SetLatencies or
// SetClusterLatencies).
func (c *controlState) rayCRDLatency(cluster string) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.clusterLatencies[cluster][RayCRDsLatency]; ok {
		return d, true
	}
	d, ok := c.latencies[RayCRDsLatency]
	return d, ok
}

// limit returns the capacity of a kind (or the quota, typ "") for where/gen, or -1 for unlimited.
func (c *controlState) limit(m map[capKey]int, where, gen, typ string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := m[capKey{where, gen, typ}]; ok {
		return n
	}
	return -1
}

const maxRequestLog = 10000

func (c *controlState) record(method, path, rpc string, status int, lost string, start time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.requests) >= maxRequestLog {
		c.requests = c.requests[1:]
	}
	c.requests = append(c.requests, RequestRecord{Time: start, Method: method, Path: path, RPC: rpc, Status: status,
		Duration: time.Since(start), Lost: lost})
	c.counters[rpc]++
}

// matchFault returns the fault a request meets, if any (counting it against Times).
func (c *controlState) matchFault(method, path, rpc string) *fault {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.faults {
		if (f.spec.Method != "" && f.spec.Method != method) || (f.spec.RPC != "" && f.spec.RPC != rpc) ||
			(f.path != nil && !f.path.MatchString(path)) || (f.spec.Lost != "" && method == http.MethodGet) {
			continue
		}
		if f.spec.Probability > 0 && rand.Float64() >= f.spec.Probability {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				c.faults = append(c.faults[:i], c.faults[i+1:]...)
			}
		}
		return f
	}
	return nil
}

func (c *controlState) takeOperationFault(opType, target string) *apierr.Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.opFaults {
		if (f.spec.OperationType != "" && f.spec.OperationType != opType) || (f.target != nil && !f.target.MatchString(target)) {
			continue
		}
		f.left--
		if f.left <= 0 {
			c.opFaults = append(c.opFaults[:i], c.opFaults[i+1:]...)
		}
		return f.err
	}
	return nil
}

func faultError(status string, httpStatus int, message, reason string, def codes.Code) (*apierr.Error, error) {
	code := def
	if status != "" {
		var ok bool
		if code, ok = apierr.ParseStatusName(status); !ok || code == codes.OK {
			return nil, fmt.Errorf("unknown status %q: use a google.rpc.Code name such as UNAVAILABLE", status)
		}
	}
	if message == "" {
		message = "Injected fault: " + apierr.StatusName(code) + "."
	}
	e := apierr.New(code, "%s", message)
	e.Reason = reason
	if httpStatus != 0 {
		e.HTTPStatus = httpStatus
	}
	return e, nil
}

func compileOptional(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	return regexp.Compile(expr)
}

// Reset implements Controller.
func (e *Emulator) Reset(ctx context.Context) error {
	e.mu.Lock()
	ops := e.st.ops
	for _, op := range ops {
		if op.cancel != nil {
			op.cancel()
		}
	}
	clusters := e.st.allClusters()
	for _, c := range clusters {
		c.rayGen++ // ends any pending or retrying CRD change
	}
	e.st = newState()
	e.ctl.mu.Lock()
	e.ctl.resetLocked()
	e.ctl.mu.Unlock()
	e.persistLocked()
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stopAPIServer()
			e.removeClusterDir(c)
		}()
	}
	wg.Wait()
	return nil
}

// SetLatencies implements Controller.
func (e *Emulator) SetLatencies(ctx context.Context, latencies map[string]time.Duration) error {
	if err := checkLatencies(latencies); err != nil {
		return err
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	for k, d := range latencies {
		if k == "default" {
			e.ctl.defLatency = d
		} else {
			e.ctl.latencies[k] = d
		}
	}
	return nil
}

// SetClusterLatencies implements Controller.
func (e *Emulator) SetClusterLatencies(ctx context.Context, cluster string, latencies map[string]time.Duration) error {
	if parts := strings.Split(cluster, "/"); len(parts) != 6 || parts[0] != "projects" || parts[2] != "locations" || parts[4] != "clusters" ||
		parts[1] == "" || parts[3] == "" || parts[5] == "" {
		return fmt.Errorf("cluster %q is not projects/{project}/locations/{location}/clusters/{cluster}", cluster)
	}
	if err := checkLatencies(latencies); err != nil {
		return err
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	if e.ctl.clusterLatencies[cluster] == nil {
		e.ctl.clusterLatencies[cluster] = map[string]time.Duration{}
	}
	for k, d := range latencies {
		e.ctl.clusterLatencies[cluster][k] = d
	}
	return nil
}

// checkLatencies refuses keys that are no operation type, "default" or RayCRDsLatency, and
// negative latencies.
func checkLatencies(latencies map[string]time.Duration) error {
	for k, d := range latencies {
		if _, ok := containerpb.Operation_Type_value[k]; !ok && k != "default" && k != RayCRDsLatency {
			return fmt.Errorf("unknown operation type %q: use a containerpb.Operation_Type name such as CREATE_NODE_POOL, \"default\" or %q", k, RayCRDsLatency)
		}
		if d < 0 {
			return fmt.Errorf("latency of %s is negative", k)
		}
	}
	return nil
}

// SetCapacity implements Controller.
func (e *Emulator) SetCapacity(ctx context.Context, c Capacity) error {
	g, err := gketpu.LookupGeneration(c.Generation)
	if err != nil {
		return err
	}
	if !rules.IsZone(c.Zone) {
		return fmt.Errorf("capacity is per zone (like us-central2-b), got %q", c.Zone)
	}
	typ := c.Type
	switch typ {
	case "":
		typ = CapacityOnDemand
	case CapacityOnDemand, CapacitySpot, CapacityFlexStart:
	default:
		return fmt.Errorf("capacity type %q: want %s, %s or %s", c.Type, CapacityOnDemand, CapacitySpot, CapacityFlexStart)
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	e.ctl.capacity[capKey{c.Zone, g.Name, typ}] = c.Chips
	return nil
}

// SetQuota implements Controller.
func (e *Emulator) SetQuota(ctx context.Context, q Quota) error {
	g, err := gketpu.LookupGeneration(q.Generation)
	if err != nil {
		return err
	}
	if q.Project == "" {
		return fmt.Errorf("quota needs a project")
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	e.ctl.quota[capKey{q.Project, g.Name, ""}] = q.Chips
	return nil
}

// InjectFault implements Controller.
func (e *Emulator) InjectFault(ctx context.Context, f Fault) (string, error) {
	re, err := compileOptional(f.Path)
	if err != nil {
		return "", fmt.Errorf("fault path: %w", err)
	}
	switch f.Lost {
	case "":
		if f.Status == "" {
			return "", fmt.Errorf("a fault needs a status, such as UNAVAILABLE")
		}
	case LostError, LostReset, LostTimeout:
		if f.Method == http.MethodGet {
			return "", fmt.Errorf("a fault with lost=%q loses the response of a request that took effect: it needs a mutating method, not GET", f.Lost)
		}
	default:
		return "", fmt.Errorf("unknown lost %q: use %q, %q or %q", f.Lost, LostError, LostReset, LostTimeout)
	}
	if f.Hold < 0 {
		return "", fmt.Errorf("fault hold is negative")
	}
	aerr, err := faultError(f.Status, f.HTTPStatus, f.Message, f.Reason, codes.Unavailable)
	if err != nil {
		return "", err
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	e.ctl.nextID++
	id := "fault-" + strconv.Itoa(e.ctl.nextID)
	left := f.Times
	if left <= 0 {
		left = -1
	}
	e.ctl.faults = append(e.ctl.faults, &fault{id: id, spec: f, path: re, left: left, err: aerr})
	return id, nil
}

// ClearFaults implements Controller.
func (e *Emulator) ClearFaults(ctx context.Context) error {
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	e.ctl.faults, e.ctl.opFaults = nil, nil
	return nil
}

// FailNextOperation implements Controller.
func (e *Emulator) FailNextOperation(ctx context.Context, f OperationFault) error {
	isCompute := computeOperationMethods[f.OperationType]
	if _, ok := containerpb.Operation_Type_value[f.OperationType]; f.OperationType != "" && !ok && !isCompute {
		return fmt.Errorf("unknown operation type %q", f.OperationType)
	}
	if _, ok := containerpb.StatusCondition_Code_value[f.Reason]; f.Reason != "" && !ok && !isCompute {
		return fmt.Errorf("unknown reason %q: use a containerpb.StatusCondition_Code name such as GCE_STOCKOUT", f.Reason)
	}
	re, err := compileOptional(f.Target)
	if err != nil {
		return fmt.Errorf("operation fault target: %w", err)
	}
	aerr, err := faultError(f.Status, 0, f.Message, f.Reason, codes.Internal)
	if err != nil {
		return err
	}
	left := f.Times
	if left <= 0 {
		left = 1
	}
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	e.ctl.opFaults = append(e.ctl.opFaults, &opFault{spec: f, target: re, left: left, err: aerr})
	return nil
}

// computeOperationMethods are the Compute Engine methods whose operations OperationFault can fail.
var computeOperationMethods = map[string]bool{"compute.resourcePolicies.insert": true, "compute.resourcePolicies.delete": true}

// Requests implements Controller.
func (e *Emulator) Requests(ctx context.Context) ([]RequestRecord, error) {
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	return append([]RequestRecord(nil), e.ctl.requests...), nil
}

// Counters implements Controller.
func (e *Emulator) Counters(ctx context.Context) (map[string]int, error) {
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	out := make(map[string]int, len(e.ctl.counters))
	for k, v := range e.ctl.counters {
		out[k] = v
	}
	return out, nil
}

// CreateResourcePolicy implements Controller.
func (e *Emulator) CreateResourcePolicy(ctx context.Context, p ResourcePolicy) error {
	if p.Project == "" {
		return fmt.Errorf("a resource policy needs a project")
	}
	typ := p.Type
	if typ == "" {
		typ = "HIGH_THROUGHPUT"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rp, err := e.newResourcePolicyLocked(p.Project, p.Region, &compute.ResourcePolicy{Name: p.Name,
		WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: typ, AcceleratorTopology: p.AcceleratorTopology}})
	if err != nil {
		return fmt.Errorf("%s", err.Message)
	}
	rp.Ready = true
	e.persistLocked()
	return nil
}

// RayCRDInstalls implements Controller.
func (e *Emulator) RayCRDInstalls(ctx context.Context) ([]RayCRDInstall, error) {
	e.ctl.mu.Lock()
	defer e.ctl.mu.Unlock()
	return append([]RayCRDInstall(nil), e.ctl.rayCRDs...), nil
}

func (c *controlState) recordRayCRDs(install RayCRDInstall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rayCRDs = append(c.rayCRDs, install)
}

// controlHandler serves the Controller methods as JSON under /emulator/v1/.
func (e *Emulator) controlHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, f func(r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !e.authorized(r) {
				writeError(w, errUnauthenticated)
				return
			}
			out, err := f(r)
			if err != nil {
				writeError(w, apierr.Invalid("%v", err))
				return
			}
			if out == nil {
				out = struct{}{}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
		})
	}
	handle("POST "+controlPrefix+"reset", func(r *http.Request) (any, error) { return nil, e.Reset(r.Context()) })
	handle("PUT "+controlPrefix+"latencies", func(r *http.Request) (any, error) {
		var in map[string]string
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		l, err := parseLatencies(in)
		if err != nil {
			return nil, err
		}
		return nil, e.SetLatencies(r.Context(), l)
	})
	handle("PUT "+controlPrefix+"clusterLatencies", func(r *http.Request) (any, error) {
		var in clusterLatenciesBody
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		l, err := parseLatencies(in.Latencies)
		if err != nil {
			return nil, err
		}
		return nil, e.SetClusterLatencies(r.Context(), in.Cluster, l)
	})
	handle("POST "+controlPrefix+"capacity", withBody(e.SetCapacity))
	handle("POST "+controlPrefix+"quota", withBody(e.SetQuota))
	handle("POST "+controlPrefix+"faults", func(r *http.Request) (any, error) {
		var in Fault
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		id, err := e.InjectFault(r.Context(), in)
		return map[string]string{"id": id}, err
	})
	handle("DELETE "+controlPrefix+"faults", func(r *http.Request) (any, error) { return nil, e.ClearFaults(r.Context()) })
	handle("POST "+controlPrefix+"operationFaults", withBody(e.FailNextOperation))
	handle("POST "+controlPrefix+"hostFailures", withBody(e.FailHost))
	handle("GET "+controlPrefix+"requests", func(r *http.Request) (any, error) {
		reqs, err := e.Requests(r.Context())
		return map[string]any{"requests": reqs}, err
	})
	handle("GET "+controlPrefix+"counters", func(r *http.Request) (any, error) {
		c, err := e.Counters(r.Context())
		return map[string]any{"counters": c}, err
	})
	handle("POST "+controlPrefix+"resourcePolicies", withBody(e.CreateResourcePolicy))
	handle("POST "+controlPrefix+"reservations", withBody(e.CreateReservation))
	handle("POST "+controlPrefix+"poolScales", withBody(e.ScalePool))
	handle("GET "+controlPrefix+"dnsEndpointCA", func(r *http.Request) (any, error) {
		return map[string]string{"pem": string(e.DNSEndpointCAPEM())}, nil
	})
	handle("GET "+controlPrefix+"rayCRDInstalls", func(r *http.Request) (any, error) {
		installs, err := e.RayCRDInstalls(r.Context())
		return map[string]any{"installs": installs}, err
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("No control method %s %s.", r.Method, r.URL.Path))
	})
	return mux
}

// decodeStrict reads a control request body, refusing unknown fields (a typo must not pass as a
// no-op).
func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// withBody adapts a Controller setter taking one JSON request body.
func withBody[T any](set func(context.Context, T) error) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		var in T
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		return nil, set(r.Context(), in)
	}
}

// clusterLatenciesBody is the body of PUT clusterLatencies: latencies as durations ("1.5s").
type clusterLatenciesBody struct {
	Cluster   string            `json:"cluster"`
	Latencies map[string]string `json:"latencies"`
}

// parseLatencies reads the durations of a latencies body.
func parseLatencies(in map[string]string) (map[string]time.Duration, error) {
	l := map[string]time.Duration{}
	for k, v := range in {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("latency of %s: %w", k, err)
		}
		l[k] = d
	}
	return l, nil
}
