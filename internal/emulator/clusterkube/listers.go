package clusterkube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// lister lists one kind of object, returning whether one that counts exists and the list's
// resourceVersion, and watches it from there; counts says which objects and watch events count
// (nil: any object, and Added events).
type lister struct {
	name   string
	list   func(ctx context.Context) (bool, string, error)
	watch  func(ctx context.Context, rv string) (watch.Interface, error)
	counts func(watch.Event) bool
}

// typedLister is a lister over a typed client's List and Watch. With counts, only the objects it
// accepts count, and the first List is read whole so that each can be judged.
func typedLister[L runtime.Object](name string, list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), counts func(runtime.Object) bool) lister {
	l := lister{name: name, watch: func(ctx context.Context, rv string) (watch.Interface, error) {
		return watchFn(ctx, metav1.ListOptions{ResourceVersion: rv})
	}}
	l.list = func(ctx context.Context) (bool, string, error) {
		opts := metav1.ListOptions{Limit: 1}
		if counts != nil {
			opts.Limit = 0
		}
		got, err := list(ctx, opts)
		if err != nil {
			return false, "", err
		}
		m, err := meta.ListAccessor(got)
		if err != nil {
			return false, "", err
		}
		items, err := meta.ExtractList(got)
		if err != nil {
			return false, "", err
		}
		for _, o := range items {
			if counts == nil || counts(o) {
				return true, m.GetResourceVersion(), nil
			}
		}
		return false, m.GetResourceVersion(), nil
	}
	if counts != nil {
		l.counts = func(ev watch.Event) bool {
			return (ev.Type == watch.Added || ev.Type == watch.Modified) && counts(ev.Object)
		}
	}
	return l
}

// workloadListers are the objects whose first one starts a cluster's workloads: Pods, the
// workload controllers' objects, and a Namespace being deleted (the namespace controller's work).
func workloadListers(kube kubernetes.Interface) []lister {
	apps, batch, core := kube.AppsV1(), kube.BatchV1(), kube.CoreV1()
	deleting := func(o runtime.Object) bool { ns, ok := o.(*corev1.Namespace); return ok && ns.DeletionTimestamp != nil }
	return []lister{
		typedLister("pods", core.Pods("").List, core.Pods("").Watch, nil),
		typedLister("deployments", apps.Deployments("").List, apps.Deployments("").Watch, nil),
		typedLister("replicasets", apps.ReplicaSets("").List, apps.ReplicaSets("").Watch, nil),
		typedLister("statefulsets", apps.StatefulSets("").List, apps.StatefulSets("").Watch, nil),
		typedLister("daemonsets", apps.DaemonSets("").List, apps.DaemonSets("").Watch, nil),
		typedLister("jobs", batch.Jobs("").List, batch.Jobs("").Watch, nil),
		typedLister("cronjobs", batch.CronJobs("").List, batch.CronJobs("").Watch, nil),
		typedLister("namespaces being deleted", core.Namespaces().List, core.Namespaces().Watch, deleting),
	}
}

// awaitFirst waits, with one watch, until an object of l's kind that counts exists; false when
// ctx ends.
func (r *Runtime) awaitFirst(ctx context.Context, l lister) bool {
	counts := l.counts
	if counts == nil {
		counts = func(ev watch.Event) bool { return ev.Type == watch.Added }
	}
	for ctx.Err() == nil {
		found, rv, err := l.list(ctx)
		if found {
			return true
		}
		var w watch.Interface
		if err == nil {
			w, err = l.watch(ctx, rv)
		}
		if err != nil {
			if ctx.Err() == nil {
				r.logf("cluster %s: watching %s: %v (retrying)", r.cfg.Name, l.name, err)
			}
			pauseBeforeRetry(ctx)
			continue
		}
		if watchFor(ctx, w, counts) {
			return true
		}
	}
	return false
}

// watchFor reads w until an event counts (true) or the watch ends or fails (false), and stops it.
// It stops w when ctx ends too, for watches that do not end with their context (client-go's
// fakes).
func watchFor(ctx context.Context, w watch.Interface, counts func(watch.Event) bool) bool {
	defer w.Stop()
	defer context.AfterFunc(ctx, w.Stop)()
	for ev := range w.ResultChan() {
		if counts(ev) {
			return true
		}
		if ev.Type == watch.Error {
			return false
		}
	}
	return false
}

// awaitAny waits until an object of one of listers' kinds exists; false when ctx ends.
func (r *Runtime) awaitAny(ctx context.Context, listers []lister) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	found := make(chan bool, len(listers))
	for _, l := range listers {
		go func() { found <- r.awaitFirst(ctx, l) }()
	}
	for range listers {
		if <-found {
			return true
		}
	}
	return false
}
