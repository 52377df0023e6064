package kube

import (
	"errors"
	"testing"

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
