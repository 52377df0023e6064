package emulator

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// opWork is what an operation does: run is the slow part, done off-lock while the operation is
// RUNNING (at least as long as the operation type's latency); finish applies the outcome under
// e.mu, with err nil on success. run starts a fifth into the latency, or with runLast once the
// latency has passed, as the operation's last step.
type opWork struct {
	run     func(ctx context.Context) *apierr.Error
	runLast bool
	finish  func(err *apierr.Error)
}

func nowRFC3339() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// newOperationLocked registers an operation of type typ on cluster c; target is the resource name
// it acts on, pool the node pool it acts on ("" for a cluster-level operation). It refuses the
// operation as GKE does when it cannot start now (see admitLocked).
func (e *Emulator) newOperationLocked(c *cluster, typ containerpb.Operation_Type, target, pool string) (*operation, *apierr.Error) {
	if err := e.admitLocked(c, pool); err != nil {
		return nil, err
	}
	id := fmt.Sprintf("operation-%d-%s", time.Now().UnixMilli(), rules.RandomHex(4))
	op := &operation{
		Key:        "projects/" + c.Project + "/locations/" + c.Location + "/operations/" + id,
		Project:    c.Project,
		Location:   c.Location,
		ClusterKey: c.Key,
		Pool:       pool,
		PB: &containerpb.Operation{
			Name:          id,
			Zone:          c.Location, //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			Location:      c.Location,
			OperationType: typ,
			Status:        containerpb.Operation_PENDING,
			StartTime:     nowRFC3339(),
			Progress:      &containerpb.OperationProgress{},
		},
	}
	op.PB.SelfLink = e.endpoint + "/v1/" + op.Key
	op.PB.TargetLink = e.endpoint + "/v1/" + target
	op.fail = e.ctl.takeOperationFault(typ.String(), target)
	e.st.ops[op.Key] = op
	e.st.opOrder = append(e.st.opOrder, op.Key)
	if c.running == nil {
		c.running = map[string]*operation{}
	}
	c.running[op.Key] = op
	return op, nil
}

// DefaultMaxNodePoolOperations is GKE's cap on the node pool operations running at once on one
// cluster (429 "... hits the concurrent operations quota 5 ...").
const DefaultMaxNodePoolOperations = 5

// admitLocked applies GKE's concurrency rules to a new operation on cluster c (pool "" for a
// cluster-level one). GKE "generally allows one cluster-level operation, or one operation per node
// pool, at the same time" (GKE docs, Troubleshoot concurrent operations): a cluster-level
// operation waits for every other operation, a node pool operation for cluster-level ones and for
// its own pool's; both get 400 FAILED_PRECONDITION "Cluster is running incompatible operation OP"
// (the docs' first message; field reports show the same text for a pool deleted while its own
// creation runs). Node pool operations of different pools run concurrently up to
// Options.MaxNodePoolOperations; the next gets 429 RESOURCE_EXHAUSTED "Too many operations:
// cluster "NAME" hits the concurrent operations quota 5, please try again later."
// (terraform-provider-google #15205 and #15579 quote it).
func (e *Emulator) admitLocked(c *cluster, pool string) *apierr.Error {
	var blocking *operation
	poolOps := 0
	for _, o := range c.running {
		if o.Pool != "" {
			poolOps++
		}
		if pool == "" || o.Pool == "" || o.Pool == pool {
			if blocking == nil || o.PB.Name < blocking.PB.Name {
				blocking = o
			}
		}
	}
	if blocking != nil {
		return &apierr.Error{
			HTTPStatus: 400, Code: codes.FailedPrecondition,
			Message: fmt.Sprintf("Cluster is running incompatible operation %s.", blocking.PB.Name),
			Reason:  "CLUSTER_ALREADY_HAS_OPERATION",
		}
	}
	limit := e.opts.MaxNodePoolOperations
	if limit == 0 {
		limit = DefaultMaxNodePoolOperations
	}
	if pool != "" && limit > 0 && poolOps >= limit {
		return apierr.New(codes.ResourceExhausted,
			"Too many operations: cluster %q hits the concurrent operations quota %d, please try again later.", c.PB.Name, limit)
	}
	return nil
}

