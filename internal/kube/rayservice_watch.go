package kube

import (
	"context"
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// RayServiceWatch follows one RayService through an informer and, once KubeRay names the RayCluster
// it brings up for it, that RayCluster, its Pods and the TPU nodes (FollowRayCluster), all in one
// set: a wait on the Pods ends as soon as the RayService fails, and a wait on the RayService sees
// its Pods.
type RayServiceWatch struct {
	*watchSet
	namespace, name string
	service         cache.SharedIndexInformer

	// observedAt is when the status was first seen to have observed generation observedGen; under
	// the set's mu.
	observedGen int64
	observedAt  time.Time
}

// serveRecheck is how often the waits on a RayService look again when nothing changes: a deploy
// failure counts only once ServeWant.Settle has passed.
const serveRecheck = time.Second

// WatchRayService starts following the RayService namespace/name (which need not exist yet), until
// Close or the end of ctx.
func (c *Client) WatchRayService(ctx context.Context, namespace, name string) *RayServiceWatch {
	w := &RayServiceWatch{watchSet: newWatchSet(ctx, c, fmt.Sprintf("RayService %s/%s", namespace, name)), namespace: namespace, name: name}
	w.recheck = serveRecheck
	list, watchFunc := listWatch(byName(name), c.dynamic.Resource(rayServiceGVR).Namespace(namespace).List,
		c.dynamicWatch.Resource(rayServiceGVR).Namespace(namespace).Watch)
	w.service = w.informer(&unstructured.Unstructured{}, "the RayService", list, watchFunc)
	return w
}

// RayService is the RayService as last seen; nil while it does not exist.
func (w *RayServiceWatch) RayService() *rayv1.RayService {
	return stored(w.service, rayServiceFrom)
}

// progress judges the RayService as last seen against want (ServeProgress).
func (w *RayServiceWatch) progress(want ServeWant) (*rayv1.RayService, bool, error) {
	rs := w.RayService()
	var observed time.Duration
	if rs != nil && rs.Status.ObservedGeneration >= want.Generation {
		w.mu.Lock()
		if w.observedGen != want.Generation || w.observedAt.IsZero() {
			w.observedGen, w.observedAt = want.Generation, time.Now()
		}
		observed = time.Since(w.observedAt)
		w.mu.Unlock()
	}
	done, failure := ServeProgress(rs, want, observed)
	return rs, done, failure
}

// FollowRayCluster waits until KubeRay names the RayCluster of the RayService at want.Generation
// (the one it brings up, or, with none pending, the one it serves from) and returns a watch of
// it in the same set. From then on every wait of the set, on the RayCluster's Pods too, ends at
// once with the RayService's failure (ServeProgress).
func (w *RayServiceWatch) FollowRayCluster(ctx context.Context, want ServeWant) (*RayClusterWatch, error) {
	w.abortOnFailure(want)
	var name string
	err := w.until(ctx, func() bool {
		rs := w.RayService()
		if rs == nil || rs.Status.ObservedGeneration < want.Generation {
			return false
		}
		name = rs.Status.PendingServiceStatus.RayClusterName
		if name == "" {
			name = rs.Status.ActiveServiceStatus.RayClusterName
		}
		return name != ""
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: KubeRay named no RayCluster for RayService %s/%s after waiting %s (is KubeRay's operator running?): %s",
			w.namespace, w.name, waited, DescribeServe(w.RayService(), want))
	})
	if err != nil {
		return nil, err
	}
	return followRayCluster(w.watchSet, w.namespace, name), nil
}

// WaitForServing waits until the RayService serves as want says and returns it as last seen; a
// failure waiting cannot mend ends the wait at once (ServeProgress). On timeout the error says
// where the RayService stands (DescribeServe).
func (w *RayServiceWatch) WaitForServing(ctx context.Context, want ServeWant) (*rayv1.RayService, error) {
	w.abortOnFailure(want)
	var last *rayv1.RayService
	err := w.until(ctx, func() bool {
		rs, done, _ := w.progress(want)
		last = rs
		return done
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: RayService %s/%s not serving after waiting %s: %s", w.namespace, w.name, waited, DescribeServe(w.RayService(), want))
	})
	if err != nil {
		return w.RayService(), err
	}
	return last, nil
}

// abortOnFailure ends every wait of the set with the RayService's failure (ServeProgress).
func (w *RayServiceWatch) abortOnFailure(want ServeWant) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.abort = func() error {
		_, _, failure := w.progress(want)
		return failure
	}
}

// WaitForGone waits until the RayService is gone.
func (w *RayServiceWatch) WaitForGone(ctx context.Context) error {
	return w.until(ctx, func() bool { return w.RayService() == nil }, func(waited time.Duration) string {
		return fmt.Sprintf("kube: RayService %s/%s: still deleting after %s", w.namespace, w.name, waited)
	})
}
