package provider

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// countingRead is a read of a cluster that counts its calls and answers with answer.
func countingRead(calls *atomic.Int32, answer func(ctx context.Context, call int32) (*containerpb.Cluster, error)) func(context.Context) (*containerpb.Cluster, error) {
	return func(ctx context.Context) (*containerpb.Cluster, error) {
		return answer(ctx, calls.Add(1))
	}
}

// In a synctest bubble time moves only once every goroutine waits: the read's sleep ends when the
// callers all wait on it, and no slow machine uses up the TTL.
func TestSharedReadsShareAndRetryFailures(t *testing.T) {
	t.Parallel()
	synctest.Test(t, sharedReadsShareAndRetryFailures)
}

func sharedReadsShareAndRetryFailures(t *testing.T) {
	ctx := context.Background()
	var reads sharedReads[*containerpb.Cluster]
	var calls atomic.Int32
	exists := false
	read := countingRead(&calls, func(context.Context, int32) (*containerpb.Cluster, error) {
		if !exists {
			return nil, status.Error(codes.NotFound, "Not found")
		}
		time.Sleep(20 * time.Millisecond) // ends once the callers below wait on this read
		return &containerpb.Cluster{Name: "c", Endpoint: "127.0.0.1:1"}, nil
	})

	// Not there yet: a failed read is not kept, each caller asks again.
	for range 2 {
		if _, err := reads.get(ctx, "c", read); status.Code(err) != codes.NotFound {
			t.Fatalf("reading a cluster that does not exist: %v, want NotFound", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d reads for two reads of a missing cluster, want 2", n)
	}

	// Eight slices planned together: one read.
	exists = true
	calls.Store(0)
	var wg sync.WaitGroup
	got := make([]*containerpb.Cluster, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := reads.get(ctx, "c", read)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d reads for eight concurrent callers, want 1", n)
	}
	// Each caller has its own copy.
	got[0].Endpoint = "changed"
	if got[1].GetEndpoint() != "127.0.0.1:1" {
		t.Errorf("a caller's copy changed with another's: endpoint %q", got[1].GetEndpoint())
	}
	// Later, within the TTL: no read; past it: a fresh one.
	if _, err := reads.get(ctx, "c", read); err != nil {
		t.Fatal(err)
	}
	reads.mu.Lock()
	reads.reads["c"].at = time.Now().Add(-readTTL)
	reads.mu.Unlock()
	if _, err := reads.get(ctx, "c", read); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d reads after one within the TTL and one past it, want 2", n)
	}
}

// A caller waiting on a read that its maker's context cut short reads again, once: the cut read is
// never handed out again, however soon the caller asks.
func TestSharedReadsRetryAReadCutByAnotherCaller(t *testing.T) {
	t.Parallel()
	synctest.Test(t, sharedReadsRetryAReadCutByAnotherCaller)
}

func sharedReadsRetryAReadCutByAnotherCaller(t *testing.T) {
	var reads sharedReads[*containerpb.Cluster]
	var calls atomic.Int32
	started := make(chan struct{})
	read := countingRead(&calls, func(ctx context.Context, call int32) (*containerpb.Cluster, error) {
		if call == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &containerpb.Cluster{Name: "c"}, nil
	})
	cut, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := reads.get(cut, "c", read)
		first <- err
	}()
	<-started
	second := make(chan error, 1)
	go func() {
		c, err := reads.get(context.Background(), "c", read)
		if err == nil && c.GetName() != "c" {
			err = errors.New("wrong cluster")
		}
		second <- err
	}()
	synctest.Wait() // the second caller waits on the first's read
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the cut caller got %v, want its own cancellation", err)
	}
	select {
	case err := <-second:
		if err != nil {
			t.Errorf("the waiting caller got %v, want the cluster", err)
		}
	case <-time.After(5 * time.Second): // the bubble's time: only once every goroutine is stuck
		t.Fatal("the waiting caller did not get the cluster")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d reads, want 2: the cut one and one more", n)
	}
	// The invariant behind it: the moment a read has failed, the next caller makes a new one.
	shared, reader := reads.claim("d")
	if !reader {
		t.Fatal("the first claim of a key must make the read")
	}
	reads.settle("d", shared, nil, context.Canceled)
	if again, reader := reads.claim("d"); !reader || again == shared {
		t.Error("a claim right after a failed read was handed that read instead of making a new one")
	}
}
