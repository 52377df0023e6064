package gke

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PollSchedule spaces the reads of a running operation: quick at first, since short operations
// are common, then growing to Max so that long ones do not flood the API.
type PollSchedule struct {
	Initial time.Duration
	Max     time.Duration
	Factor  float64
}

// DefaultPollSchedule starts at one second and settles at ten.
var DefaultPollSchedule = PollSchedule{Initial: time.Second, Max: 10 * time.Second, Factor: 1.5}

// WithMax returns the schedule bounded by max (the provider's operation_poll_interval).
func (p PollSchedule) WithMax(bound time.Duration) PollSchedule {
	p.Max = bound
	if p.Initial > bound {
		p.Initial = bound
	}
	return p
}

func (p PollSchedule) next(prev time.Duration) time.Duration {
	next := time.Duration(float64(prev) * p.Factor)
	if next > p.Max {
		return p.Max
	}
	return next
}

// Backoff spaces retries of failed calls, with jitter so that parallel callers spread out.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultBackoff starts at one second and settles at thirty.
var DefaultBackoff = Backoff{Initial: time.Second, Max: 30 * time.Second}

func (b Backoff) next(prev time.Duration) time.Duration {
	next := prev*2 + time.Duration(rand.Int64N(int64(prev)/2+1))
	if next > b.Max {
		return b.Max
	}
	return next
}

// OperationError is an operation that finished with an error.
type OperationError struct {
	Operation string
	Type      containerpb.Operation_Type
	status    *status.Status
}

func (e *OperationError) Error() string {
	return fmt.Sprintf("operation %s (%s) failed: %s", e.Operation, e.Type, e.status.Message())
}

// GRPCStatus lets status.FromError, and so IsNotFound and friends, see the operation's code.
func (e *OperationError) GRPCStatus() *status.Status { return e.status }

// WaitForOperation polls op until it is DONE and returns its error, if any. Polls follow the
// client's schedule, aimed at the end of the operation when one of its type has finished before
// (see pollPlan). An operation whose wait is cut short by ctx keeps running in GKE.
func (c *Client) WaitForOperation(ctx context.Context, cluster ClusterID, op *containerpb.Operation) error {
	name := cluster.Operation(op.GetName())
	expected := c.durations.expected(op.GetOperationType())
	plan := c.poll.plan(expected)
	started := time.Now()
	polls := 0
	for op.GetStatus() != containerpb.Operation_DONE {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for operation %s (%s) after %s: %w; it keeps running in GKE",
				op.GetName(), op.GetOperationType(), time.Since(started).Round(time.Second), ctx.Err())
		case <-time.After(plan.next(time.Since(started))):
		}
		var err error
		op, err = call(ctx, c, "GetOperation", func(ctx context.Context) (*containerpb.Operation, error) {
			return c.api.GetOperation(ctx, &containerpb.GetOperationRequest{Name: name}, noRetry)
		})
		if err != nil {
			return fmt.Errorf("reading operation %s: %w", name, err)
		}
		polls++
	}
	c.durations.observe(op)
	tflog.Debug(ctx, "GKE operation done", map[string]any{
		"operation": op.GetName(), "type": op.GetOperationType().String(),
		"polls": polls, "elapsed": time.Since(started).String(), "expected": expected.String(),
	})
	if e := op.GetError(); e != nil && codes.Code(e.GetCode()) != codes.OK {
		return &OperationError{Operation: op.GetName(), Type: op.GetOperationType(), status: status.New(codes.Code(e.GetCode()), e.GetMessage())}
	}
	return nil
}
