// Package testwait bounds the waits of tests by the test's own deadline, the one `go test
// -timeout` sets, never by a constant that a fast machine meets and a busy one misses. A wait
// gives up a margin before that deadline, so that the test still fails with what it waited for
// (and cleans up) instead of the test binary panicking with every goroutine's stack.
//
// Waits are meant to be event-driven where the thing waited for can tell: a watch, an
// operation's wait. For the rest, For polls. Both end only at the test's deadline, so a machine
// twice as slow passes the same tests, only later.
package testwait

import (
	"context"
	"flag"
	"testing"
	"time"
)

// Poll is how often For asks again.
const Poll = 100 * time.Millisecond

// maxMargin is the most of a test's remaining time that its waits leave to it: enough to log
// what it waited for and to destroy what it made (an acceptance test's destroy runs several CLI
// commands), little against the package's -timeout.
const maxMargin = 2 * time.Minute

// Deadline is when a test's waits give up: a margin before the test binary's deadline, a tenth of
// the time left at most maxMargin. It is false when the tests run without a deadline (`go test
// -timeout 0`).
func Deadline(t testing.TB) (time.Time, bool) {
	d, ok := deadlineOf(t)
	if !ok {
		return time.Time{}, false
	}
	return withMargin(d, time.Now()), true
}

// deadlineOf is the test binary's deadline: t.Deadline() for a *testing.T, -test.timeout from the
// start otherwise (a benchmark or fuzz target has no Deadline method).
func deadlineOf(t testing.TB) (time.Time, bool) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return dt.Deadline()
	}
	return binaryDeadline()
}

func withMargin(deadline, now time.Time) time.Time {
	margin := min(deadline.Sub(now)/10, maxMargin)
	if margin < 0 {
		margin = 0
	}
	return deadline.Add(-margin)
}

// Context is a context done at Deadline(t) or once the test and its cleanups registered after
// this call are over, so that a cleanup may use it too.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := Deadline(t); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d)
	}
	t.Cleanup(cancel)
	return ctx
}

// For asks ok every Poll until it holds. Should the test's deadline come first, it fails the test,
// saying what it waited for and for how long; ok's last say is then in the test's log if ok logs.
func For(t testing.TB, what string, ok func() bool) {
	t.Helper()
	start := time.Now()
	deadline, bounded := Deadline(t)
	for !ok() {
		if bounded && time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %s, at the test's deadline", what, time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(Poll)
	}
}

// MainContext is Context for TestMain, which has no *testing.T: done a margin before the test
// binary's -test.timeout from now. TestMain must have parsed the flags (flag.Parse) first.
func MainContext() (context.Context, context.CancelFunc) {
	d, ok := binaryDeadline()
	if !ok {
		return context.WithCancel(context.Background())
	}
	return context.WithDeadline(context.Background(), withMargin(d, time.Now()))
}

// start is when the test binary started, near enough: -test.timeout counts from it.
var start = time.Now()

func binaryDeadline() (time.Time, bool) {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return time.Time{}, false
	}
	getter, ok := f.Value.(flag.Getter)
	if !ok {
		return time.Time{}, false
	}
	timeout, ok := getter.Get().(time.Duration)
	if !ok || timeout <= 0 {
		return time.Time{}, false
	}
	return start.Add(timeout), true
}
