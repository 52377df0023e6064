package gke

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PollSchedule spaces the reads of a running operation in proportion to how long it has run: the
// gap before the next read is Fraction of the time waited so far, at least Initial and at most Max.
// An operation is then seen DONE at most Fraction of its duration (or Initial) after it ends,
// whether it takes seconds or minutes, and a long one settles at one read every Max.
type PollSchedule struct {
	Initial  time.Duration
	Max      time.Duration
	Fraction float64
}

// DefaultPollSchedule reads four times a second at first, then every fifth of the time waited,
// and settles at every ten seconds after 50 s.
var DefaultPollSchedule = PollSchedule{Initial: 250 * time.Millisecond, Max: 10 * time.Second, Fraction: 0.2}

// WithMax returns the schedule bounded by max (the provider's operation_poll_interval).
func (p PollSchedule) WithMax(bound time.Duration) PollSchedule {
	p.Max = bound
	if p.Initial > bound {
		p.Initial = bound
	}
	return p
}

// gap is how long to wait before the next read, waited having passed.
func (p PollSchedule) gap(waited time.Duration) time.Duration {
	return min(max(time.Duration(float64(waited)*p.Fraction), p.Initial), p.Max)
}

// OperationError is an operation that finished with an error.
type OperationError struct {
	Operation string
	Type      containerpb.Operation_Type
	status    *status.Status
	// conditions are the codes of the operation's status conditions, such as GCE_STOCKOUT.
	conditions []containerpb.StatusCondition_Code
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
	plan := c.poll.plan(c.durations.expected(op.GetOperationType()))
	_, err := c.pollOperation(ctx, cluster, op, plan.next, nil)
	return err
}

// WaitForNodePoolCreation waits for op, the creation of node pool id, and returns the pool once
// GKE reports it created. hostsUp is closed when the caller has seen the pool's hosts register as
// Ready Kubernetes nodes: GKE ends the creation once its nodes have registered, so from then on
// the pool itself is read, at once and then on the schedule counted from that moment, until it is
// RUNNING; the read that finds it so is the one the caller needs anyway, and the operation need
// not be read at all. Until then the operation is read every Max (operation_poll_interval) only,
// which sees a creation that fails without bringing up nodes as soon as a fixed poll would.
// Without hostsUp (nil: nobody watches the hosts) the operation is polled as by WaitForOperation.
// A nil op is a creation already over (found after its response was lost): the pool is read.
// An operation whose wait is cut short by ctx keeps running in GKE.
func (c *Client) WaitForNodePoolCreation(ctx context.Context, id NodePoolID, op *containerpb.Operation, hostsUp <-chan struct{}) (*containerpb.NodePool, error) {
	// The pool is read itself, never from a shared list: its creation has just changed it.
	if op == nil {
		return c.getNodePool(ctx, id)
	}
	if hostsUp == nil {
		if err := c.WaitForOperation(ctx, id.Cluster, op); err != nil {
			return nil, err
		}
		return c.getNodePool(ctx, id)
	}
	started := time.Now()
	everyMax := func(time.Duration) time.Duration { return c.poll.Max }
	up, err := c.pollOperation(ctx, id.Cluster, op, everyMax, hostsUp)
	switch {
	case up:
		return c.readUntilCreated(ctx, id, op, started)
	case err != nil:
		return nil, err
	}
	return c.getNodePool(ctx, id)
}

