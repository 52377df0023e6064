package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RayServiceResource and RayServiceKind name KubeRay's RayService (rayservices.ray.io).
const (
	RayServiceResource = "rayservices"
	RayServiceKind     = "RayService"
)

var rayServiceGVR = schema.GroupVersionResource{Group: RayClusterGroup, Version: "v1", Resource: RayServiceResource}

// ErrRayServiceNotFound is returned (wrapped) when a RayService does not exist.
var ErrRayServiceNotFound = errors.New("RayService not found")

// KubeRay's labels on the RayClusters it makes for a RayService (ray-operator v1.5.0
// controllers/ray/utils/constant.go; rayservice_controller.go, constructRayClusterForRayService).
const (
	originatedFromNameLabel = "ray.io/originated-from-cr-name"
	originatedFromCRDLabel  = "ray.io/originated-from-crd"
)

// RayServiceSpec is a RayService as raytpu manages it: the RayCluster KubeRay makes for it, whose
// Name and Annotations are the RayService's (KubeRay copies a RayService's annotations onto the
// RayClusters it makes: constructRayClusterForRayService), and its Serve config.
type RayServiceSpec struct {
	RayClusterSpec
	// ServeConfigV2 is spec.serveConfigV2: Ray Serve's config file (applications and their
	// deployments) as YAML, which KubeRay sends to the RayCluster's dashboard.
	ServeConfigV2 string
	// Upgrade lets KubeRay bring up a second RayCluster for a changed rayClusterConfig (upgrade
	// strategy NewCluster), for as long as an upgrade that has the slices for it takes.
	Upgrade bool
	// DeletionDelaySeconds is how long KubeRay keeps the RayCluster an upgrade replaced before it
	// deletes it (spec.rayClusterDeletionDelaySeconds; KubeRay's default is 60).
	DeletionDelaySeconds int32
}

// RayServiceObject renders s with KubeRay's Go types; its rayClusterConfig is what RayClusterObject
// renders for a RayCluster.
//
// Its upgrade strategy is None unless s.Upgrade: KubeRay then never brings up a second RayCluster
// for a changed rayClusterConfig (rayservice_controller.go, isZeroDowntimeUpgradeEnabled and
// shouldPrepareNewCluster), which on TPUs would wait for slices that the first one holds: not for a
// change made outside Terraform, nor for one raytpu makes without the slices for it. A change of the
// Serve config alone reaches the running RayCluster whatever the strategy (reconcileServe).
func RayServiceObject(s RayServiceSpec) (*rayv1.RayService, error) {
	spec, err := RayClusterConfig(s.RayClusterSpec)
	if err != nil {
		return nil, err
	}
	strategy := rayv1.None
	if s.Upgrade {
		strategy = rayv1.NewCluster
	}
	return &rayv1.RayService{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: RayServiceKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Annotations: s.Annotations},
		Spec: rayv1.RayServiceSpec{
			ServeConfigV2:                  s.ServeConfigV2,
			RayClusterSpec:                 spec,
			UpgradeStrategy:                &rayv1.RayServiceUpgradeStrategy{Type: &strategy},
			ServeService:                   serveService(spec.HeadGroupSpec.HeadService),
			RayClusterDeletionDelaySeconds: &s.DeletionDelaySeconds,
		},
	}, nil
}

// serveService is the template of the RayService's serve Service: the head's, if it has one. KubeRay
// gives the serve Service the head's service type but, without a template of its own, none of the
// head Service's annotations or source ranges (ray-operator v1.5.0 controllers/ray/common/service.go,
// BuildServeService): an internal load balancer of the head would leave the serve Service an
// external one.
func serveService(head *corev1.Service) *corev1.Service {
	if head == nil {
		return nil
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(head.Annotations)},
		Spec:       corev1.ServiceSpec{LoadBalancerSourceRanges: slices.Clone(head.Spec.LoadBalancerSourceRanges)},
	}
}

// ApplyRayService creates or updates rs by server-side apply as FieldManager, taking over fields
// another manager changed, and returns the stored object.
func (c *Client) ApplyRayService(ctx context.Context, rs *rayv1.RayService) (*rayv1.RayService, error) {
	return c.applyRayService(ctx, rs, nil)
}

// DryRunApplyRayService is ApplyRayService as a server-side dry run: the RayService as the API
// server would store it, with nothing stored.
func (c *Client) DryRunApplyRayService(ctx context.Context, rs *rayv1.RayService) (*rayv1.RayService, error) {
	return c.applyRayService(ctx, rs, []string{metav1.DryRunAll})
}

