package emulator

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

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

// controlState is what the control API sets for a test (latencies, faults) and what it reports
// (the request log, counters, the add-on's CRD installs, Ray jobs' outcomes); the emulated
// world's capacity is capacityState's. It has its own lock, taken after e.mu when both are.
type controlState struct {
	mu         sync.Mutex
	defLatency time.Duration
	latencies  map[string]time.Duration
	// clusterLatencies are SetClusterLatencies', by cluster key.
	clusterLatencies map[string]map[string]time.Duration
	faults           []*fault
	opFaults         []*opFault
	requests         []RequestRecord
	counters         map[string]int
	rayCRDs          []RayCRDInstall
	rayJobs          []RayJobOutcome
	nextID           int
	base             Options
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
	c.faults, c.opFaults = nil, nil
	c.requests = nil
	c.counters = map[string]int{}
	c.rayCRDs = nil
	c.rayJobs = nil
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

const maxRequestLog = 10000

func (c *controlState) record(method, path, rpc string, status int, lost string, start time.Time, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.requests) >= maxRequestLog {
		c.requests = c.requests[1:]
	}
	if method == http.MethodGet {
		body = nil
	}
	c.requests = append(c.requests, RequestRecord{Time: start, Method: method, Path: path, RPC: rpc, Status: status,
		Duration: time.Since(start), Lost: lost, Body: body})
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

func (c *controlState) recordRayCRDs(install RayCRDInstall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rayCRDs = append(c.rayCRDs, install)
}
