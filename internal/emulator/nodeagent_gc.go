package emulator

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// The garbage collector's part for what KubeRay owns. On GKE, kube-controller-manager's garbage
// collector deletes the dependents of a deleted owner (ownerReferences, "Garbage Collection",
// kubernetes.io/docs/concepts/architecture/garbage-collection/); KubeRay relies on it to remove a
// RayCluster's Pods and Services, and a RayJob's or RayService's RayClusters. The emulator runs
// no kube-controller-manager, so the node agent does this much: when such an owner is gone (its
// UID no longer exists), its Pods, Services and RayClusters are deleted in the background
// propagation mode. As the garbage collector does, it confirms an owner's absence with a live
// read before deleting, so that an owner its cache has not seen yet keeps its dependents.
// Other owners and kinds (batch Jobs of a RayJob, which no Job controller runs here) are left.

// gcSweepEvery is the period of the sweep that catches dependents created after their owner's
// deletion was seen.
const gcSweepEvery = 30 * time.Second

var rayOwnerKinds = map[string]schema.GroupVersionResource{
	"RayCluster": rayGVRs[0],
	"RayJob":     rayGVRs[1],
	"RayService": rayGVRs[2],
}

// rayGC keeps caches of the Ray objects and sweeps their dependents.
type rayGC struct {
	a       *nodeAgent
	dyn     dynamic.Interface
	owners  map[string]cache.SharedIndexInformer // by kind
	kick    chan struct{}
	factory dynamicinformer.DynamicSharedInformerFactory
}

func newRayGC(a *nodeAgent, dyn dynamic.Interface) *rayGC {
	g := &rayGC{a: a, dyn: dyn, owners: map[string]cache.SharedIndexInformer{}, kick: make(chan struct{}, 1)}
	g.factory = dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	for kind, gvr := range rayOwnerKinds {
		inf := g.factory.ForResource(gvr).Informer()
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { g.trigger() }})
		g.owners[kind] = inf
	}
	return g
}

func (g *rayGC) trigger() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (g *rayGC) run(ctx context.Context) {
	g.factory.Start(ctx.Done())
	// Shutdown waits for the informers, which end with ctx.
	defer g.factory.Shutdown()
	for _, inf := range g.owners {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return
		}
	}
	for {
		g.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-g.kick:
			sleepCtx(ctx, 200*time.Millisecond)
		case <-time.After(gcSweepEvery):
		}
	}
}

// known says whether an object of kind with uid exists (cache first, then a live read).
func (g *rayGC) known(ctx context.Context, namespace string, ref metav1.OwnerReference) bool {
	inf := g.owners[ref.Kind]
	for _, obj := range inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GetUID() == ref.UID {
			return true
		}
	}
	u, err := g.dyn.Resource(rayOwnerKinds[ref.Kind]).Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return !apierrors.IsNotFound(err) // on other errors, keep the dependent
	}
	return u.GetUID() == ref.UID
}

// orphaned says whether every Ray owner of an object is gone (an object with other owners, or
// none, is not the emulator's to collect).
func (g *rayGC) orphaned(ctx context.Context, namespace string, refs []metav1.OwnerReference) bool {
	owned := false
	for _, ref := range refs {
		gvr, ok := rayOwnerKinds[ref.Kind]
		if !ok || ref.APIVersion != gvr.Group+"/"+gvr.Version {
			return false
		}
		owned = true
		if g.known(ctx, namespace, ref) {
			return false
		}
	}
	return owned
}

func (g *rayGC) sweep(ctx context.Context) {
	background := metav1.DeletePropagationBackground
	del := func(uid types.UID) metav1.DeleteOptions {
		return metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid}}
	}
	for _, obj := range g.a.pods.GetStore().List() {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.DeletionTimestamp != nil || len(p.OwnerReferences) == 0 {
			continue
		}
		if g.orphaned(ctx, p.Namespace, p.OwnerReferences) {
			_ = ignoreNotFound(g.a.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, del(p.UID)))
		}
	}
	svcs, err := g.a.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{LabelSelector: rayClusterLabel})
	if err == nil {
		for _, s := range svcs.Items {
			if s.DeletionTimestamp == nil && g.orphaned(ctx, s.Namespace, s.OwnerReferences) {
				_ = ignoreNotFound(g.a.kube.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, del(s.UID)))
			}
		}
	}
	for _, obj := range g.owners["RayCluster"].GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetDeletionTimestamp() != nil || len(u.GetOwnerReferences()) == 0 {
			continue
		}
		if g.orphaned(ctx, u.GetNamespace(), u.GetOwnerReferences()) {
			_ = ignoreNotFound(g.dyn.Resource(rayGVRs[0]).Namespace(u.GetNamespace()).Delete(ctx, u.GetName(), del(u.GetUID())))
		}
	}
}
