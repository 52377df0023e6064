package provider

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// fakeKube serves /version and the nodes of pool "p" (two hosts, ready of them Ready) with code.
func fakeKube(t *testing.T, code, ready int) clusterAccess {
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
	unreachable := clusterAccess{Endpoint: "127.0.0.1:1", CACertificate: fakeKube(t, http.StatusOK, 2).CACertificate}
	for _, tc := range []struct {
		name          string
		access        clusterAccess
		wantErr       bool
		cannotObserve bool
	}{
		{"all Ready", fakeKube(t, http.StatusOK, 2), false, false},
		{"one of two Ready", fakeKube(t, http.StatusOK, 1), true, false},
		{"token refused", fakeKube(t, http.StatusUnauthorized, 0), true, true},
		{"nobody listening", unreachable, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			w := startHostWait(ctx, client, tc.access, "p", 2)
			err := w.result(ctx, 500*time.Millisecond)
			if (err != nil) != tc.wantErr || kube.CannotObserve(err) != tc.cannotObserve {
				t.Errorf("result = %v (cannot observe: %t), want an error %t, cannot observe %t", err, kube.CannotObserve(err), tc.wantErr, tc.cannotObserve)
			}
		})
	}
}
