package kube

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

const nodeListJSON = `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[
 {"metadata":{"name":"gke-c-p-h-0001","labels":{"cloud.google.com/gke-nodepool":"p"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
 {"metadata":{"name":"gke-c-p-h-0000","labels":{"cloud.google.com/gke-nodepool":"p"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]}`

// fakeAPIServer serves GET /api/v1/nodes (lists and watches) with answer (status code and body)
// for the n-th request (1-based), after checking the bearer token.
func fakeAPIServer(t *testing.T, answer func(n int, r *http.Request) (int, string)) (*Client, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("request %d: Authorization %q, want the token source's bearer token", n, r.Header.Get("Authorization"))
		}
		if r.URL.Path != "/api/v1/nodes" || r.URL.Query().Get("labelSelector") != "cloud.google.com/gke-nodepool=p" {
			t.Errorf("request %d: %s %s, want the nodes of pool p", n, r.Method, r.URL)
		}
		code, body := answer(n, r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	return testClientOf(t, srv), &calls
}

// testClientOf is a client of a test's API server, with token "tok"; the server is closed when the
// test ends.
func testClientOf(t *testing.T, srv *httptest.Server) *Client {
	t.Helper()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return testClient(t, Cluster{Endpoint: srv.URL, CACertificateBase64: base64.StdEncoding.EncodeToString(ca), TokenSource: staticToken("tok")})
}

const unavailable = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is restarting","reason":"ServiceUnavailable","code":503}`

// Passing failures (a 503 here) are retried until the hosts are there.
func TestWaitRetriesServerErrors(t *testing.T) {
	c, calls := fakeAPIServer(t, func(n int, _ *http.Request) (int, string) {
		if n <= 2 {
			return http.StatusServiceUnavailable, unavailable
		}
		return http.StatusOK, nodeListJSON
	})
	hosts, err := c.WaitForSliceHosts(testwait.Context(t), "p", 2, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(hosts); len(got) != 2 || got[0] != "gke-c-p-h-0000" || got[1] != "gke-c-p-h-0001" {
		t.Errorf("hosts = %v, want gke-c-p-h-0000, gke-c-p-h-0001", got)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (two 503s, then the list)", n)
	}
}

// When the API server keeps failing, the timeout says what the last check ran into.
func TestWaitReportsLastError(t *testing.T) {
	// The deadline comes with the second request: the first has been answered.
	ctx := newExpiringContext(testwait.Context(t))
	c, _ := fakeAPIServer(t, func(n int, _ *http.Request) (int, string) {
		if n == 2 {
			ctx.expire()
		}
		return http.StatusServiceUnavailable, unavailable
	})
	_, err := c.WaitForSliceHosts(ctx, "p", 2, 10*time.Millisecond)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want a timeout", err)
	}
	for _, want := range []string{`node pool "p": hosts unknown after waiting`, "the last check failed", "etcd is restarting"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// A refusal (403) is not retried.
func TestWaitStopsOnForbidden(t *testing.T) {
	const forbidden = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes is forbidden: User \"me@example.com\" cannot list resource \"nodes\" in API group \"\" at the cluster scope","reason":"Forbidden","code":403}`
	c, calls := fakeAPIServer(t, func(int, *http.Request) (int, string) { return http.StatusForbidden, forbidden })
	_, err := c.WaitForSliceHosts(testwait.Context(t), "p", 2, 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), `refused the request (403 Forbidden): nodes is forbidden: User "me@example.com" cannot list resource "nodes"`) {
		t.Fatalf("error = %v, want the 403 with the API server's message", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d requests, want 1: a 403 must not be retried", n)
	}
}

// A watch that cannot go on (410: its resource version is too old) is followed by a new listing.
func TestWaitRelistsAfterExpiredWatch(t *testing.T) {
	const (
		oneReady = `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[
 {"metadata":{"name":"gke-c-p-h-0000","labels":{"cloud.google.com/gke-nodepool":"p"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
 {"metadata":{"name":"gke-c-p-h-0001","labels":{"cloud.google.com/gke-nodepool":"p"}}}]}`
		expired = `{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"9"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 7 (12)","reason":"Expired","code":410}}
`
	)
	c, calls := fakeAPIServer(t, func(n int, r *http.Request) (int, string) {
		q := r.URL.Query()
		watching := q.Get("watch") == "true"
		if watching != (n == 2) {
			t.Errorf("request %d: %s, want a list, then a watch, then a list", n, r.URL)
		}
		switch n {
		case 1:
			return http.StatusOK, oneReady
		case 2:
			// The watch goes on from the listing, until the API server ends it.
			for k, want := range map[string]string{"resourceVersion": "7", "allowWatchBookmarks": "true", "timeoutSeconds": "300"} {
				if got := q.Get(k); got != want {
					t.Errorf("watch %s: %s=%q, want %q", r.URL, k, got, want)
				}
			}
			return http.StatusOK, expired
		default:
			return http.StatusOK, nodeListJSON
		}
	})
	// Nor does the client cut it after requestTimeout, as it does other requests.
	if rc, ok := c.coreWatch.RESTClient().(*rest.RESTClient); !ok || rc.Client.Timeout != 0 {
		t.Errorf("the watch client is %T with an HTTP timeout; want none", c.coreWatch.RESTClient())
	}
	hosts, err := c.WaitForSliceHosts(testwait.Context(t), "p", 2, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(hosts); len(got) != 2 || got[0] != "gke-c-p-h-0000" || got[1] != "gke-c-p-h-0001" || !hosts[1].Ready {
		t.Errorf("hosts = %+v, want gke-c-p-h-0000 and gke-c-p-h-0001, Ready", hosts)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (list, watch ended by 410, list)", n)
	}
}

// A role that may list nodes but not watch them: the wait lists every poll instead.
func TestWaitListsWhenAWatchIsForbidden(t *testing.T) {
	const (
		oneReady = `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[
 {"metadata":{"name":"gke-c-p-h-0000","labels":{"cloud.google.com/gke-nodepool":"p"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
 {"metadata":{"name":"gke-c-p-h-0001","labels":{"cloud.google.com/gke-nodepool":"p"}}}]}`
		forbidden = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes is forbidden: User \"me@example.com\" cannot watch resource \"nodes\"","reason":"Forbidden","code":403}`
	)
	var watches atomic.Int32
	c, calls := fakeAPIServer(t, func(n int, r *http.Request) (int, string) {
		if r.URL.Query().Get("watch") == "true" {
			watches.Add(1)
			return http.StatusForbidden, forbidden
		}
		if n < 4 {
			return http.StatusOK, oneReady
		}
		return http.StatusOK, nodeListJSON
	})
	hosts, err := c.WaitForSliceHosts(testwait.Context(t), "p", 2, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 || !hosts[0].Ready || !hosts[1].Ready {
		t.Errorf("hosts = %+v, want both Ready", hosts)
	}
	// list, refused watch, list, list (both Ready).
	if n, w := calls.Load(), watches.Load(); n != 4 || w != 1 {
		t.Errorf("%d requests with %d watches, want 4 with 1: the refused watch is not tried again", n, w)
	}
}
