package provider

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// fakeKube serves /version and the nodes of pool "p" (two hosts, ready of them Ready) with code,
// counting in watches (when not nil) the watches of them it answers.
func fakeKube(t *testing.T, code, ready int, watches *atomic.Int32) clusterAccess {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code != http.StatusOK {
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
			return
		}
		if r.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"major":"1","minor":"34"}`))
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			if watches != nil {
				watches.Add(1)
			}
			return // a watch that ends at once: the wait lists again
		}
		var items []string
		for i := range 2 {
			status := "False"
			if i < ready {
				status = "True"
			}
			items = append(items, `{"metadata":{"name":"gke-c-p-0000000`+string(rune('0'+i))+`-000`+string(rune('0'+i))+
				`","labels":{"cloud.google.com/gke-nodepool":"p"}},"status":{"conditions":[{"type":"Ready","status":"`+status+`"}]}}`)
		}
		_, _ = w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[` + strings.Join(items, ",") + `]}`))
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return clusterAccess{Endpoint: srv.URL, CACertificate: base64.StdEncoding.EncodeToString(ca)}
}

// The host wait tells hosts seen but not Ready in time (an error: the slice is broken) from hosts
// that cannot be seen from here (the slice is created, its hosts unknown).
func TestHostWaitResult(t *testing.T) {
	client, err := gke.New(context.Background(), gke.Config{
		Endpoint: "http://127.0.0.1:1", TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// Port 1 (tcpmux) has no listener here. A port freed by closing a listener could be taken by
	// the next test server this process starts.
	unreachable := clusterAccess{Endpoint: "127.0.0.1:1", CACertificate: fakeKube(t, http.StatusOK, 2, nil).CACertificate}
	// A host timeout that never comes first: the wait ends by what the server answers, or at the
	// test's deadline.
	const never = time.Duration(math.MaxInt64)
	var notReadyWatches atomic.Int32
	for _, tc := range []struct {
		name    string
		access  clusterAccess
		timeout time.Duration
		// cutOnceWatched, when set, counts the server's node watches: the test ends the wait, as
		// host_wait_timeout would, once it has read the hosts (it watches after each listing).
		cutOnceWatched *atomic.Int32
		wantErr        bool
		cannotObserve  bool
	}{
		{"all Ready", fakeKube(t, http.StatusOK, 2, nil), never, nil, false, false},
		{"one of two Ready", fakeKube(t, http.StatusOK, 1, &notReadyWatches), never, &notReadyWatches, true, false},
		{"token refused", fakeKube(t, http.StatusUnauthorized, 0, nil), never, nil, true, true},
		// The timeout is what ends this wait: the API server gets that long to answer, and no
		// machine, however slow, makes a refused connection answer.
		{"nobody listening", unreachable, 500 * time.Millisecond, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testwait.Context(t)
			waitCtx, cut := context.WithCancel(ctx)
			defer cut()
			w := startHostWait(waitCtx, client, tc.access, "p", 2)
			if tc.cutOnceWatched != nil {
				testwait.For(t, "the host wait to read the hosts", func() bool { return tc.cutOnceWatched.Load() > 0 })
				cut()
			}
			err := w.result(ctx, tc.timeout)
			if (err != nil) != tc.wantErr || kube.CannotObserve(err) != tc.cannotObserve {
				t.Errorf("result = %v (cannot observe: %t), want an error %t, cannot observe %t", err, kube.CannotObserve(err), tc.wantErr, tc.cannotObserve)
			}
		})
	}
}
