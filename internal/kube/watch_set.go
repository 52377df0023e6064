package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// watchSet is a set of client-go informers: each lists once and then watches, and the API server
// keeps a watch open for minutes (the reflector asks for 5 to 10) before it is resumed from where
// it ended. A wait on them therefore costs a handful of requests however long it lasts, and sees a
// change the moment it is made. Every event of any informer of the set, and every failure, wakes
// the waits on it; informers may join the set while it runs (a RayService's RayCluster, once
// KubeRay names it).
type watchSet struct {
	c       *Client
	ctx     context.Context
	cancel  context.CancelFunc
	what    string // what is followed, for messages: "RayCluster default/tpu"
	changed chan struct{}

	mu        sync.Mutex
	informers []cache.SharedIndexInformer
	lastErr   error // the last failed list or watch, nil once one succeeds
	fatal     error // a failure retrying cannot mend: a refused certificate or token, 403
	// abort, when set, reports a failure of what is followed that no wait on it can outlast (a
	// Serve application that failed to deploy): it ends every wait, checked on each change and,
	// with recheck above 0, at least that often (an abort that depends on time).
	abort   func() error
	recheck time.Duration
}

func newWatchSet(ctx context.Context, c *Client, what string) *watchSet {
	ctx, cancel := context.WithCancel(ctx)
	return &watchSet{c: c, ctx: ctx, cancel: cancel, what: what, changed: make(chan struct{}, 1)}
}

// informer starts one informer of the set.
func (s *watchSet) informer(obj runtime.Object, what string, list cache.ListWithContextFunc, watchFunc cache.WatchFuncWithContext) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchFunc}, obj, 0, cache.Indexers{})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		s.failed(what, err)
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.wake() },
		UpdateFunc: func(any, any) { s.wake() },
		DeleteFunc: func(any) { s.wake() },
	})
	s.mu.Lock()
	s.informers = append(s.informers, inf)
	s.mu.Unlock()
	go inf.RunWithContext(s.ctx)
	return inf
}

// listWatch are the list and watch of one kind of object, with the options every request of an
// informer carries (a label or field selector).
func listWatch[L runtime.Object](set func(*metav1.ListOptions), list func(context.Context, metav1.ListOptions) (L, error),
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)) (cache.ListWithContextFunc, cache.WatchFuncWithContext) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			set(&o)
			return list(ctx, o)
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			set(&o)
			return watchFunc(ctx, o)
		}
}

// byName makes an informer's requests select the object named name.
func byName(name string) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
}

func (s *watchSet) wake() {
	s.mu.Lock()
	s.lastErr = nil
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// failed records a failed list or watch. The informer retries with a backoff; a failure that
// retrying cannot mend ends the waits.
func (s *watchSet) failed(what string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	err = fmt.Errorf("kube: following %s of %s: %w", what, s.what, s.c.explain(err))
	s.mu.Lock()
	s.lastErr = err
	if !retryable(err) && !isExpired(err) {
		s.fatal = err
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Close stops the informers.
func (s *watchSet) Close() { s.cancel() }

func (s *watchSet) synced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, inf := range s.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// until returns nil once the informers have synced and done is true, checking on every change
// (and every recheck); a fatal failure, or the abort's, is returned at once. When ctx ends the error is describe(how long it
// waited), with the last failure if there was one, wrapping ctx's error.
func (s *watchSet) until(ctx context.Context, done func() bool, describe func(waited time.Duration) string) error {
	start := time.Now()
	s.mu.Lock()
	recheck := s.recheck
	s.mu.Unlock()
	var tick <-chan time.Time
	if recheck > 0 {
		t := time.NewTicker(recheck)
		defer t.Stop()
		tick = t.C
	}
	for {
		s.mu.Lock()
		fatal, lastErr, abort := s.fatal, s.lastErr, s.abort
		s.mu.Unlock()
		if fatal != nil {
			return fatal
		}
		synced := s.synced()
		if synced && abort != nil {
			if err := abort(); err != nil {
				return err
			}
		}
		if synced && done() {
			return nil
		}
		select {
		case <-ctx.Done():
			return waitError(ctx.Err(), describe(roundWait(time.Since(start))), lastErr)
		case <-s.changed:
		case <-tick:
		}
	}
}

// stored is the object an informer of one object (by name) holds, read with from; nil while it
// holds none.
func stored[T any](inf cache.SharedIndexInformer, from func(*unstructured.Unstructured) (*T, error)) *T {
	for _, o := range inf.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			if obj, err := from(u); err == nil {
				return obj
			}
		}
	}
	return nil
}
