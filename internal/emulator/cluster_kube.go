package emulator

import (
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/clusterkube"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rayproxy"
)

// clusterKube is a cluster's Kubernetes side: its running kube-apiserver and the clients of it,
// the proxy to its Ray endpoints, its RayClusters' dashboards and its runtime (package
// clusterkube). It holds nothing of GKE's state and has its own lock, which is never taken while
// the emulator's is held: what the GKE side needs of it, it reads first or after.
type clusterKube struct {
	mu  sync.Mutex
	api *kubeproc.APIServer
	// rayProxy carries the running kube-apiserver's and ray-operator's requests to the cluster's
	// Ray endpoints; rayDash, its RayClusters' dashboards, outlives kube-apiserver restarts.
	rayProxy *rayproxy.Proxy
	rayDash  *rayproxy.Dashboards
	// dnsSNI says whether the running kube-apiserver serves the DNS endpoint's certificate.
	dnsSNI  bool
	pki     *kubeproc.PKI
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	runtime *clusterkube.Runtime
}

// runningAPI is a started kube-apiserver with what comes with it.
type runningAPI struct {
	api      *kubeproc.APIServer
	pki      *kubeproc.PKI
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	dnsSNI   bool
	rayProxy *rayproxy.Proxy
}

// attach records a kube-apiserver that has started.
func (k *clusterKube) attach(r runningAPI) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.api, k.pki, k.kube, k.dyn, k.dnsSNI, k.rayProxy = r.api, r.pki, r.kube, r.dyn, r.dnsSNI, r.rayProxy
}

// detach forgets the running kube-apiserver and returns it and its proxy, for the caller to stop.
func (k *clusterKube) detach() (*kubeproc.APIServer, *rayproxy.Proxy) {
	k.mu.Lock()
	defer k.mu.Unlock()
	api, proxy := k.api, k.rayProxy
	k.api, k.kube, k.dyn, k.rayProxy = nil, nil, nil, nil
	return api, proxy
}

// serving says whether a kube-apiserver runs, and whether it serves the DNS endpoint.
func (k *clusterKube) serving() (running, dns bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.api != nil, k.dnsSNI
}

// dashboards are the cluster's RayClusters' dashboards, made by newDashboards the first time.
func (k *clusterKube) dashboards(newDashboards func() *rayproxy.Dashboards) *rayproxy.Dashboards {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.rayDash == nil {
		k.rayDash = newDashboards()
	}
	return k.rayDash
}

// clients are the running kube-apiserver's clients, nil while none runs.
func (k *clusterKube) clients() (kubernetes.Interface, dynamic.Interface) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.kube, k.dyn
}

// forRuntime is what a runtime is built from, with armed true when one runs already.
func (k *clusterKube) forRuntime() (armed bool, r runningAPI) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.runtime != nil, runningAPI{api: k.api, pki: k.pki, kube: k.kube, dyn: k.dyn, dnsSNI: k.dnsSNI, rayProxy: k.rayProxy}
}

// keepRuntime records r as the runtime of the kube-apiserver whose client is kube, unless another
// runtime came first or that kube-apiserver is gone; it says whether r was kept.
func (k *clusterKube) keepRuntime(r *clusterkube.Runtime, kube kubernetes.Interface) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.runtime != nil || k.kube != kube {
		return false
	}
	k.runtime = r
	return true
}

// currentRuntime is the runtime, nil while the kube-apiserver is not running.
func (k *clusterKube) currentRuntime() *clusterkube.Runtime {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.runtime
}

// takeRuntime forgets the runtime and returns it, for the caller to stop.
func (k *clusterKube) takeRuntime() *clusterkube.Runtime {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.runtime
	k.runtime = nil
	return r
}
