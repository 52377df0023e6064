package main

import (
	"math"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// fixedPollInterval is terraform-provider-google's operation poll interval, the reference the
// provider's own schedule is compared with.
const fixedPollInterval = 10 * time.Second

// opInfo is one GKE operation as the emulator reports it.
type opInfo struct {
	Name  string // operation id, the last segment of its resource name
	Type  string // containerpb.Operation_Type name
	Pool  string // target node pool; empty for a cluster operation
	Start time.Time
	End   time.Time // zero while not DONE
}

// Duration is how long the operation ran in the emulator (its emulated latency, plus any work
// that outlasted it such as a kube-apiserver start).
func (o opInfo) Duration() time.Duration {
	if o.End.IsZero() {
		return 0
	}
	return o.End.Sub(o.Start)
}

// newOpInfo reads the fields the analysis needs from an operation.
func newOpInfo(op *containerpb.Operation) opInfo {
	info := opInfo{Name: op.GetName(), Type: op.GetOperationType().String()}
	if _, pool, ok := strings.Cut(op.GetTargetLink(), "/nodePools/"); ok {
		info.Pool = pool
	}
	info.Start, _ = time.Parse(time.RFC3339Nano, op.GetStartTime())
	info.End, _ = time.Parse(time.RFC3339Nano, op.GetEndTime())
	return info
}

// window is a span of wall-clock time, both ends included.
type window struct{ Start, End time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.Start) && !t.After(w.End) }

// inWindow returns the requests that arrived within w.
func inWindow(reqs []emulator.RequestRecord, w window) []emulator.RequestRecord {
	var out []emulator.RequestRecord
	for _, r := range reqs {
		if w.contains(r.Time) {
			out = append(out, r)
		}
	}
	return out
}

