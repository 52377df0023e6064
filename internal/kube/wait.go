package kube

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// DefaultPollInterval is the poll interval of the waits when they are given none.
const DefaultPollInterval = 2 * time.Second

// waitFor calls check at once and then every interval (DefaultPollInterval when ≤ 0) until it
// reports done or returns an error that is not retryable (returned as is: it says what failed),
// or ctx ends. Then the error is describe(how long it waited) followed by what the last check ran
// into, if it failed, and wraps ctx's error.
func waitFor(ctx context.Context, interval time.Duration, check func(ctx context.Context) (bool, error), describe func(waited time.Duration) string) error {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var (
		lastErr   error // the last check's error, nil if it succeeded
		completed bool  // a check has completed, well or not
	)
	for {
		select {
		case <-ctx.Done():
			return waitError(ctx.Err(), describe(roundWait(time.Since(start))), lastErr)
		case <-timer.C:
		}
		done, err := check(ctx)
		switch {
		case err == nil && done:
			return nil
		case err == nil:
			lastErr, completed = nil, true
		case ctx.Err() != nil:
			// ctx cut the check short, which says little about the cluster, unless nothing else
			// was learnt: then at least it names what was being tried.
			if !completed {
				lastErr = err
			}
			return waitError(ctx.Err(), describe(roundWait(time.Since(start))), lastErr)
		case !retryable(err):
			return err
		default:
			lastErr, completed = err, true
		}
		timer.Reset(interval)
	}
}

func waitError(ctxErr error, msg string, lastErr error) error {
	if lastErr != nil {
		msg += "; the last check failed: " + strings.TrimPrefix(lastErr.Error(), "kube: ")
	}
	return fmt.Errorf("%s: %w", msg, ctxErr)
}
