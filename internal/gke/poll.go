package gke

import (
	"sync"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// opDurations remembers how long the last successful operation of each type took, as GKE
// reports it (endTime - startTime, so the waiter's own polling does not skew it). Operations of
// one type in one run tend to take alike: the slices of an apply create their node pools, a
// destroy deletes them, beside each other or in waves of MaxNodePoolOperations.
type opDurations struct {
	mu   sync.Mutex
	last map[containerpb.Operation_Type]time.Duration
}

// expected returns the duration of the last successful operation of type t, or 0.
func (d *opDurations) expected(t containerpb.Operation_Type) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last[t]
}

// observe records the duration of a successful DONE operation that reports both its times.
func (d *opDurations) observe(op *containerpb.Operation) {
	if op.GetStatus() != containerpb.Operation_DONE || op.GetError().GetCode() != 0 {
		return
	}
	start, err1 := time.Parse(time.RFC3339Nano, op.GetStartTime())
	end, err2 := time.Parse(time.RFC3339Nano, op.GetEndTime())
	if err1 != nil || err2 != nil || !end.After(start) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[containerpb.Operation_Type]time.Duration{}
	}
	d.last[op.GetOperationType()] = end.Sub(start)
}

// pollPlan spaces the polls of one operation. Without an expected duration it follows the
// schedule. With one, it aims a poll at just after the expected end, target = expected +
// min(expected/50, Initial/4), placing the polls before it at most Max apart and the first one at
// the remainder, so that one lands on the target: as many polls as a fixed poll every Max, but
// seeing the end at once. An operation still running at the target is polled on the schedule
// counted from the target, as if its wait began there. The margin is small because missing costs
// little (one more poll, Initial later) while the margin is paid by every operation that ends on
// time.
type pollPlan struct {
	schedule PollSchedule
	target   time.Duration // from the start of the wait; 0 for none
}

func (p PollSchedule) plan(expected time.Duration) *pollPlan {
	pp := &pollPlan{schedule: p}
	if expected > 0 {
		pp.target = expected + min(expected/50, p.Initial/4)
	}
	return pp
}

// next returns how long to wait before the next poll, elapsed having passed since the wait began.
func (pp *pollPlan) next(elapsed time.Duration) time.Duration {
	until := pp.target - elapsed
	switch {
	case until <= 0:
		return pp.schedule.gap(elapsed - pp.target)
	case pp.schedule.Max <= 0:
		return until
	case until%pp.schedule.Max == 0:
		return pp.schedule.Max
	default:
		// The remainder first, then Max at a time: the last poll lands on the target.
		return until % pp.schedule.Max
	}
}
