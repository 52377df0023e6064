package gke

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"golang.org/x/oauth2"
)

// These tests need no emulator: each failure is made by a server of the test's own, or by no
// server at all.

// quickBackoff retries at once, so that a test sees how many attempts were made, not how long
// they took.
var quickBackoff = Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 3}

func clientAt(t *testing.T, endpoint string, ts oauth2.TokenSource, retry Backoff) *Client {
	t.Helper()
	c, err := New(context.Background(), Config{Endpoint: endpoint, TokenSource: ts, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var anyToken = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "token"})

// countingTokens hands out its token after failing with fail (nil: never) the first failures
// calls.
type countingTokens struct {
	calls    atomic.Int32
	failures int32
	fail     func() error
}

func (c *countingTokens) Token() (*oauth2.Token, error) {
	if n := c.calls.Add(1); c.fail != nil && n <= c.failures {
		return nil, c.fail()
	}
	return &oauth2.Token{AccessToken: "token"}, nil
}

func tokenRefused(status int, code, description string) func() error {
	return func() error {
		return &oauth2.RetrieveError{Response: &http.Response{StatusCode: status}, ErrorCode: code, ErrorDescription: description}
	}
}

// clusterServer answers every request with a cluster, counting the requests.
func clusterServer(t *testing.T, tls bool) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name": "shared", "status": "RUNNING"}`)
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
		srv.StartTLS()
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestAccessErrorsFailAtOnceSayingWhatToFix(t *testing.T) {
	// A server whose certificate this process does not trust: the handshake fails, every time.
	untrusted, _ := clusterServer(t, true)
	var handshakes atomic.Int32
	untrusted.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			handshakes.Add(1)
		}
	}
	refused := &countingTokens{failures: 100, fail: tokenRefused(400, "invalid_grant", "Token has been expired or revoked.")}
	plain, _ := clusterServer(t, false)
	for _, tc := range []struct {
		name     string
		endpoint string
		tokens   oauth2.TokenSource
		cause    string
		says     []string
		attempts func() int32
	}{
		{"misspelt host", "https://typo.invalid", anyToken, "dns", []string{`"typo.invalid" does not exist`, "container_endpoint"}, nil},
		{"untrusted certificate", untrusted.URL, anyToken, "tls", []string{"certificate", "SSL_CERT_FILE"}, handshakes.Load},
		{"revoked credentials", plain.URL, refused, "credentials", []string{"invalid_grant: Token has been expired or revoked.", "gcloud auth application-default login"}, refused.calls.Load},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A retry is logged at INFO as it is waited for.
			var logs bytes.Buffer
			ctx := tflogtest.RootLogger(testCtx(t), &logs)
			c := clientAt(t, tc.endpoint, tc.tokens, Backoff{Initial: time.Second, Max: time.Second, Attempts: 6})
			_, err := c.GetCluster(ctx, testCluster)
			var aerr *AccessError
			if !errors.As(err, &aerr) || aerr.Cause != tc.cause {
				t.Fatalf("GetCluster = %v, want an AccessError of cause %s", err, tc.cause)
			}
			for _, want := range tc.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if !IsAccessError(fmt.Errorf("reading: %w", err)) {
				t.Error("IsAccessError does not see through wrapping")
			}
			if strings.Contains(logs.String(), `"@level":"info"`) {
				t.Errorf("the failure was retried:\n%s", logs.String())
			}
			if tc.attempts != nil {
				if n := tc.attempts(); n != 1 {
					t.Errorf("%d attempts, want 1", n)
				}
			}
		})
	}
}

func TestTransientFailuresAreRetriedUpToTheCap(t *testing.T) {
	// A server that takes each connection and drops it: a network failure, every time.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(testCtx(t), &logs)
	c := clientAt(t, "http://"+l.Addr().String(), anyToken, quickBackoff)
	_, err = c.GetCluster(ctx, testCluster)
	if err == nil || !strings.Contains(err.Error(), "gave up retrying GetCluster after 3 attempts") {
		t.Fatalf("GetCluster = %v, want it to give up after 3 attempts", err)
	}
	if IsAccessError(err) {
		t.Errorf("a dropped connection is not an access error: %v", err)
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
	// Each retry that waits says so at INFO, with the cause.
	if n := strings.Count(logs.String(), `"@level":"info","@message":"GKE API call failed transiently; retrying"`); n != 2 {
		t.Errorf("%d INFO lines for 2 retries:\n%s", n, logs.String())
	}
}

func TestTokenEndpointTroubleIsRetried(t *testing.T) {
	srv, requests := clusterServer(t, false)
	tokens := &countingTokens{failures: 2, fail: tokenRefused(503, "", "")}
	c := clientAt(t, srv.URL, tokens, quickBackoff)
	if _, err := c.GetCluster(testCtx(t), testCluster); err != nil {
		t.Fatalf("GetCluster after two 503s of the token endpoint: %v", err)
	}
	if n := tokens.calls.Load(); n != 3 {
		t.Errorf("%d token requests, want 3", n)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d GKE requests, want 1", n)
	}
}

func TestRetryDoesNotWaitPastTheDeadline(t *testing.T) {
	// The retry would come after the deadline however long the first attempt takes: an hour is
	// more than the attempt, less than the backoff.
	c := clientAt(t, "http://127.0.0.1:1", anyToken, Backoff{Initial: 2 * time.Hour, Max: 2 * time.Hour, Attempts: 6})
	ctx, cancel := context.WithTimeout(testCtx(t), time.Hour)
	defer cancel()
	_, err := c.GetCluster(ctx, testCluster)
	if err == nil || !strings.Contains(err.Error(), "the next one would come after its deadline") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetCluster = %v, want it to stop before its deadline", err)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %q does not name the cause", err)
	}
	if ctx.Err() != nil {
		t.Errorf("it waited for a retry it could not make, until its context ended")
	}
}
