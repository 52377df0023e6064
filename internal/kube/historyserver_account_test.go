package kube

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// A RayCluster's history account is made bound to its Google service account, read back as
// current until it changes, never taken over from another owner or from a ServiceAccount made
// otherwise, and deleted with its owner's others but the one kept.
func TestHistoryAccount(t *testing.T) {
	ctx := testwait.Context(t)
	sas := env.client.core.ServiceAccounts("default")
	a := HistoryAccount{Namespace: "default", Name: "acct-ray-history", GoogleServiceAccount: "w@p.iam.gserviceaccount.com", Owner: "acct"}
	if err := env.client.ApplyHistoryAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	sa, err := sas.Get(ctx, a.Name, metav1.GetOptions{})
	if err != nil || sa.Annotations[workloadIdentityAnnotation] != a.GoogleServiceAccount {
		t.Fatalf("%+v, %v", sa, err)
	}
	if ok, why, err := env.client.HistoryAccountCurrent(ctx, a); !ok || err != nil {
		t.Fatalf("not current after apply: %s %v", why, err)
	}
	b := a
	b.GoogleServiceAccount = "other@p.iam.gserviceaccount.com"
	if ok, why, _ := env.client.HistoryAccountCurrent(ctx, b); ok || why == "" {
		t.Fatalf("current though bound to another Google service account: %q", why)
	}

	// Another owner's, and one made by hand, are refused and left alone.
	other := a
	other.Owner = "rayservice.acct"
	if err := env.client.ApplyHistoryAccount(ctx, other); !errors.Is(err, ErrServiceAccountNotOwned) {
		t.Fatalf("applying over another owner's: %v", err)
	}
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "by-hand"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sas.Delete(context.Background(), "by-hand", metav1.DeleteOptions{}) })
	byHand := a
	byHand.Name = "by-hand"
	if err := env.client.ApplyHistoryAccount(ctx, byHand); !errors.Is(err, ErrServiceAccountNotOwned) {
		t.Fatalf("applying over one made by hand: %v", err)
	}

	// A second one of the owner (a renamed kubernetes_service_account) goes, the kept one stays.
	renamed := a
	renamed.Name = "acct-renamed"
	if err := env.client.ApplyHistoryAccount(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	if err := env.client.DeleteHistoryAccounts(ctx, "default", "acct", renamed.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := sas.Get(ctx, a.Name, metav1.GetOptions{}); err == nil {
		t.Fatal("the owner's ServiceAccount not kept is still there")
	}
	if _, err := sas.Get(ctx, renamed.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the kept one: %v", err)
	}
	if err := env.client.DeleteHistoryAccounts(ctx, "default", "acct", ""); err != nil {
		t.Fatal(err)
	}
	if ok, why, err := env.client.HistoryAccountCurrent(ctx, renamed); ok || err != nil || why == "" {
		t.Fatalf("after deleting them all: %v %q %v", ok, why, err)
	}
	if _, err := sas.Get(ctx, "by-hand", metav1.GetOptions{}); err != nil {
		t.Fatalf("a ServiceAccount of nobody's was deleted: %v", err)
	}
}
