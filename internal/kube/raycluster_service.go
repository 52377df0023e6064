package kube

import (
	"context"
	"fmt"
	"slices"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeRay creates a RayCluster's head Service when there is none and leaves an existing one as
// it is (ray-operator controllers/ray/raycluster_controller.go, reconcileHeadService: "1 head
// service found" returns), so a change of the head's service type, annotations or source ranges
// reaches the Service only when it is made again.

// InternalLoadBalancerAnnotation makes GKE give a LoadBalancer Service an internal passthrough
// Network Load Balancer (GKE, "LoadBalancer Service parameters": networking.gke.io/load-balancer-type
// "Internal", all supported versions).
const InternalLoadBalancerAnnotation = "networking.gke.io/load-balancer-type"

// headServiceName is KubeRay's name of the head Service: the one the RayCluster's headService
// names, else <cluster>-head-svc (ray-operator v1.5.0 controllers/ray/utils/util.go,
// GenerateHeadServiceName for a RayCluster).
func headServiceName(rc *rayv1.RayCluster) string {
	if s := rc.Spec.HeadGroupSpec.HeadService; s != nil && s.Name != "" {
		return s.Name
	}
	return rc.Name + "-head-svc"
}

// headServiceStale reports whether svc is not what rc asks of its head Service.
func headServiceStale(svc *corev1.Service, rc *rayv1.RayCluster) bool {
	h := rc.Spec.HeadGroupSpec
	want := h.ServiceType
	if want == "" {
		want = corev1.ServiceTypeClusterIP
	}
	var annotations map[string]string
	var ranges []string
	if h.HeadService != nil {
		annotations, ranges = h.HeadService.Annotations, h.HeadService.Spec.LoadBalancerSourceRanges
	}
	if svc.Spec.Type != want || !slices.Equal(svc.Spec.LoadBalancerSourceRanges, ranges) {
		return true
	}
	for k, v := range annotations {
		if svc.Annotations[k] != v {
			return true
		}
	}
	// An annotation raytpu set once and no longer asks for.
	_, internal := annotations[InternalLoadBalancerAnnotation]
	return !internal && svc.Annotations[InternalLoadBalancerAnnotation] != ""
}

// HeadServiceCurrent reports whether the head Service is what rc asks for; one KubeRay has not
// made yet is.
func (c *Client) HeadServiceCurrent(ctx context.Context, rc *rayv1.RayCluster) (bool, error) {
	svc, err := c.core.Services(rc.Namespace).Get(ctx, headServiceName(rc), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("kube: reading Service %s/%s: %w", rc.Namespace, headServiceName(rc), c.explain(err))
	}
	return !headServiceStale(svc, rc), nil
}

// RefreshHeadService deletes the head Service when it is not what rc asks for, and waits, polling
// every poll (DefaultPollInterval when ≤ 0), until KubeRay has made it again from rc.
func (c *Client) RefreshHeadService(ctx context.Context, rc *rayv1.RayCluster, poll time.Duration) error {
	current, err := c.HeadServiceCurrent(ctx, rc)
	if err != nil || current {
		return err
	}
	name := headServiceName(rc)
	if err := c.core.Services(rc.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kube: deleting Service %s/%s: %w", rc.Namespace, name, c.explain(err))
	}
	return waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		svc, err := c.core.Services(rc.Namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, c.explain(err)
		}
		return svc.DeletionTimestamp == nil && !headServiceStale(svc, rc), nil
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: KubeRay did not make Service %s/%s again within %s", rc.Namespace, name, waited)
	})
}
