package gke

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// counted is a read that counts its calls and returns the count.
type counted struct {
	mu sync.Mutex
	n  int
}

func (c *counted) read(context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n, nil
}

func (c *counted) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func mustGet(t *testing.T, s *sharedLists[int], key, scope string, read func(context.Context) (int, error)) int {
	t.Helper()
	v, err := s.get(context.Background(), key, scope, read)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// One read serves for the lifetime, counted from when it was sent, and not a moment longer.
func TestSharedListsServeOneReadForTheirLifetime(t *testing.T) {
	clock := newFakeClock()
	s := newSharedLists[int](clock.now, SharedReadTTL)
	var r counted
	for range 3 {
		if v := mustGet(t, s, "c", "c", r.read); v != 1 {
			t.Fatalf("got read %d, want the first", v)
		}
	}
	clock.advance(SharedReadTTL - time.Nanosecond)
	if v := mustGet(t, s, "c", "c", r.read); v != 1 {
		t.Errorf("just before the lifetime ends: read %d, want the first", v)
	}
	clock.advance(time.Nanosecond)
	if v := mustGet(t, s, "c", "c", r.read); v != 2 {
		t.Errorf("at the end of the lifetime: read %d, want a second", v)
	}
	if r.calls() != 2 {
		t.Errorf("%d reads, want 2", r.calls())
	}
}

// A write forgets the lists of its scope, and only those.
func TestSharedListsForgetTheScopeOfAWrite(t *testing.T) {
	s := newSharedLists[int](newFakeClock().now, SharedReadTTL)
	var a, b counted
	mustGet(t, s, "a/zone-1", "a", a.read)
	mustGet(t, s, "a/zone-2", "a", a.read)
	mustGet(t, s, "b/zone-1", "b", b.read)
	s.invalidate("a")
	if v := mustGet(t, s, "a/zone-1", "a", a.read); v != 3 {
		t.Errorf("after a write: read %d, want a new one (3)", v)
	}
	if v := mustGet(t, s, "b/zone-1", "b", b.read); v != 1 {
		t.Errorf("another scope after the write: read %d, want the first", v)
	}
}

// A write that comes while a list is being read: the readers already waiting get that list (they
// asked before the write), but it is not kept, so no reader after the write is handed it.
func TestSharedListsDropAListAWriteOvertook(t *testing.T) {
	s := newSharedLists[int](newFakeClock().now, SharedReadTTL)
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan int)
	go func() {
		v, _ := s.get(context.Background(), "c", "c", func(context.Context) (int, error) {
			close(started)
			<-release
			return 1, nil
		})
		first <- v
	}()
	<-started
	s.invalidate("c")
	close(release)
	if v := <-first; v != 1 {
		t.Fatalf("the reader got %d, want its own read", v)
	}
	var r counted
	r.n = 1
	if v := mustGet(t, s, "c", "c", r.read); v != 2 {
		t.Errorf("after the write: read %d, want a new one", v)
	}
}

// Readers that come while a list is being read wait for it rather than reading again.
func TestSharedListsJoinTheReadInFlight(t *testing.T) {
	s := newSharedLists[int](newFakeClock().now, SharedReadTTL)
	release := make(chan struct{})
	var r counted
	read := func(ctx context.Context) (int, error) {
		<-release
		return r.read(ctx)
	}
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() { got[i] = mustGet(t, s, "c", "c", read) })
	}
	for s.inFlight("c") == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if r.calls() != 1 {
		t.Errorf("%d reads for 8 readers at once, want 1", r.calls())
	}
}

// inFlight is how many lists under key are being read (0 or 1).
func (s *sharedLists[V]) inFlight(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lists[key]; ok {
		select {
		case <-l.done:
		default:
			return 1
		}
	}
	return 0
}

// A failed read is not kept: the next reader reads again.
func TestSharedListsForgetAFailedRead(t *testing.T) {
	s := newSharedLists[int](newFakeClock().now, SharedReadTTL)
	boom := errors.New("boom")
	if _, err := s.get(context.Background(), "c", "c", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the read's error", err)
	}
	var r counted
	if v := mustGet(t, s, "c", "c", r.read); v != 1 {
		t.Errorf("after a failed read: read %d, want a new one", v)
	}
}

// A list that came with another answer is kept only if no write came since that call was sent,
// and never in place of a newer one.
func TestSharedListsPutOnlyWhatNoWriteOvertook(t *testing.T) {
	clock := newFakeClock()
	s := newSharedLists[int](clock.now, SharedReadTTL)
	never := func(context.Context) (int, error) { t.Error("read, though a list was put"); return 0, nil }
	gen, sent := s.generation("c"), clock.now()
	s.put("c", "c", gen, sent, 7)
	if v := mustGet(t, s, "c", "c", never); v != 7 {
		t.Errorf("got %d, want the list put", v)
	}
	gen = s.generation("c")
	s.invalidate("c")
	s.put("c", "c", gen, clock.now(), 8)
	var r counted
	if v := mustGet(t, s, "c", "c", r.read); v != 1 {
		t.Errorf("got %d after a put a write overtook, want a read of its own", v)
	}
	s.put("c", "c", s.generation("c"), sent, 9) // sent before the list held
	if v := mustGet(t, s, "c", "c", never); v != 1 {
		t.Errorf("got %d, want the newer list kept", v)
	}
}

// A reader waiting on a read that its maker's context cut short reads again, once: the cut read is
// never handed out again, however soon the reader asks. In a synctest bubble time moves only once
// every goroutine waits, so the wait below ends only if the waiting reader is stuck.
func TestSharedListsRetryAReadCutByAnotherReader(t *testing.T) {
	synctest.Test(t, sharedListsRetryAReadCutByAnotherReader)
}

func sharedListsRetryAReadCutByAnotherReader(t *testing.T) {
	s := newSharedLists[int](time.Now, SharedReadTTL)
	var calls atomic.Int32
	started := make(chan struct{})
	read := func(ctx context.Context) (int, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return 7, nil
	}
	cut, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := s.get(cut, "c", "c", read)
		first <- err
	}()
	<-started
	second := make(chan error, 1)
	go func() {
		v, err := s.get(context.Background(), "c", "c", read)
		if err == nil && v != 7 {
			err = fmt.Errorf("got %d, want 7", v)
		}
		second <- err
	}()
	synctest.Wait() // the second reader waits on the first's read
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the cut reader got %v, want its own cancellation", err)
	}
	select {
	case err := <-second:
		if err != nil {
			t.Errorf("the waiting reader got %v, want the list", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting reader did not get the list")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d reads, want 2: the cut one and one more", n)
	}
	// The invariant behind it: the moment a read has failed, the next reader makes a new one.
	list, reader := s.claim("d", "d")
	if !reader {
		t.Fatal("the first claim of a key must make the read")
	}
	s.settle("d", list, 0, context.Canceled)
	if again, reader := s.claim("d", "d"); !reader || again == list {
		t.Error("a claim right after a failed read was handed that read instead of making a new one")
	}
}
