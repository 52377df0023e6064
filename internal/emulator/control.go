package emulator

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

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
	e.capacity.reset()
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
	e.capacity.setCapacity(c.Zone, g.Name, typ, c.Chips)
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
	e.capacity.setQuota(q.Project, g.Name, q.Chips)
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
