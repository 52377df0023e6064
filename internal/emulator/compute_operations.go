package emulator

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	compute "google.golang.org/api/compute/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// computeOperation is a Compute Engine operation (zonal or regional).
type computeOperation struct {
	Key  string
	PB   *compute.Operation
	fail *apierr.Error
	done chan struct{} // closed when the operation is DONE
}

// newComputeOperationLocked registers an operation on the resource at targetLink, PENDING.
func (e *Emulator) newComputeOperationLocked(rt computeRoute, opType, targetLink string, targetID uint64, fail *apierr.Error) *computeOperation {
	now := time.Now()
	// Compute Engine names operations operation-<ms>-<13 hex>-<8 hex>-<8 hex>.
	name := fmt.Sprintf("operation-%d-%s-%s-%s", now.UnixMilli(), rules.RandomHex(7)[:13], rules.RandomHex(4), rules.RandomHex(4))
	key := rt.parent() + "/operations/" + name
	pb := &compute.Operation{
		Kind:          "compute#operation",
		Id:            randomID(),
		Name:          name,
		OperationType: opType,
		TargetLink:    targetLink,
		TargetId:      targetID,
		Status:        "PENDING",
		InsertTime:    computeTime(now),
		StartTime:     computeTime(now),
		SelfLink:      e.computeURL(key),
	}
	where := e.computeURL("projects/" + rt.project + "/" + rt.scope + "/" + rt.where)
	if rt.scope == "zones" {
		pb.Zone = where
	} else {
		pb.Region = where
	}
	op := &computeOperation{Key: key, PB: pb, fail: fail, done: make(chan struct{})}
	e.st.computeOps[key] = op
	e.st.computeOrder = append(e.st.computeOrder, key)
	return op
}

// runComputeOperation runs op in the background as Compute Engine reports it: PENDING, RUNNING
// after a fifth of the default latency, DONE (progress 100, endTime) after it, with error.errors[]
// when it failed; finish applies the outcome under e.mu.
func (e *Emulator) runComputeOperation(op *computeOperation, finish func(err *apierr.Error)) *compute.Operation {
	latency := e.ctl.latency("", "default")
	snapshot := *op.PB
	e.goBackground(func(ctx context.Context) {
		start := time.Now()
		if !sleepCtx(ctx, latency/5) {
			return
		}
		e.mu.Lock()
		op.PB.Status = "RUNNING"
		op.PB.Progress = 0
		e.mu.Unlock()
		if !sleepCtx(ctx, latency-time.Since(start)) {
			return // the emulator is closing: a stateful restart completes the operation
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.finishComputeOperationLocked(op, op.fail)
		finish(op.fail)
		e.persistLocked()
	})
	return &snapshot
}

func (e *Emulator) finishComputeOperationLocked(op *computeOperation, err *apierr.Error) {
	op.PB.Status = "DONE"
	op.PB.Progress = 100
	op.PB.EndTime = computeTime(time.Now())
	if err != nil {
		code := err.Reason
		if code == "" {
			code = apierr.StatusName(err.Code)
		}
		op.PB.Error = &compute.OperationError{Errors: []*compute.OperationErrorErrors{{Code: code, Message: err.Message}}}
		op.PB.HttpErrorStatusCode = int64(err.HTTPStatus)
		op.PB.HttpErrorMessage = strings.ToUpper(http.StatusText(err.HTTPStatus))
	}
	select {
	case <-op.done:
	default:
		close(op.done)
	}
}

func (e *Emulator) lookupComputeOperationLocked(rt computeRoute) (*computeOperation, *apierr.Error) {
	key := rt.parent() + "/operations/" + rt.name
	op := e.st.computeOps[key]
	if op == nil {
		return nil, errComputeNotFound(key)
	}
	return op, nil
}

func (e *Emulator) getComputeOperation(rt computeRoute) (*compute.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	op, err := e.lookupComputeOperationLocked(rt)
	if err != nil {
		return nil, err
	}
	out := *op.PB
	return &out, nil
}

// computeWaitLimit is how long operations.wait waits: Compute Engine returns "when the operation
// is DONE or when the request is approaching the 2 minute deadline" (compute v1 zoneOperations.wait
// and regionOperations.wait).
const computeWaitLimit = 2 * time.Minute

func (e *Emulator) waitComputeOperation(ctx context.Context, rt computeRoute) (*compute.Operation, *apierr.Error) {
	e.mu.Lock()
	op, err := e.lookupComputeOperationLocked(rt)
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(computeWaitLimit - 5*time.Second)
	defer t.Stop()
	select {
	case <-op.done:
	case <-t.C:
	case <-ctx.Done():
	case <-e.bgCtx.Done():
	}
	return e.getComputeOperation(rt)
}
