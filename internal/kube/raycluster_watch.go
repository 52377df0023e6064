package kube

import (
	"context"
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// RayClusterWatch follows one RayCluster, its Pods and the TPU nodes they may run on through
// informers (watch_set.go): a wait on it costs a handful of requests however long it lasts, and
// sees a Pod start the moment it does, where listing the Pods and every Node each poll cost two
// requests a poll.
//
// Waits on one watch may follow each other (an apply waits for its Pods, then for KubeRay's
// state); Close ends it.
type RayClusterWatch struct {
	*watchSet
	namespace, name string
	cluster         cache.SharedIndexInformer
	pods            cache.SharedIndexInformer
	nodes           cache.SharedIndexInformer

	// headNodes are the CPU nodes the head ran on, read once each (the informer has TPU nodes);
	// under the set's mu.
	headNodes map[string]*corev1.Node
}

// WatchRayCluster starts following the RayCluster namespace/name (which need not exist yet), its
// Pods and the cluster's TPU nodes, until Close or the end of ctx.
func (c *Client) WatchRayCluster(ctx context.Context, namespace, name string) *RayClusterWatch {
	return followRayCluster(newWatchSet(ctx, c, fmt.Sprintf("RayCluster %s/%s", namespace, name)), namespace, name)
}

// followRayCluster adds the informers of the RayCluster namespace/name to set.
func followRayCluster(set *watchSet, namespace, name string) *RayClusterWatch {
	c := set.c
	w := &RayClusterWatch{watchSet: set, namespace: namespace, name: name}
	ofCluster := func(o *metav1.ListOptions) { o.LabelSelector = rayClusterLabel + "=" + name }
	// Only TPU nodes: workers run on nothing else, and a cluster's CPU nodes may be many.
	tpuNodes := func(o *metav1.ListOptions) { o.LabelSelector = tpu.LabelAccelerator }
	list, watchFunc := listWatch(byName(name), c.dynamic.Resource(rayClusterGVR).Namespace(namespace).List,
		c.dynamicWatch.Resource(rayClusterGVR).Namespace(namespace).Watch)
	w.cluster = set.informer(&unstructured.Unstructured{}, "the RayCluster", list, watchFunc)
	list, watchFunc = listWatch(ofCluster, c.core.Pods(namespace).List, c.coreWatch.Pods(namespace).Watch)
	w.pods = set.informer(&corev1.Pod{}, "its Pods", list, watchFunc)
	list, watchFunc = listWatch(tpuNodes, c.core.Nodes().List, c.coreWatch.Nodes().Watch)
	w.nodes = set.informer(&corev1.Node{}, "the TPU nodes", list, watchFunc)
	return w
}

// Name is the RayCluster's name.
func (w *RayClusterWatch) Name() string { return w.name }

// Pods are the RayCluster's Pods as last seen, in the order RayClusterPods gives.
func (w *RayClusterWatch) Pods() []RayPod {
	nodes := map[string]*corev1.Node{}
	for _, o := range w.nodes.GetStore().List() {
		if n, ok := o.(*corev1.Node); ok {
			nodes[n.Name] = n
		}
	}
	var out []RayPod
	for _, o := range w.pods.GetStore().List() {
		if p, ok := o.(*corev1.Pod); ok {
			if n := p.Spec.NodeName; n != "" && nodes[n] == nil && p.Labels[rayNodeTypeLabel] == "head" {
				nodes[n] = w.headNode(n)
			}
			out = append(out, rayPod(p, nodes))
		}
	}
	sortRayPods(out)
	return out
}

// headNode reads the head's node the first time it is asked for (nil while it cannot be read).
func (w *RayClusterWatch) headNode(name string) *corev1.Node {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n, seen := w.headNodes[name]; seen {
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	n, err := w.c.core.Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil // asked again on the next change
	}
	if w.headNodes == nil {
		w.headNodes = map[string]*corev1.Node{}
	}
	w.headNodes[name] = n
	return n
}

// RayCluster is the RayCluster as last seen; nil while it does not exist.
func (w *RayClusterWatch) RayCluster() *rayv1.RayCluster {
	return stored(w.cluster, fromUnstructured)
}

// WaitForPods waits until done accepts the RayCluster's Pods or ctx ends, and returns the last
// Pods seen. On timeout the error names the Pods not running and, for those the scheduler found
// no room for, why: the scheduler's message and the cluster autoscaler's last event, as
// `kubectl describe pod` would show them.
func (w *RayClusterWatch) WaitForPods(ctx context.Context, done func([]RayPod) bool) ([]RayPod, error) {
	var last []RayPod
	err := w.until(ctx, func() bool {
		last = w.Pods()
		return done(last)
	}, func(waited time.Duration) string {
		// What the error says is what there is as ctx ends, not as it last woke the wait: from the
		// watch, or, when ctx ended before its first listing (a loaded API server), from a listing
		// of its own.
		if w.pods.HasSynced() && w.nodes.HasSynced() {
			last = w.Pods()
		} else {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), autoscalerEventsWait)
			if pods, err := w.c.RayClusterPods(lctx, w.namespace, w.name); err == nil {
				last = pods
			}
			cancel()
		}
		var scaleUp map[string]string
		if unscheduled(last) {
			// ctx has ended: the events are read once, with a moment of their own.
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), autoscalerEventsWait)
			defer cancel()
			scaleUp = w.c.AutoscalerEvents(ectx, w.namespace)
		}
		return describePodWait(w.namespace, w.name, last, scaleUp, waited)
	})
	return last, err
}

// WaitForState waits until KubeRay reports state (such as rayv1.Ready) and returns the RayCluster
// last seen: KubeRay writes its status a moment after the Pods it counts are Running. ctx bounds
// the wait; its end returns the last one seen with no error.
func (w *RayClusterWatch) WaitForState(ctx context.Context, state rayv1.ClusterState) (*rayv1.RayCluster, error) {
	var last *rayv1.RayCluster
	err := w.until(ctx, func() bool {
		last = w.RayCluster()
		return last != nil && last.Status.State == state //nolint:staticcheck // State is deprecated for Conditions, still set by KubeRay v1.5
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: RayCluster %s/%s not %s after waiting %s", w.namespace, w.name, state, waited)
	})
	if last != nil && ctx.Err() != nil {
		return last, nil //nolint:nilerr // the end of ctx ends the wait, as documented, not in failure
	}
	return last, err
}

// WaitForGone waits until the RayCluster and all its Pods are gone.
func (w *RayClusterWatch) WaitForGone(ctx context.Context) error {
	left := -1
	return w.until(ctx, func() bool {
		left = len(w.pods.GetStore().List())
		return w.RayCluster() == nil && left == 0
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: RayCluster %s/%s: still deleting after %s (%d Pods left)", w.namespace, w.name, waited, left)
	})
}

// WaitForRayClusterPods follows the RayCluster's Pods until done accepts them or ctx ends, as
// RayClusterWatch.WaitForPods does on a watch of its own.
func (c *Client) WaitForRayClusterPods(ctx context.Context, namespace, name string, done func([]RayPod) bool) ([]RayPod, error) {
	w := c.WatchRayCluster(ctx, namespace, name)
	defer w.Close()
	return w.WaitForPods(ctx, done)
}
