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

// uncovered is how much of span none of the spans in busy covers.
func uncovered(span window, busy []window) time.Duration {
	var within []window
	for _, b := range busy {
		start, end := b.Start, b.End
		if start.Before(span.Start) {
			start = span.Start
		}
		if end.After(span.End) {
			end = span.End
		}
		if end.After(start) {
			within = append(within, window{start, end})
		}
	}
	return span.End.Sub(span.Start) - covered(within)
}

// covered is how much time the spans cover together, overlaps counted once.
func covered(spans []window) time.Duration {
	sorted := append([]window(nil), spans...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	var total time.Duration
	var end time.Time
	for _, s := range sorted {
		if s.Start.After(end) {
			end = s.Start
		}
		if s.End.After(end) {
			total += s.End.Sub(end)
			end = s.End
		}
	}
	return total
}

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

// opWait is what one operation cost its waiter: the call that started it, the polls, the reads of
// its target, and how long after the operation ended the waiter saw it done.
type opWait struct {
	Op      opInfo
	Creates int // the mutating call that returned the operation (1, or 0 if it was not seen)
	Polls   int // GetOperation calls on it
	// Reads are the reads of its target after it started: GetNodePool of its pool, or the
	// cluster resource's GetCluster for a cluster operation.
	Reads int
	// Detection is the time from the operation's end to the first call that could see it done:
	// a poll of the operation, or a read of its target, answered after the end.
	Detection time.Duration
	Detected  bool
}

// Calls is the mutating call, the polls and the reads.
func (w opWait) Calls() int { return w.Creates + w.Polls + w.Reads }

// FixedPollCalls is what a fixed 10-second poll would have cost for the same operation: the
// mutating call, ceil(duration / 10 s) polls and one read of the target once it is done.
func (w opWait) FixedPollCalls() int {
	return 2 + int(math.Ceil(float64(w.Op.Duration())/float64(fixedPollInterval)))
}

// seen records a call on the operation or its target answered by r: the first one answered after
// the operation ended is when the waiter could see it done.
func (w *opWait) seen(r emulator.RequestRecord) {
	if w.Detected || w.Op.End.IsZero() || r.Time.Add(r.Duration).Before(w.Op.End) {
		return
	}
	w.Detected = true
	w.Detection = max(r.Time.Sub(w.Op.End), 0)
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
// operation it returned by time, the operation having started while the request was served; a
// read of a pool or of the cluster, to the last operation on it started before the read.
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
	// read counts r as a read of the target of the last operation on pool ("" for the cluster)
	// that started before it.
	read := func(r emulator.RequestRecord, pool string) {
		var last *opInfo
		for i, o := range ops {
			if o.Pool == pool && o.Start.Before(r.Time) && (last == nil || o.Start.After(last.Start)) {
				last = &ops[i]
			}
		}
		if last != nil {
			w := wait(*last)
			w.Reads++
			w.seen(r)
		}
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
			w.seen(r)
		case strings.Contains(r.Path, "/nodePools"):
			calls.Slices[r.RPC]++
			if o, ok := startedBy(r, "CreateNodePool", containerpb.Operation_CREATE_NODE_POOL, ops); ok {
				wait(o).Creates++
			}
			if _, pool, ok := strings.Cut(r.Path, "/nodePools/"); ok && r.RPC == "GetNodePool" {
				read(r, pool)
			}
		case clusterApply.contains(r.Time):
			calls.Cluster[r.RPC]++
			if o, ok := startedBy(r, "CreateCluster", containerpb.Operation_CREATE_CLUSTER, ops); ok {
				wait(o).Creates++
			}
			if r.RPC == "GetCluster" {
				read(r, "")
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
	Calls          float64 // mean mutating call + polls + reads
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