func (c *Client) applyRayService(ctx context.Context, rs *rayv1.RayService, dryRun []string) (*rayv1.RayService, error) {
	got, err := c.applyKubeRay(ctx, rayServiceGVR, rs, rs.Namespace, rs.Name, dryRun,
		[]string{"spec", "rayClusterConfig", "headGroupSpec", "headService"}, []string{"spec", "serveService"})
	if err != nil {
		if errors.Is(err, errRendering) {
			return nil, fmt.Errorf("kube: rendering RayService %s/%s: %w", rs.Namespace, rs.Name, err)
		}
		return nil, c.rayServiceError("applying", rs.Namespace, rs.Name, err)
	}
	return rayServiceFrom(got)
}

// GetRayService reads a RayService; a missing one gives an error wrapping ErrRayServiceNotFound.
func (c *Client) GetRayService(ctx context.Context, namespace, name string) (*rayv1.RayService, error) {
	got, err := c.dynamic.Resource(rayServiceGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.rayServiceError("reading", namespace, name, err)
	}
	return rayServiceFrom(got)
}

// RayServiceClusters are the names of the RayClusters KubeRay made for the RayService, by its
// labels on them.
func (c *Client) RayServiceClusters(ctx context.Context, namespace, name string) ([]string, error) {
	list, err := c.dynamic.Resource(rayClusterGVR).Namespace(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: originatedFromNameLabel + "=" + name + "," + originatedFromCRDLabel + "=" + RayServiceKind,
	})
	if err != nil {
		return nil, fmt.Errorf("kube: listing the RayClusters of RayService %s/%s: %w", namespace, name, c.explain(err))
	}
	out := make([]string, 0, len(list.Items))
	for _, rc := range list.Items {
		out = append(out, rc.GetName())
	}
	return out, nil
}

// DeleteRayService deletes a RayService and waits until it, its RayClusters and their Pods are
// gone: the Pods hold TPU hosts until they end. It deletes the RayClusters itself once the
// RayService is gone rather than wait for the garbage collector to follow KubeRay's owner
// references. A RayService already gone is no error.
func (c *Client) DeleteRayService(ctx context.Context, namespace, name string) error {
	w := c.WatchRayService(ctx, namespace, name)
	defer w.Close()
	background := metav1.DeletePropagationBackground
	err := c.dynamic.Resource(rayServiceGVR).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return c.rayServiceError("deleting", namespace, name, err)
	}
	if err := w.WaitForGone(ctx); err != nil {
		return err
	}
	// Listed once the RayService is gone: KubeRay makes no RayCluster for it after that.
	clusters, err := c.RayServiceClusters(ctx, namespace, name)
	if err != nil {
		return err
	}
	for _, rc := range clusters {
		if err := c.DeleteRayCluster(ctx, namespace, rc); err != nil {
			return err
		}
	}
	return c.deleteRayServiceServices(ctx, namespace, name)
}

// deleteRayServiceServices deletes the head and Serve Services KubeRay made for RayService
// namespace/name and waits until they are gone. A RayService made again under the name (a
// replacement) must find none: KubeRay would take a Service it finds over by copying the new spec
// onto it with the old clusterIP and annotations (ray-operator v1.5.0 rayservice_controller.go,
// reconcileServices), which for a headless head Service of another type the API server refuses.
func (c *Client) deleteRayServiceServices(ctx context.Context, namespace, name string) error {
	selector := originatedFromNameLabel + "=" + name + "," + originatedFromCRDLabel + "=" + RayServiceKind
	list := func(ctx context.Context) ([]corev1.Service, error) {
		l, err := c.core.Services(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, fmt.Errorf("kube: listing the Services of RayService %s/%s: %w", namespace, name, c.explain(err))
		}
		return l.Items, nil
	}
	services, err := list(ctx)
	if err != nil {
		return err
	}
	for _, svc := range services {
		if err := c.core.Services(namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kube: deleting Service %s/%s: %w", namespace, svc.Name, c.explain(err))
		}
	}
	var left []string
	return waitFor(ctx, 0, func(ctx context.Context) (bool, error) {
		services, err := list(ctx)
		if err != nil {
			return false, err
		}
		left = left[:0]
		for _, svc := range services {
			left = append(left, svc.Name)
		}
		return len(left) == 0, nil
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: the Services %s of RayService %s/%s are still there after %s", strings.Join(left, ", "), namespace, name, waited)
	})
}

func (c *Client) rayServiceError(action, namespace, name string, err error) error {
	return c.kubeRayError(RayServiceKind, RayServiceResource, ErrRayServiceNotFound, action, namespace, name, err)
}

func rayServiceFrom(u *unstructured.Unstructured) (*rayv1.RayService, error) {
	rs := &rayv1.RayService{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rs); err != nil {
		return nil, fmt.Errorf("kube: RayService %s/%s is not a KubeRay v1 RayService: %w", u.GetNamespace(), u.GetName(), err)
	}
	return rs, nil
}
