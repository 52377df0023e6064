package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// FieldManager is the server-side apply field manager of raytpu's RayClusters.
const FieldManager = "raytpu"

var rayClusterGVR = schema.GroupVersionResource{Group: RayClusterGroup, Version: "v1", Resource: RayClusterResource}

// ErrRayClusterNotFound is returned (wrapped) when a RayCluster does not exist.
var ErrRayClusterNotFound = errors.New("RayCluster not found")

// ErrKubeRayNotServed is returned (wrapped) when the API server does not serve RayClusters: the
// KubeRay CRDs are absent.
var ErrKubeRayNotServed = errors.New("the API server does not serve rayclusters.ray.io/v1")

// ApplyRayCluster creates or updates rc by server-side apply as FieldManager, taking over fields
// another manager changed (the configuration is the source of truth), and returns the stored
// object.
func (c *Client) ApplyRayCluster(ctx context.Context, rc *rayv1.RayCluster) (*rayv1.RayCluster, error) {
	return c.applyRayCluster(ctx, rc, nil)
}

// DryRunApplyRayCluster is ApplyRayCluster as a server-side dry run: the RayCluster as the API
// server would store it, with nothing stored.
func (c *Client) DryRunApplyRayCluster(ctx context.Context, rc *rayv1.RayCluster) (*rayv1.RayCluster, error) {
	return c.applyRayCluster(ctx, rc, []string{metav1.DryRunAll})
}

func (c *Client) applyRayCluster(ctx context.Context, rc *rayv1.RayCluster, dryRun []string) (*rayv1.RayCluster, error) {
	got, err := c.applyKubeRay(ctx, rayClusterGVR, rc, rc.Namespace, rc.Name, dryRun, []string{"spec", "headGroupSpec", "headService"})
	if err != nil {
		if errors.Is(err, errRendering) {
			return nil, fmt.Errorf("kube: rendering RayCluster %s/%s: %w", rc.Namespace, rc.Name, err)
		}
		return nil, c.rayClusterError("applying", rc.Namespace, rc.Name, err)
	}
	return fromUnstructured(got)
}

var errRendering = errors.New("not a Kubernetes object")

// applyKubeRay applies obj, a KubeRay object holding Service templates at the paths services, by
// server-side apply as FieldManager, taking over fields another manager changed (the configuration
// is the source of truth). A rendering failure wraps errRendering.
func (c *Client) applyKubeRay(ctx context.Context, gvr schema.GroupVersionResource, obj any, namespace, name string,
	dryRun []string, services ...[]string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRendering, err)
	}
	// Status is a subresource, and a null creationTimestamp would claim the field.
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	// So would the empty metadata of a Service template, which the CRD refuses as null.
	for _, at := range services {
		svc, ok, _ := unstructured.NestedMap(m, at...)
		if !ok {
			continue
		}
		if meta, _ := svc["metadata"].(map[string]any); meta != nil {
			delete(meta, "creationTimestamp")
			if len(meta) == 0 {
				delete(svc, "metadata")
			}
		}
		_ = unstructured.SetNestedMap(m, svc, at...)
	}
	return c.dynamic.Resource(gvr).Namespace(namespace).Apply(ctx, name, &unstructured.Unstructured{Object: m},
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: dryRun})
}

// GetRayCluster reads a RayCluster; a missing one gives an error wrapping ErrRayClusterNotFound.
func (c *Client) GetRayCluster(ctx context.Context, namespace, name string) (*rayv1.RayCluster, error) {
	got, err := c.dynamic.Resource(rayClusterGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.rayClusterError("reading", namespace, name, err)
	}
	return fromUnstructured(got)
}

// DeleteRayCluster deletes a RayCluster and waits until it and its Pods are gone: KubeRay's Pods
// hold TPU hosts until they end. A RayCluster already gone is no error.
func (c *Client) DeleteRayCluster(ctx context.Context, namespace, name string) error {
	w := c.WatchRayCluster(ctx, namespace, name)
	defer w.Close()
	background := metav1.DeletePropagationBackground
	err := c.dynamic.Resource(rayClusterGVR).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return c.rayClusterError("deleting", namespace, name, err)
	}
	return w.WaitForGone(ctx)
}

func (c *Client) rayClusterError(action, namespace, name string, err error) error {
	return c.kubeRayError(RayClusterKind, RayClusterResource, ErrRayClusterNotFound, action, namespace, name, err)
}

// kubeRayError explains err, of an action on the KubeRay object namespace/name of kind (served as
// resource): notFound when the object does not exist, ErrKubeRayNotServed when the API server
// serves no such objects at all.
func (c *Client) kubeRayError(kind, resource string, notFound error, action, namespace, name string, err error) error {
	if apierrors.IsNotFound(err) {
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == resource {
			return fmt.Errorf("kube: %s %s %s/%s: %w", action, kind, namespace, name, notFound)
		}
		if errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces" {
			return fmt.Errorf("kube: %s %s %s/%s: namespace %q does not exist", action, kind, namespace, name, namespace)
		}
		// A 404 without the resource's kind: the API server serves no such objects at all.
		return fmt.Errorf("kube: %s %s %s/%s: %w (the KubeRay CRDs are not installed: is the Ray Operator add-on enabled?)",
			action, kind, namespace, name, ErrKubeRayNotServed)
	}
	return fmt.Errorf("kube: %s %s %s/%s: %w", action, kind, namespace, name, c.explain(err))
}