// startOperation runs op in the background: PENDING, RUNNING after a fifth of its latency,
// DONE when both the latency has passed and w.run has returned (w.run starting after the latency
// when w.runLast).
func (e *Emulator) startOperation(op *operation, w opWork) *containerpb.Operation {
	latency := e.ctl.latency(op.ClusterKey, op.PB.OperationType.String())
	ctx, cancel := context.WithCancel(e.bgCtx)
	op.cancel = cancel
	snapshot := cloneMsg(op.PB)
	e.goBackground(func(context.Context) {
		defer cancel()
		start := time.Now()
		if !sleepCtx(ctx, latency/5) && e.bgCtx.Err() != nil {
			return
		}
		e.mu.Lock()
		if op.PB.Status == containerpb.Operation_PENDING {
			op.PB.Status = containerpb.Operation_RUNNING
		}
		fail := op.fail
		e.mu.Unlock()

		var err *apierr.Error
		run := func() {
			if fail == nil && ctx.Err() == nil && w.run != nil {
				err = w.run(ctx)
			}
		}
		if !w.runLast {
			run()
		}
		sleepCtx(ctx, latency-time.Since(start))
		if w.runLast {
			run()
		}
		if e.bgCtx.Err() != nil {
			return // the emulator is closing: a stateful restart completes the operation
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		switch {
		case op.PB.Status == containerpb.Operation_ABORTING || ctx.Err() != nil:
			err = apierr.New(codes.Canceled, "Operation was cancelled.")
		case fail != nil:
			err = fail
		}
		e.finishOperationLocked(op, err)
		w.finish(err)
		e.persistLocked()
	})
	return snapshot
}

// finishOperationLocked marks op DONE, with err recorded as GKE does (Operation.error, a
// google.rpc.Status, and the deprecated statusMessage).
func (e *Emulator) finishOperationLocked(op *operation, err *apierr.Error) {
	op.PB.Status = containerpb.Operation_DONE
	op.PB.EndTime = nowRFC3339()
	if err != nil {
		st := &rpcstatus.Status{Code: int32(err.Code), Message: err.Message}
		if err.Reason != "" {
			if a, aerr := anypb.New(&errdetails.ErrorInfo{Reason: err.Reason, Domain: "container.googleapis.com"}); aerr == nil {
				st.Details = append(st.Details, a)
			}
		}
		op.PB.Error = st
		op.PB.StatusMessage = err.Message //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		if err.Reason != "" {
			cond := &containerpb.StatusCondition{
				Message:       err.Message,
				CanonicalCode: rpcCode(err.Code),
			}
			if v, ok := containerpb.StatusCondition_Code_value[err.Reason]; ok {
				cond.Code = containerpb.StatusCondition_Code(v) //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			}
			if op.PB.OperationType == containerpb.Operation_CREATE_NODE_POOL || op.PB.OperationType == containerpb.Operation_SET_NODE_POOL_SIZE {
				op.PB.NodepoolConditions = append(op.PB.NodepoolConditions, cond) //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			} else {
				op.PB.ClusterConditions = append(op.PB.ClusterConditions, cond) //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			}
		}
	}
	if c := e.st.clusters[op.ClusterKey]; c != nil {
		delete(c.running, op.Key)
	}
}

func rpcCode(c codes.Code) code.Code { return code.Code(c) }

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (e *Emulator) listOperations(n resourceName) *containerpb.ListOperationsResponse {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := &containerpb.ListOperationsResponse{}
	for _, k := range e.st.opOrder {
		op := e.st.ops[k]
		if op.Project == n.Project && (n.Location == "-" || op.Location == n.Location) {
			out.Operations = append(out.Operations, cloneMsg(op.PB))
		}
	}
	return out
}

func (e *Emulator) getOperation(n resourceName) (*containerpb.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	op := e.st.ops[n.opKey()]
	if op == nil {
		return nil, apierr.NotFound("Not found: %s.", n.opKey())
	}
	return cloneMsg(op.PB), nil
}

func (e *Emulator) cancelOperation(n resourceName) (*emptypb.Empty, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	op := e.st.ops[n.opKey()]
	if op == nil {
		return nil, apierr.NotFound("Not found: %s.", n.opKey())
	}
	if op.done() {
		return nil, apierr.New(codes.FailedPrecondition, "Operation %s is already done.", op.PB.Name)
	}
	op.PB.Status = containerpb.Operation_ABORTING
	if op.cancel != nil {
		op.cancel()
	}
	return &emptypb.Empty{}, nil
}
