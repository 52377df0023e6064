package kube

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// A wait that never listed the hosts knows nothing of them: that is not the same as hosts that are
// not Ready, which a wait that listed them reports.
func TestCannotObserveTellsUnseenFromNotReady(t *testing.T) {
	never, _ := fakeAPIServer(t, func(int, *http.Request) (int, string) { return http.StatusServiceUnavailable, unavailable })
	// Safe on a busy machine: nothing but 503 ever answers, whenever the deadline comes.
	_, err := never.WaitForSliceHosts(shortContext(t, 300*time.Millisecond), "p", 2, 50*time.Millisecond)
	if err == nil || !CannotObserve(err) || !errors.Is(err, ErrNotObserved) {
		t.Errorf("a wait that never listed the nodes: %v, want an error CannotObserve holds for", err)
	}
	notReady := strings.Replace(nodeListJSON, `"status":"True"`, `"status":"False"`, 1)
	// The deadline comes with the wait's second request: it has listed the nodes.
	listed := newExpiringContext(testwait.Context(t))
	seen, _ := fakeAPIServer(t, func(n int, _ *http.Request) (int, string) {
		if n == 2 {
			listed.expire()
		}
		return http.StatusOK, notReady
	})
	_, err = seen.WaitForSliceHosts(listed, "p", 2, 50*time.Millisecond)
	if err == nil || CannotObserve(err) || !strings.Contains(err.Error(), "1 of 2 hosts Ready") {
		t.Errorf("a wait that saw 1 of 2 hosts Ready: %v, want an error about the hosts that CannotObserve does not hold for", err)
	}
}

func TestReach(t *testing.T) {
	answer := http.StatusOK
	var asked atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/version" {
			t.Errorf("Reach asked for %s, want /version", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(answer)
		if answer == http.StatusOK {
			_, _ = w.Write([]byte(`{"major":"1","minor":"34"}`))
		} else {
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
		}
	}))
	t.Cleanup(srv.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	c := testClient(t, Cluster{Endpoint: srv.URL, CACertificateBase64: ca, TokenSource: staticToken("tok")})
	if err := c.Reach(testwait.Context(t), 50*time.Millisecond); err != nil {
		t.Fatalf("Reach of a serving API server: %v", err)
	}
	// A refused token ends it at once.
	answer = http.StatusUnauthorized
	asked.Store(0)
	if err := c.Reach(testwait.Context(t), 50*time.Millisecond); !CannotObserve(err) || !apierrors.IsUnauthorized(err) {
		t.Errorf("Reach with a refused token: %v, want 401 that CannotObserve holds for", err)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("Reach with a refused token asked %d times; it must not retry", n)
	}
	// Nothing listening (a private endpoint from outside): retried until the context ends.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	gone := testClient(t, Cluster{Endpoint: closed, CACertificateBase64: ca, TokenSource: staticToken("tok")})
	// Safe on a busy machine: nothing ever answers, whenever the deadline comes.
	if err := gone.Reach(shortContext(t, 300*time.Millisecond), 50*time.Millisecond); !CannotObserve(err) {
		t.Errorf("Reach of an endpoint nobody listens on: %v, want an error CannotObserve holds for", err)
	}
}

// shortContext is a context that ends after d, for a wait that is to time out.
func shortContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestCannotObserveIsNotEveryError(t *testing.T) {
	if CannotObserve(nil) {
		t.Error("CannotObserve(nil)")
	}
	if CannotObserve(apierrors.NewInternalError(errors.New("etcd"))) {
		t.Error("a 500 from the API server says it was reached")
	}
	if !CannotObserve(apierrors.NewForbidden(schemaGroupResource(), "x", errors.New("no"))) {
		t.Error("403 means the nodes cannot be seen with these credentials")
	}
}

func schemaGroupResource() schema.GroupResource { return schema.GroupResource{Resource: "nodes"} }
