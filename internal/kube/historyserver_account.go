package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// The collectors of a RayCluster write to the bucket as the Kubernetes service account its Pods
// run as, which Workload Identity binds to a Google service account allowed to write there: in
// KubeRay's GCS setup the Ray Pods run as the History Server's own (kuberay v1.7.0,
// historyserver/config/raycluster-gcs.yaml, serviceAccountName: historyserver). raytpu makes one
// for each RayCluster or RayService instead, so that the server's identity, which only reads the
// bucket, does not write it too. Each carries its owner in a label, so that raytpu never takes
// over or deletes a service account it did not make for that owner.

// HistoryAccount is the Kubernetes service account the Ray Pods of one RayCluster or RayService
// run as when collectors archive their runs.
type HistoryAccount struct {
	Namespace, Name string
	// GoogleServiceAccount is the email of the Google service account it is bound to.
	GoogleServiceAccount string
	// Owner names the RayCluster or RayService it is made for: the Cluster of the claims of its
	// worker groups (SliceClaim), which tells a RayService from a RayCluster of the same name.
	Owner string
}

// HistoryAccountOwnerLabel holds HistoryAccount.Owner.
const HistoryAccountOwnerLabel = "raytpu.dev/ray-history-of"

// ErrServiceAccountNotOwned is returned (wrapped) for a ServiceAccount that exists but was not
// made by raytpu for the owner asked.
var ErrServiceAccountNotOwned = errors.New("the ServiceAccount exists and is not the one raytpu made for it")

func historyAccountLabels(owner string) map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": FieldManager, HistoryAccountOwnerLabel: owner}
}

// ApplyHistoryAccount creates or updates a by server-side apply; a ServiceAccount of that name
// made otherwise is left alone, with an error wrapping ErrServiceAccountNotOwned.
func (c *Client) ApplyHistoryAccount(ctx context.Context, a HistoryAccount) error {
	sa, err := c.core.ServiceAccounts(a.Namespace).Get(ctx, a.Name, metav1.GetOptions{})
	switch {
	case err == nil && !ownedBy(sa, a.Owner):
		return fmt.Errorf("kube: ServiceAccount %s/%s (owner %q): %w", a.Namespace, a.Name, sa.Labels[HistoryAccountOwnerLabel], ErrServiceAccountNotOwned)
	case err != nil && !apierrors.IsNotFound(err):
		return c.explain(fmt.Errorf("kube: reading ServiceAccount %s/%s: %w", a.Namespace, a.Name, err))
	}
	return c.applyBoundServiceAccount(ctx, a.Namespace, a.Name, a.GoogleServiceAccount, historyAccountLabels(a.Owner))
}

// HistoryAccountCurrent says whether a exists as ApplyHistoryAccount makes it, and why not.
func (c *Client) HistoryAccountCurrent(ctx context.Context, a HistoryAccount) (bool, string, error) {
	sa, err := c.core.ServiceAccounts(a.Namespace).Get(ctx, a.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("the ServiceAccount %s/%s the Ray Pods run as is gone", a.Namespace, a.Name), nil
	case err != nil:
		return false, "", c.explain(fmt.Errorf("kube: reading ServiceAccount %s/%s: %w", a.Namespace, a.Name, err))
	case !ownedBy(sa, a.Owner):
		return false, fmt.Sprintf("the ServiceAccount %s/%s the Ray Pods run as is not raytpu's for them any more (its labels changed)", a.Namespace, a.Name), nil
	case sa.Annotations[workloadIdentityAnnotation] != a.GoogleServiceAccount:
		return false, fmt.Sprintf("the ServiceAccount %s/%s the Ray Pods run as is bound to %q, not %q (%s)", a.Namespace, a.Name,
			sa.Annotations[workloadIdentityAnnotation], a.GoogleServiceAccount, workloadIdentityAnnotation), nil
	}
	return true, "", nil
}

// DeleteHistoryAccounts deletes the ServiceAccounts of namespace that raytpu made for owner,
// but the one named keep (empty: all of them).
func (c *Client) DeleteHistoryAccounts(ctx context.Context, namespace, owner, keep string) error {
	list, err := c.core.ServiceAccounts(namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(historyAccountLabels(owner)).String()})
	if err != nil {
		return c.explain(fmt.Errorf("kube: listing the ServiceAccounts of %s in %s: %w", owner, namespace, err))
	}
	for _, sa := range list.Items {
		if sa.Name == keep {
			continue
		}
		// Only the one listed: not another made under its name since.
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sa.UID}}
		if err := c.core.ServiceAccounts(namespace).Delete(ctx, sa.Name, opts); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return c.explain(fmt.Errorf("kube: deleting ServiceAccount %s/%s: %w", namespace, sa.Name, err))
		}
	}
	return nil
}

func ownedBy(sa *corev1.ServiceAccount, owner string) bool {
	return labels.SelectorFromSet(historyAccountLabels(owner)).Matches(labels.Set(sa.Labels))
}

// applyBoundServiceAccount applies the ServiceAccount namespace/name, bound through Workload
// Identity to the Google service account gsa (GKE, "Use Workload Identity Federation for GKE").
func (c *Client) applyBoundServiceAccount(ctx context.Context, namespace, name, gsa string, labels map[string]string) error {
	sa := corev1ac.ServiceAccount(name, namespace).WithLabels(labels).WithAnnotations(map[string]string{workloadIdentityAnnotation: gsa})
	if _, err := c.core.ServiceAccounts(namespace).Apply(ctx, sa, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return c.explain(fmt.Errorf("kube: applying ServiceAccount %s/%s: %w", namespace, name, err))
	}
	return nil
}
