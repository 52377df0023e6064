package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// Before maintenance of a node pool, GKE's documentation has its nodes cordoned and then drained,
// node after node: `kubectl cordon` each node of the pool (selected by cloud.google.com/gke-nodepool),
// then `kubectl drain --force --ignore-daemonsets --delete-emptydir-data --grace-period=...`
// (GKE, "Migrate workloads to different machine types"). These functions do the same for the
// hosts of one slice, with kubectl's rules (k8s.io/kubectl/pkg/drain, filters.go): mirror Pods and
// DaemonSet Pods stay, Pods that have finished are deleted, the others are evicted through the
// Eviction API, which honours PodDisruptionBudgets; a Pod no controller manages would not come
// back, so it is evicted only when the caller forces it, as kubectl's --force does.

// mirrorPodAnnotation marks the API server's copy of a static Pod (corev1.MirrorPodAnnotationKey).
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// PodRef names one Pod.
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// Drain is what a drain of a slice's hosts finds on them.
type Drain struct {
	// Evict are the Pods to evict, with controllers that recreate them elsewhere.
	Evict []PodRef
	// Unmanaged are the Pods no controller manages: evicted, they are gone for good.
	Unmanaged []PodRef
	// Finished are the Pods that have succeeded or failed: deleted without eviction.
	Finished []PodRef
}

// SetSliceSchedulable marks every node of nodePool unschedulable (cordon) or schedulable again
// (uncordon), as kubectl cordon and uncordon do (Node spec.unschedulable), and returns the nodes
// it changed, in worker order; nodes already so are left alone.
func (c *Client) SetSliceSchedulable(ctx context.Context, nodePool string, schedulable bool) ([]string, error) {
	hosts, err := c.SliceHosts(ctx, nodePool)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return c.setNodesSchedulable(ctx, names, schedulable)
}

// UncordonNodes marks the named nodes schedulable again: what a drain that cordoned them and then
// gave up hands back.
func (c *Client) UncordonNodes(ctx context.Context, nodes []string) error {
	_, err := c.setNodesSchedulable(ctx, nodes, true)
	return err
}

func (c *Client) setNodesSchedulable(ctx context.Context, nodes []string, schedulable bool) ([]string, error) {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": !schedulable}})
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, name := range nodes {
		node, err := c.core.Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return changed, fmt.Errorf("kube: reading node %s: %w", name, c.explain(err))
		}
		if node.Spec.Unschedulable == !schedulable {
			continue
		}
		if _, err := c.core.Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return changed, fmt.Errorf("kube: marking node %s %s: %w", name, schedulability(schedulable), c.explain(err))
		}
		changed = append(changed, name)
	}
	return changed, nil
}

func schedulability(schedulable bool) string {
	if schedulable {
		return "schedulable"
	}
	return "unschedulable"
}

// CordonForDrain cordons every host of nodePool, then lists the Pods on them, sorted, as a drain
// treats them; it returns the hosts it cordoned (those already cordoned are left alone) and the
// Pods. The order is kubectl drain's (RunDrain: RunCordonOrUncordon on every node, then
// GetPodsForDeletion), so that the list is final: a Pod the scheduler placed between a list and a
// later cordon would stay on the slice, missed by the evictions.
func (c *Client) CordonForDrain(ctx context.Context, nodePool string) ([]string, Drain, error) {
	cordoned, err := c.SetSliceSchedulable(ctx, nodePool, false)
	if err != nil {
		return cordoned, Drain{}, err
	}
	d, err := c.podsToDrain(ctx, nodePool)
	return cordoned, d, err
}

// podsToDrain lists the Pods on the hosts of nodePool, sorted, as a drain treats them.
func (c *Client) podsToDrain(ctx context.Context, nodePool string) (Drain, error) {
	hosts, err := c.SliceHosts(ctx, nodePool)
	if err != nil {
		return Drain{}, err
	}
	var d Drain
	for _, h := range hosts {
		pods, err := c.core.Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", h.Name).String()})
		if err != nil {
			return Drain{}, fmt.Errorf("kube: listing the Pods on node %s: %w", h.Name, c.explain(err))
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			ref := PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
			controller := metav1.GetControllerOf(p)
			switch {
			case p.Annotations[mirrorPodAnnotation] != "", controller != nil && controller.Kind == "DaemonSet":
			case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
				d.Finished = append(d.Finished, ref)
			case controller == nil:
				d.Unmanaged = append(d.Unmanaged, ref)
			default:
				d.Evict = append(d.Evict, ref)
			}
		}
	}
	for _, refs := range [][]PodRef{d.Evict, d.Unmanaged, d.Finished} {
		sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	}
	return d, nil
}

// EvictPods evicts pods, deletes finished ones, and waits until all of them are gone: deleted, or
// replaced by another Pod of the same name. An eviction a PodDisruptionBudget refuses for now
// (429 Too Many Requests) is asked again every poll until ctx ends, as kubectl drain does.
func (c *Client) EvictPods(ctx context.Context, pods, finished []PodRef, poll time.Duration) error {
	for _, p := range finished {
		err := c.core.Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("kube: deleting the finished Pod %s: %w", p, c.explain(err))
		}
	}
	pending := map[PodRef]bool{}
	for _, p := range pods {
		pending[p] = true
	}
	gone := func(ctx context.Context, p PodRef) (bool, error) {
		pod, err := c.core.Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && pod.UID != p.UID) {
			return true, nil
		}
		return false, err
	}
	all := append(append([]PodRef(nil), pods...), finished...)
	return waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		for p := range pending {
			err := c.core.Pods(p.Namespace).EvictV1(ctx, &policyv1.Eviction{
				ObjectMeta:    metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}},
			})
			switch {
			case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
				delete(pending, p) // evicted, or already gone or replaced
			case apierrors.IsTooManyRequests(err):
				// A disruption budget says not now.
			default:
				return false, fmt.Errorf("kube: evicting Pod %s: %w", p, c.explain(err))
			}
		}
		if len(pending) > 0 {
			return false, nil
		}
		for _, p := range all {
			if done, err := gone(ctx, p); err != nil || !done {
				return false, err
			}
		}
		return true, nil
	}, func(waited time.Duration) string {
		var left []string
		for p := range pending {
			left = append(left, p.String())
		}
		sort.Strings(left)
		if len(left) > 0 {
			return fmt.Sprintf("kube: after %s, a PodDisruptionBudget still refuses the eviction of %s", waited, strings.Join(left, ", "))
		}
		return fmt.Sprintf("kube: after %s, evicted Pods are still terminating", waited)
	})
}