func fromUnstructured(u *unstructured.Unstructured) (*rayv1.RayCluster, error) {
	rc := &rayv1.RayCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rc); err != nil {
		return nil, fmt.Errorf("kube: RayCluster %s/%s is not a KubeRay v1 RayCluster: %w", u.GetNamespace(), u.GetName(), err)
	}
	return rc, nil
}

// KubeRay's Pod labels (ray-operator v1.5.0 pkg/utils/constant.go) and the TPU webhook's legacy
// replica label (ai-on-gke kuberay-tpu-webhook main.go).
const (
	rayClusterLabel      = "ray.io/cluster"
	rayNodeTypeLabel     = "ray.io/node-type"
	rayGroupLabel        = "ray.io/group"
	rayReplicaNameLabel  = "ray.io/worker-group-replica-name"
	rayReplicaIndexLabel = "ray.io/worker-group-replica-index"
	rayHostIndexLabel    = "ray.io/replica-host-index"
	webhookReplicaLabel  = "replicaIndex"
)

// RayPod is one Pod of a RayCluster and where it runs.
type RayPod struct {
	Name string
	UID  string
	Head bool
	// Group is the worker group; empty for the head.
	Group string
	// Replica names the slice-sized replica the Pod belongs to: KubeRay's replica name for
	// multi-host groups (or the webhook's replicaIndex label), the Pod's name for a single host.
	Replica string
	// HostIndex is the Pod's TPU_WORKER_ID within its replica (-1 when unknown).
	HostIndex int
	// ReplicaIndexed says the Pod carries KubeRay's replica index label, which KubeRay v1.5.0 sets
	// only with its feature gate RayMultiHostIndexing on (controllers/ray/common/pod.go:333), the gate
	// under which it also recreates and deletes a multi-host replica's Pods together
	// (raycluster_controller.go:676).
	ReplicaIndexed bool
	Node           string // empty while unscheduled
	NodePool       string // the node's cloud.google.com/gke-nodepool
	NodeReady      bool
	Phase          string
	// Running is phase Running, Ready and not being deleted.
	Running bool
	// Unschedulable is the scheduler's message for a Pod it found no node for.
	Unschedulable string
	// Template is the stamp of the template the Pod was made from (PodTemplateAnnotation).
	Template string
}

// RayClusterPods lists the Pods of a RayCluster with their nodes, the head first, then by group,
// replica and host index.
func (c *Client) RayClusterPods(ctx context.Context, namespace, name string) ([]RayPod, error) {
	pods, err := c.core.Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: rayClusterLabel + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("kube: listing the Pods of RayCluster %s/%s: %w", namespace, name, c.explain(err))
	}
	nodes := map[string]*corev1.Node{}
	if len(pods.Items) > 0 {
		// Workers run on TPU nodes only, and a cluster's CPU nodes may be many.
		list, err := c.core.Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelAccelerator})
		if err != nil {
			return nil, fmt.Errorf("kube: listing the TPU nodes: %w", c.explain(err))
		}
		for i := range list.Items {
			nodes[list.Items[i].Name] = &list.Items[i]
		}
	}
	out := make([]RayPod, 0, len(pods.Items))
	for i := range pods.Items {
		p := &pods.Items[i]
		if n := p.Spec.NodeName; n != "" && nodes[n] == nil && p.Labels[rayNodeTypeLabel] == "head" {
			// The head runs on a CPU node: the one node read for it.
			if node, err := c.core.Nodes().Get(ctx, n, metav1.GetOptions{}); err == nil {
				nodes[n] = node
			}
		}
		out = append(out, rayPod(p, nodes))
	}
	sortRayPods(out)
	return out, nil
}

// sortRayPods orders Pods the head first, then by group, replica and host index.
func sortRayPods(out []RayPod) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Head != b.Head:
			return a.Head
		case a.Group != b.Group:
			return a.Group < b.Group
		case a.Replica != b.Replica:
			return a.Replica < b.Replica
		case a.HostIndex != b.HostIndex:
			return a.HostIndex < b.HostIndex
		}
		return a.Name < b.Name
	})
}

func rayPod(p *corev1.Pod, nodes map[string]*corev1.Node) RayPod {
	rp := RayPod{
		Name: p.Name, UID: string(p.UID), Head: p.Labels[rayNodeTypeLabel] == "head", Group: p.Labels[rayGroupLabel],
		HostIndex: -1, Node: p.Spec.NodeName, Phase: string(p.Status.Phase), Template: p.Annotations[PodTemplateAnnotation],
	}
	if rp.Head {
		rp.Group = ""
	}
	switch {
	case p.Labels[rayReplicaNameLabel] != "":
		rp.Replica = p.Labels[rayReplicaNameLabel]
	case p.Labels[webhookReplicaLabel] != "" && p.Labels[rayHostIndexLabel] != "":
		rp.Replica = p.Labels[webhookReplicaLabel]
	default:
		rp.Replica = p.Name
	}
	_, rp.ReplicaIndexed = p.Labels[rayReplicaIndexLabel]
	if v, err := strconv.Atoi(p.Labels[rayHostIndexLabel]); err == nil {
		rp.HostIndex = v
	} else if !rp.Head {
		rp.HostIndex = envInt(p, "TPU_WORKER_ID")
	}
	if n := nodes[p.Spec.NodeName]; n != nil {
		rp.NodePool = n.Labels[tpu.LabelNodePool]
		rp.NodeReady, _ = nodeReady(n)
	}
	rp.Running = p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podReady(p)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			rp.Unschedulable = c.Message
		}
	}
	return rp
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func envInt(p *corev1.Pod, name string) int {
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				if v, err := strconv.Atoi(e.Value); err == nil {
					return v
				}
			}
		}
	}
	return -1
}