// pollOperation polls op, next(elapsed) apart, until it is DONE, and returns its error, if any;
// or, as soon as interrupt is closed, returns interrupted without reading it further. A nil
// interrupt is never closed.
func (c *Client) pollOperation(ctx context.Context, cluster ClusterID, op *containerpb.Operation,
	next func(elapsed time.Duration) time.Duration, interrupt <-chan struct{}) (interrupted bool, err error) {
	name := cluster.Operation(op.GetName())
	expected := c.durations.expected(op.GetOperationType())
	started := time.Now()
	polls := 0
	for op.GetStatus() != containerpb.Operation_DONE {
		select {
		case <-ctx.Done():
			return false, waitCut(ctx, op, started)
		case <-interrupt:
			return true, nil
		case <-time.After(next(time.Since(started))):
		}
		if op, err = c.getOperation(ctx, name); err != nil {
			return false, err
		}
		polls++
	}
	// What the operation changed may be in a read other reads share, made while it ran.
	if nodePoolOperation(op.GetOperationType()) {
		c.forgetPools(cluster)
	} else {
		c.forgetCluster(cluster)
	}
	c.durations.observe(op)
	tflog.Debug(ctx, "GKE operation done", map[string]any{
		"operation": op.GetName(), "type": op.GetOperationType().String(),
		"polls": polls, "elapsed": time.Since(started).String(), "expected": expected.String(),
	})
	return false, operationError(op)
}

// nodePoolOperation is whether operations of type typ change node pools alone, leaving the
// cluster's shared read (see reads.go). Any other type, one unknown included, forgets it.
func nodePoolOperation(typ containerpb.Operation_Type) bool {
	switch typ {
	case containerpb.Operation_CREATE_NODE_POOL, containerpb.Operation_DELETE_NODE_POOL, containerpb.Operation_SET_NODE_POOL_MANAGEMENT,
		containerpb.Operation_SET_NODE_POOL_SIZE, containerpb.Operation_UPGRADE_NODES:
		return true
	}
	return false
}

// readUntilCreated reads pool id, whose hosts are up, until it is created: RUNNING, or
// RUNNING_WITH_ERROR (created, a host down since). A pool in ERROR sends the wait to op for why.
func (c *Client) readUntilCreated(ctx context.Context, id NodePoolID, op *containerpb.Operation, started time.Time) (*containerpb.NodePool, error) {
	hostsAt := time.Now()
	for reads := 1; ; reads++ {
		pool, err := c.getNodePool(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("reading node pool %s: %w", id, err)
		}
		switch pool.GetStatus() {
		case containerpb.NodePool_RUNNING, containerpb.NodePool_RUNNING_WITH_ERROR:
			// Created without its operation being seen DONE: what other reads share of the
			// cluster may predate it.
			c.forgetPools(id.Cluster)
			tflog.Debug(ctx, "GKE node pool created", map[string]any{
				"operation": op.GetName(), "reads_after_hosts_up": reads, "elapsed": time.Since(started).String(),
			})
			return pool, nil
		case containerpb.NodePool_ERROR:
			if err := c.WaitForOperation(ctx, id.Cluster, op); err != nil {
				return nil, err
			}
			return pool, nil
		}
		select {
		case <-ctx.Done():
			return nil, waitCut(ctx, op, started)
		case <-time.After(c.poll.gap(time.Since(hostsAt))):
		}
	}
}

func (c *Client) getOperation(ctx context.Context, name string) (*containerpb.Operation, error) {
	op, err := call(ctx, c, "GetOperation", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.GetOperation(ctx, &containerpb.GetOperationRequest{Name: name}, noRetry)
	})
	if err != nil {
		return nil, fmt.Errorf("reading operation %s: %w", name, err)
	}
	return op, nil
}

// waitCut is the error of a wait that ctx ended before op did.
func waitCut(ctx context.Context, op *containerpb.Operation, started time.Time) error {
	return fmt.Errorf("waiting for operation %s (%s) after %s: %w; it keeps running in GKE",
		op.GetName(), op.GetOperationType(), time.Since(started).Round(time.Second), ctx.Err())
}

// operationError is the error a DONE operation ended with, as an *OperationError, or nil.
func operationError(op *containerpb.Operation) error {
	e := op.GetError()
	if e == nil || codes.Code(e.GetCode()) == codes.OK {
		return nil
	}
	err := &OperationError{Operation: op.GetName(), Type: op.GetOperationType(), status: status.FromProto(e)}
	//nolint:staticcheck // deprecated in the API for error, but still where GKE names GCE_STOCKOUT
	for _, c := range append(op.GetNodepoolConditions(), op.GetClusterConditions()...) {
		err.conditions = append(err.conditions, c.GetCode()) //nolint:staticcheck // as above
	}
	return err
}
