package testwait

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestMarginIsATenthOfWhatIsLeftAtMostTwoMinutes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ left, want time.Duration }{
		{30 * time.Minute, 28 * time.Minute},
		{10 * time.Minute, 9 * time.Minute},
		{10 * time.Second, 9 * time.Second},
		{-time.Second, -time.Second},
	} {
		if got := withMargin(now.Add(tc.left), now).Sub(now); got != tc.want {
			t.Errorf("%s left: waits end %s from now, want %s", tc.left, got, tc.want)
		}
	}
}

// fakeTB is a test whose deadline is set and whose failure is recorded instead of ending it.
type fakeTB struct {
	testing.TB
	deadline time.Time
	bounded  bool
	failed   string
	cleanups []func()
}

func (f *fakeTB) Deadline() (time.Time, bool) { return f.deadline, f.bounded }
func (f *fakeTB) Helper()                     {}
func (f *fakeTB) Cleanup(fn func())           { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestForEndsAtTheTestsDeadlineSayingWhat(t *testing.T) {
	f := &fakeTB{TB: t, deadline: time.Now().Add(time.Second), bounded: true}
	asked := 0
	For(f, "the pool to run", func() bool { asked++; return false })
	if !strings.HasPrefix(f.failed, "gave up waiting for the pool to run after ") {
		t.Fatalf("want the test failed naming what it waited for, got %q", f.failed)
	}
	if asked < 2 {
		t.Errorf("asked %d times before giving up, want it polled", asked)
	}
}

func TestForReturnsOnceItHolds(t *testing.T) {
	f := &fakeTB{TB: t, deadline: time.Now().Add(time.Hour), bounded: true}
	asked := 0
	For(f, "the third answer", func() bool { asked++; return asked == 3 })
	if f.failed != "" || asked != 3 {
		t.Fatalf("want three asks and no failure, got %d and %q", asked, f.failed)
	}
}

func TestContextEndsAtTheDeadlineOrAfterTheTest(t *testing.T) {
	f := &fakeTB{TB: t, deadline: time.Now().Add(time.Hour), bounded: true}
	ctx := Context(f)
	d, ok := ctx.Deadline()
	if !ok || time.Until(d) < 50*time.Minute || time.Until(d) > time.Hour {
		t.Fatalf("want the context to end a margin before the test's deadline an hour away, got %v %v", d, ok)
	}
	if ctx.Err() != nil {
		t.Fatal("the context ended before the test did")
	}
	for _, fn := range f.cleanups {
		fn()
	}
	if ctx.Err() == nil {
		t.Fatal("the context outlived the test")
	}

	unbounded := Context(&fakeTB{TB: t})
	if _, ok := unbounded.Deadline(); ok {
		t.Fatal("a test without a deadline got a context with one")
	}
}
