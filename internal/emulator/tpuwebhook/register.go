package tpuwebhook

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Install registers the webhook in the cluster with this UID, through its client kube (created,
// or updated to the server's address and CA). The registration follows the webhook's
// deployments: Pods CREATE whose labels say KubeRay made them, RayClusters CREATE, every
// namespace but kube-system and kube-node-lease, sideEffects NoneOnDryRun, AdmissionReview v1.
func (s *Server) Install(ctx context.Context, kube kubernetes.Interface, uid string) error {
	sideEffects := admissionregistrationv1.SideEffectClassNoneOnDryRun
	scope := admissionregistrationv1.NamespacedScope
	namespaces := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "kube-node-lease"},
	}}}
	url := func(path string) *string {
		u := s.url + "/clusters/" + uid + "/" + path
		return &u
	}
	mut := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: tpuWebhookMutatingConfig},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    tpuWebhookMutatingName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &sideEffects,
			NamespaceSelector:       namespaces,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: url("mutate"), CABundle: s.cfg.CAPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: &scope},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k8sAppNameLabel: kubeRayAppName}},
		}},
	}
	val := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: tpuWebhookValidatingConfig},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    tpuWebhookValidatingName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &sideEffects,
			NamespaceSelector:       namespaces,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: url("validate"), CABundle: s.cfg.CAPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"ray.io"}, APIVersions: []string{"*"}, Resources: []string{"rayclusters"}, Scope: &scope},
			}},
		}},
	}
	api := kube.AdmissionregistrationV1()
	if cur, err := api.MutatingWebhookConfigurations().Get(ctx, mut.Name, metav1.GetOptions{}); err == nil {
		cur.Webhooks = mut.Webhooks
		if _, err := api.MutatingWebhookConfigurations().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	} else if _, err := api.MutatingWebhookConfigurations().Create(ctx, mut, metav1.CreateOptions{}); err != nil {
		return err
	}
	if cur, err := api.ValidatingWebhookConfigurations().Get(ctx, val.Name, metav1.GetOptions{}); err == nil {
		cur.Webhooks = val.Webhooks
		_, err = api.ValidatingWebhookConfigurations().Update(ctx, cur, metav1.UpdateOptions{})
		return err
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	_, err := api.ValidatingWebhookConfigurations().Create(ctx, val, metav1.CreateOptions{})
	return err
}

// Remove unregisters the webhook from a cluster through its client (the add-on was disabled).
func Remove(ctx context.Context, kube kubernetes.Interface) error {
	api := kube.AdmissionregistrationV1()
	if err := api.MutatingWebhookConfigurations().Delete(ctx, tpuWebhookMutatingConfig, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := api.ValidatingWebhookConfigurations().Delete(ctx, tpuWebhookValidatingConfig, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