// opsIn returns the operations that started within w, oldest first.
func opsIn(ops []opInfo, w window) []opInfo {
	var out []opInfo
	for _, o := range ops {
		if w.contains(o.Start) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// opWait is what one operation cost its waiter: the call that started it, the polls, and how
// long after the operation ended the waiter saw it DONE.
type opWait struct {
	Op      opInfo
	Creates int // the mutating call that returned the operation (1, or 0 if it was not seen)
	Polls   int // GetOperation calls on it
	// Detection is the time from the operation's end to the poll that returned it DONE.
	Detection time.Duration
	Detected  bool
}

// Calls is the mutating call plus the polls.
func (w opWait) Calls() int { return w.Creates + w.Polls }

// FixedPollCalls is what a fixed 10-second poll would have cost for the same operation: the
// mutating call plus ceil(duration / 10 s) polls.
func (w opWait) FixedPollCalls() int {
	return 1 + int(math.Ceil(float64(w.Op.Duration())/float64(fixedPollInterval)))
}

// fixedPollDetection is the mean delay of a fixed poll between an operation's end and its
// detection, over the poll's phase: half the interval.
const fixedPollDetection = fixedPollInterval / 2

// apiCalls is one apply's GKE API calls split between the cluster resource and the slices.
type apiCalls struct {
	Cluster map[string]int // by RPC
	Slices  map[string]int // by RPC, all slices together
	// Waits are the slices' node pool operations, in start order, with their cost.
	Waits []opWait
	// ClusterWaits are the cluster's operations.
	ClusterWaits []opWait
}

// allWaits lists the cluster's operations, then the slices'.
func (c apiCalls) allWaits() []opWait {
	return append(append([]opWait(nil), c.ClusterWaits...), c.Waits...)
}

// attributeCalls splits the GKE requests of an apply between the cluster resource and the
// slices. Requests on a node pool, or on an operation whose target is a node pool, are the
// slices'; requests on an operation whose target is the cluster, the cluster's. Other cluster
// requests (CreateCluster, GetCluster) are the cluster's within clusterApply, the span in which
// Terraform applied the cluster resource, and the slices' outside it: their plan-time checks and
// their reads of the cluster before creating a pool. A CreateNodePool is matched to the
// operation it returned by time, the operation having started while the request was served.
func attributeCalls(reqs []emulator.RequestRecord, ops []opInfo, clusterApply window) apiCalls {
	calls := apiCalls{Cluster: map[string]int{}, Slices: map[string]int{}}
	byName := map[string]opInfo{}
	for _, o := range ops {
		byName[o.Name] = o
	}
	waits := map[string]*opWait{}
	wait := func(o opInfo) *opWait {
		if w := waits[o.Name]; w != nil {
			return w
		}
		w := &opWait{Op: o}
		waits[o.Name] = w
		return w
	}
	for _, r := range reqs {
		switch {
		case r.RPC == "GetOperation":
			o, ok := byName[lastSegment(r.Path)]
			if !ok {
				calls.Slices[r.RPC]++ // an operation that is not listed cannot be the cluster's
				continue
			}
			if o.Pool != "" {
				calls.Slices[r.RPC]++
			} else {
				calls.Cluster[r.RPC]++
			}
			w := wait(o)
			w.Polls++
			// The waiter stops polling once it sees DONE, so its last poll is the one that did,
			// if that poll was answered after the operation ended.
			w.Detected = !o.End.IsZero() && !r.Time.Add(r.Duration).Before(o.End)
			w.Detection = max(r.Time.Sub(o.End), 0)
		case strings.Contains(r.Path, "/nodePools"):
			calls.Slices[r.RPC]++
			if o, ok := startedBy(r, "CreateNodePool", containerpb.Operation_CREATE_NODE_POOL, ops); ok {
				wait(o).Creates++
			}
		case clusterApply.contains(r.Time):
			calls.Cluster[r.RPC]++
			if o, ok := startedBy(r, "CreateCluster", containerpb.Operation_CREATE_CLUSTER, ops); ok {
				wait(o).Creates++
			}
		default:
			calls.Slices[r.RPC]++
		}
	}
	for _, o := range ops {
		w, ok := waits[o.Name]
		if !ok {
			continue
		}
		if o.Pool != "" {
			calls.Waits = append(calls.Waits, *w)
		} else {
			calls.ClusterWaits = append(calls.ClusterWaits, *w)
		}
	}
	return calls
}

// startedBy returns the operation of type typ that a successful request r of the given RPC
// started: the one whose start time falls while r was served.
func startedBy(r emulator.RequestRecord, rpc string, typ containerpb.Operation_Type, ops []opInfo) (opInfo, bool) {
	if r.RPC != rpc || r.Status >= 300 {
		return opInfo{}, false
	}
	served := window{r.Time, r.Time.Add(r.Duration)}
	for _, o := range ops {
		if o.Type == typ.String() && served.contains(o.Start) {
			return o, true
		}
	}
	return opInfo{}, false
}

func lastSegment(path string) string {
	return path[strings.LastIndex(path, "/")+1:]
}

// total sums calls by RPC.
func total(byRPC map[string]int) int {
	n := 0
	for _, c := range byRPC {
		n += c
	}
	return n
}

// sortedRPCs lists the RPCs of the maps, most called first, then by name.
func sortedRPCs(maps ...map[string]int) []string {
	sum := map[string]int{}
	for _, m := range maps {
		for rpc, n := range m {
			sum[rpc] += n
		}
	}
	rpcs := make([]string, 0, len(sum))
	for rpc := range sum {
		rpcs = append(rpcs, rpc)
	}
	sort.Slice(rpcs, func(i, j int) bool {
		if sum[rpcs[i]] != sum[rpcs[j]] {
			return sum[rpcs[i]] > sum[rpcs[j]]
		}
		return rpcs[i] < rpcs[j]
	})
	return rpcs
}

// countByRPC counts requests by RPC.
func countByRPC(reqs []emulator.RequestRecord) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		out[r.RPC]++
	}
	return out
}

// waitSummary averages the operation waits.
type waitSummary struct {
	N              int
	Calls          float64 // mean mutating call + polls
	FixedCalls     float64 // mean of the same under a fixed 10-second poll
	Detection      time.Duration
	Undetected     int // operations whose DONE poll was not found
	OperationTotal time.Duration
}

func summarize(waits []opWait) waitSummary {
	s := waitSummary{N: len(waits)}
	if s.N == 0 {
		return s
	}
	var calls, fixed int
	var detection time.Duration
	detected := 0
	for _, w := range waits {
		calls += w.Calls()
		fixed += w.FixedPollCalls()
		s.OperationTotal += w.Op.Duration()
		if w.Detected {
			detection += w.Detection
			detected++
		} else {
			s.Undetected++
		}
	}
	s.Calls = float64(calls) / float64(s.N)
	s.FixedCalls = float64(fixed) / float64(s.N)
	if detected > 0 {
		s.Detection = detection / time.Duration(detected)
	}
	return s
}
