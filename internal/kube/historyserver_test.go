package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// The History Server's objects are applied, its Pod runs (the cluster's Deployment controller and
// scheduler make and place it), a changed bucket is read back, and delete removes everything.
func TestHistoryServer(t *testing.T) {
	ctx := testwait.Context(t)
	h := HistoryServer{Namespace: "default", Name: "history", Bucket: "runs-a", GoogleServiceAccount: "history@p.iam.gserviceaccount.com",
		Image: "quay.io/kuberay/historyserver:v1.7.0", CPU: "500m", Memory: "2Gi", MemoryLimit: "12Gi"}
	if err := env.client.ApplyHistoryServer(ctx, h); err != nil {
		t.Fatal(err)
	}
	st, err := env.client.WaitHistoryServerReady(ctx, h.Namespace, h.Name, testPoll)
	if err != nil {
		t.Fatal(err)
	}
	if st.HistoryServer != h {
		t.Fatalf("read back %+v, want %+v", st.HistoryServer, h)
	}
	// The server may read RayClusters and nothing else of the cluster's.
	role, err := env.client.rbac.ClusterRoles().Get(ctx, historyServerReaderRole(h), metav1.GetOptions{})
	if err != nil || len(role.Rules) != 1 || role.Rules[0].Resources[0] != "rayclusters" {
		t.Fatalf("ClusterRole: %v, %v", role, err)
	}

	h.Bucket = "runs-b"
	if err := env.client.ApplyHistoryServer(ctx, h); err != nil {
		t.Fatal(err)
	}
	if st, err := env.client.GetHistoryServer(ctx, h.Namespace, h.Name); err != nil || st.Bucket != "runs-b" {
		t.Fatalf("after a bucket change: %+v, %v", st, err)
	}

	if err := env.client.DeleteHistoryServer(ctx, h.Namespace, h.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.GetHistoryServer(ctx, h.Namespace, h.Name); !errors.Is(err, ErrHistoryServerNotFound) {
		t.Fatalf("after delete: %v, want ErrHistoryServerNotFound", err)
	}
	if _, err := env.client.rbac.ClusterRoleBindings().Get(ctx, historyServerReaderRole(h), metav1.GetOptions{}); err == nil {
		t.Fatal("the ClusterRoleBinding outlived the History Server")
	}
	// Deleting again finds nothing to delete and says nothing.
	if err := env.client.DeleteHistoryServer(ctx, h.Namespace, h.Name); err != nil {
		t.Fatal(err)
	}
}

// A History Server that times out says why its Pod waits, as the last read that completed found,
// even when the read the deadline cut short found nothing.
func TestHistoryServerTimeoutSaysWhy(t *testing.T) {
	const (
		deployment = `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"history","namespace":"default","generation":1},
 "spec":{"selector":{"matchLabels":{"app":"history"}},"template":{"metadata":{"labels":{"app":"history"}},"spec":{"containers":[{"name":"historyserver","image":"h"}]}}},
 "status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"conditions":[{"type":"Available","status":"False","message":"Deployment does not have minimum availability."}]}}`
		pods = `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"history-5d9c","namespace":"default"},
 "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available: 3 Insufficient cpu."}]}}]}`
		account = `{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"history","namespace":"default"}}`
	)
	ctx := newExpiringContext(testwait.Context(t))
	var deploymentReads atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/apps/v1/namespaces/default/deployments/history":
			// The second check's first read meets the deadline.
			if deploymentReads.Add(1) == 2 {
				ctx.expire()
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(unavailable))
				return
			}
			_, _ = w.Write([]byte(deployment))
		case "/api/v1/namespaces/default/pods":
			_, _ = w.Write([]byte(pods))
		case "/api/v1/namespaces/default/serviceaccounts/history":
			_, _ = w.Write([]byte(account))
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	c := testClientOf(t, srv)
	_, err := c.WaitHistoryServerReady(ctx, "default", "history", 10*time.Millisecond)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want a timeout", err)
	}
	if want := "its Pod history-5d9c cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu."; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
