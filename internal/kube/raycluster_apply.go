package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

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
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rc)
	if err != nil {
		return nil, fmt.Errorf("kube: rendering RayCluster %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	// Status is a subresource, and a null creationTimestamp would claim the field.
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	got, err := c.dynamic.Resource(rayClusterGVR).Namespace(rc.Namespace).Apply(ctx, rc.Name, &unstructured.Unstructured{Object: m},
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, c.rayClusterError("applying", rc.Namespace, rc.Name, err)
	}
	return fromUnstructured(got)
}

// GetRayCluster reads a RayCluster; a missing one gives an error wrapping ErrRayClusterNotFound.
func (c *Client) GetRayCluster(ctx context.Context, namespace, name string) (*rayv1.RayCluster, error) {
	got, err := c.dynamic.Resource(rayClusterGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.rayClusterError("reading", namespace, name, err)
	}
	return fromUnstructured(got)
}

// WaitForRayClusterState reads the RayCluster every poll (DefaultPollInterval when ≤ 0) until
// KubeRay reports state (such as rayv1.Ready), and returns the last one read: KubeRay writes its
// status a moment after the Pods it counts are Running. ctx bounds the wait; its end returns the
// last read with no error.
func (c *Client) WaitForRayClusterState(ctx context.Context, namespace, name string, state rayv1.ClusterState, poll time.Duration) (*rayv1.RayCluster, error) {
	var last *rayv1.RayCluster
	err := waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		rc, err := c.GetRayCluster(ctx, namespace, name)
		if err != nil {
			return false, err
		}
		last = rc
		return rc.Status.State == state, nil //nolint:staticcheck // State is deprecated for Conditions, still set by KubeRay v1.5
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: RayCluster %s/%s not %s after waiting %s", namespace, name, state, waited)
	})
	if last != nil && ctx.Err() != nil {
		return last, nil //nolint:nilerr // the end of ctx ends the wait, as documented, not in failure
	}
	return last, err
}

// DeleteRayCluster deletes a RayCluster and waits, polling every poll (DefaultPollInterval when
// ≤ 0), until it and its Pods are gone: KubeRay's Pods hold TPU hosts until they end. A RayCluster
// already gone is no error.
func (c *Client) DeleteRayCluster(ctx context.Context, namespace, name string, poll time.Duration) error {
	background := metav1.DeletePropagationBackground
	err := c.dynamic.Resource(rayClusterGVR).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return c.rayClusterError("deleting", namespace, name, err)
	}
	left := -1
	return waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		if _, err := c.GetRayCluster(ctx, namespace, name); !errors.Is(err, ErrRayClusterNotFound) {
			return false, ignoreNotFound(err)
		}
		pods, err := c.core.Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: rayClusterLabel + "=" + name})
		if err != nil {
			return false, c.explain(err)
		}
		left = len(pods.Items)
		return left == 0, nil
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: RayCluster %s/%s: still deleting after %s (%d Pods left)", namespace, name, waited, left)
	})
}

func ignoreNotFound(err error) error {
	if errors.Is(err, ErrRayClusterNotFound) {
		return nil
	}
	return err
}

func (c *Client) rayClusterError(action, namespace, name string, err error) error {
	if apierrors.IsNotFound(err) {
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == RayClusterResource {
			return fmt.Errorf("kube: %s RayCluster %s/%s: %w", action, namespace, name, ErrRayClusterNotFound)
		}
		if errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces" {
			return fmt.Errorf("kube: %s RayCluster %s/%s: namespace %q does not exist", action, namespace, name, namespace)
		}
		// A 404 without the resource's kind: the API server serves no rayclusters at all.
		return fmt.Errorf("kube: %s RayCluster %s/%s: %w (the KubeRay CRDs are not installed: is the Ray Operator add-on enabled?)",
			action, namespace, name, ErrKubeRayNotServed)
	}
	return fmt.Errorf("kube: %s RayCluster %s/%s: %w", action, namespace, name, c.explain(err))
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
	Head bool
	// Group is the worker group; empty for the head.
	Group string
	// Replica names the slice-sized replica the Pod belongs to: KubeRay's replica name for
	// multi-host groups (or the webhook's replicaIndex label), the Pod's name for a single host.
	Replica string
	// HostIndex is the Pod's TPU_WORKER_ID within its replica (-1 when unknown).
	HostIndex int
	Node      string // empty while unscheduled
	NodePool  string // the node's cloud.google.com/gke-nodepool
	NodeReady bool
	Phase     string
	// Running is phase Running, Ready and not being deleted.
	Running bool
	// Unschedulable is the scheduler's message for a Pod it found no node for.
	Unschedulable string
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
		list, err := c.core.Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("kube: listing nodes: %w", c.explain(err))
		}
		for i := range list.Items {
			nodes[list.Items[i].Name] = &list.Items[i]
		}
	}
	out := make([]RayPod, 0, len(pods.Items))
	for i := range pods.Items {
		out = append(out, rayPod(&pods.Items[i], nodes))
	}
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
	return out, nil
}

func rayPod(p *corev1.Pod, nodes map[string]*corev1.Node) RayPod {
	rp := RayPod{
		Name: p.Name, Head: p.Labels[rayNodeTypeLabel] == "head", Group: p.Labels[rayGroupLabel],
		HostIndex: -1, Node: p.Spec.NodeName, Phase: string(p.Status.Phase),
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

// WaitForRayClusterPods lists the RayCluster's Pods every poll (DefaultPollInterval when ≤ 0)
// until done accepts them or ctx ends, and returns the last listing. On timeout the error names
// the Pods not running and, for those the scheduler found no room for, why: the scheduler's
// message and the cluster autoscaler's last event, as `kubectl describe pod` would show them.
func (c *Client) WaitForRayClusterPods(ctx context.Context, namespace, name string, poll time.Duration, done func([]RayPod) bool) ([]RayPod, error) {
	var last []RayPod
	err := waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		pods, err := c.RayClusterPods(ctx, namespace, name)
		if err != nil {
			return false, err
		}
		last = pods
		return done(pods), nil
	}, func(waited time.Duration) string {
		var scaleUp map[string]string
		if unscheduled(last) {
			// ctx has ended: the events are read once, with a moment of their own.
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), autoscalerEventsWait)
			defer cancel()
			scaleUp = c.AutoscalerEvents(ectx, namespace)
		}
		return describePodWait(namespace, name, last, scaleUp, waited)
	})
	return last, err
}
