package kube

import (
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A wait that never listed the hosts knows nothing of them: that is not the same as hosts that are
// not Ready, which a wait that listed them reports.
func TestCannotObserveTellsUnseenFromNotReady(t *testing.T) {
	never, _ := fakeAPIServer(t, func(int, *http.Request) (int, string) { return http.StatusServiceUnavailable, unavailable })
	_, err := never.WaitForSliceHosts(testContext(t, 300*time.Millisecond), "p", 2, 50*time.Millisecond)
	if err == nil || !CannotObserve(err) || !errors.Is(err, ErrNotObserved) {
		t.Errorf("a wait that never listed the nodes: %v, want an error CannotObserve holds for", err)
	}
	notReady := strings.Replace(nodeListJSON, `"status":"True"`, `"status":"False"`, 1)
	seen, _ := fakeAPIServer(t, func(int, *http.Request) (int, string) { return http.StatusOK, notReady })
	_, err = seen.WaitForSliceHosts(testContext(t, 300*time.Millisecond), "p", 2, 50*time.Millisecond)
	if err == nil || CannotObserve(err) || !strings.Contains(err.Error(), "1 of 2 hosts Ready") {
		t.Errorf("a wait that saw 1 of 2 hosts Ready: %v, want an error about the hosts that CannotObserve does not hold for", err)
	}
}

func TestReach(t *testing.T) {
	answer := http.StatusOK
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	if err := c.Reach(testContext(t, 5*time.Second), 50*time.Millisecond); err != nil {
		t.Fatalf("Reach of a serving API server: %v", err)
	}
	// A refused token ends it at once.
	answer = http.StatusUnauthorized
	start := time.Now()
	if err := c.Reach(testContext(t, 5*time.Second), 50*time.Millisecond); !CannotObserve(err) || !apierrors.IsUnauthorized(err) {
		t.Errorf("Reach with a refused token: %v, want 401 that CannotObserve holds for", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Reach with a refused token took %s; it must not retry", d)
	}
	// Nothing listening (a private endpoint from outside): retried until the context ends.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	gone := testClient(t, Cluster{Endpoint: closed, CACertificateBase64: ca, TokenSource: staticToken("tok")})
	if err := gone.Reach(testContext(t, 300*time.Millisecond), 50*time.Millisecond); !CannotObserve(err) {
		t.Errorf("Reach of an endpoint nobody listens on: %v, want an error CannotObserve holds for", err)
	}
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
