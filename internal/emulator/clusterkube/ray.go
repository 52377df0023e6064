package clusterkube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// The Ray Operator add-on's part of a cluster's runtime (runtime.go), armed once the add-on's
// CRDs are Established: on the first RayCluster, RayJob or RayService, KubeRay's ray-operator (the
// version in go.mod, built by `make tools`), run outside the cluster with a kubeconfig and
// --enable-leader-election=false, the way KubeRay's Makefile runs it locally
// (ray-operator@v1.5.0 Makefile:120), metrics and health probes off so that several run side by
// side. Feature gate RayMultiHostIndexing=true: KubeRay then creates and deletes a multi-host
// replica's Pods together and labels them with their replica and host index, which GKE's TPU
// webhook reads ("In KubeRay v1.5, Pod indexing is performed by RayCluster controller",
// WH:797-799); the gate is Alpha and off by default in v1.5.0 (pkg/features/features.go:49) and
// Beta and on in v1.6.0. Which gates GKE's add-on sets is not published.
//
// KubeRay reaches each RayCluster's dashboard at http://<head Service>.<namespace>.svc.cluster.local:8265
// and each head's Serve proxy at http://<Pod IP>:8000 with Go's default transport (ray-operator
// v1.5.0, controllers/ray/utils/util.go FetchHeadServiceURL, dashboardclient,
// httpproxy_httpclient.go), which honours HTTP_PROXY: the operator runs with Config.RayProxyEnv,
// which points it at the cluster's proxy to its Ray endpoints (package rayproxy).
//
// The TPU webhook (the emulator's webhook_tpu.go) is registered with the KubeRay CRDs. The
// operator stops when the add-on is disabled; the rest of the runtime goes on running the
// cluster's other workloads.

// rayOperatorFeatureGates are the ray-operator feature gates the emulator runs with.
const rayOperatorFeatureGates = "RayMultiHostIndexing=true"

var rayGVRs = []schema.GroupVersionResource{
	{Group: "ray.io", Version: "v1", Resource: "rayclusters"},
	{Group: "ray.io", Version: "v1", Resource: "rayjobs"},
	{Group: "ray.io", Version: "v1", Resource: "rayservices"},
}

func crLister(dyn dynamic.Interface, gvr schema.GroupVersionResource) lister {
	api := dyn.Resource(gvr)
	return lister{
		name: gvr.Resource,
		list: func(ctx context.Context) (bool, string, error) {
			l, err := api.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return false, "", err
			}
			return len(l.Items) > 0, l.GetResourceVersion(), nil
		},
		watch: func(ctx context.Context, rv string) (watch.Interface, error) {
			return api.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		},
	}
}

// ArmRay starts the add-on's part: ray-operator on the first Ray object. It does nothing when it
// is armed already or the runtime has stopped.
func (r *Runtime) ArmRay() {
	r.mu.Lock()
	if r.ray != nil || r.ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	r.ray, r.rayDone = cancel, done
	// Added under mu, before Stop can wait on wg.
	r.wg.Add(1)
	r.mu.Unlock()
	var listers []lister
	for _, gvr := range rayGVRs {
		listers = append(listers, crLister(r.cfg.Dyn, gvr))
	}
	go func() {
		defer r.wg.Done()
		defer close(done)
		if r.awaitAny(ctx, listers) {
			if stopped := r.startOperator(ctx); stopped != nil {
				<-stopped
			}
		}
	}()
}

// DisarmRay stops the add-on's part and waits for it.
func (r *Runtime) DisarmRay() {
	r.mu.Lock()
	cancel, done := r.ray, r.rayDone
	r.ray, r.rayDone = nil, nil
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// RayArmed says whether the add-on's part waits for Ray objects or runs ray-operator.
func (r *Runtime) RayArmed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ray != nil
}

// startOperator starts KubeRay's operator, supervised until ctx ends; the channel it returns
// closes once the operator has stopped (nil when it could not start).
func (r *Runtime) startOperator(ctx context.Context) <-chan struct{} {
	kubeconfig, err := r.kubeconfig()
	if err != nil {
		r.logf("cluster %s: %v", r.cfg.Name, err)
		return nil
	}
	return r.supervise(ctx, ComponentRayOperator, r.cfg.Bins.RayOperator, []string{
		"--kubeconfig=" + kubeconfig,
		"--enable-leader-election=false",
		"--metrics-addr=0",
		"--health-probe-bind-address=0",
		"--feature-gates=" + rayOperatorFeatureGates,
		"--log-stdout-encoder=console",
	}, r.cfg.RayProxyEnv)
}
