// Package rayproxy carries HTTP requests to the Ray endpoints of a cluster's RayClusters: each
// RayCluster's dashboard (package raydashboard) and the health of its Serve proxies. The emulated
// Pods run no processes, so nothing listens at their addresses; this package answers for them.
//
// # How requests reach it
// One [Proxy] per cluster listens on 127.0.0.1 and on a Unix socket, as an HTTP forward proxy and
// an HTTP CONNECT proxy:
//   - KubeRay's ray-operator runs with HTTP_PROXY set to it ([Proxy.Env]). It reaches a
//     RayCluster's dashboard at http://<head Service>.<namespace>.svc.cluster.local:<dashboard port>
//     and a head's Serve proxy at http://<Pod IP>:<serve port>/-/healthz, with Go's default HTTP
//     transport (ray-operator v1.5.0, controllers/ray/utils/util.go FetchHeadServiceURL;
//     utils/dashboardclient; utils/httpproxy_httpclient.go), which honours HTTP_PROXY. Loopback
//     addresses (its kube-apiserver) are never proxied, and HTTPS is not (no HTTPS_PROXY).
//   - the kube-apiserver reaches the cluster's network through it as its "cluster" egress
//     (kubeproc.APIServerConfig.EgressSocket: HTTPConnect over the Unix socket, as GKE's control
//     plane reaches nodes and Pods through Konnectivity), so its proxy to Services and Pods
//     (/api/v1/namespaces/N/services/S:P/proxy/..., what `kubectl proxy` uses) reaches a
//     dashboard as on GKE. A CONNECT to a loopback address (the emulator's webhooks, which the
//     kube-apiserver also calls through its cluster egress) is piped to it; one to an address no
//     running Pod has is refused with 502, as a refused dial; otherwise the tunnel's requests are
//     answered as proxied ones are. (Through HTTP_PROXY the kube-apiserver would name its own
//     address, not the Pod's: Go writes the Host header into a proxied request line.)
//
// # What it answers
// A request names a Service by its cluster DNS name, or a Pod by its address. A Service is
// resolved as kube-proxy would: its port to the target port, its selector to a running Pod. The
// Pod must belong to a RayCluster (KubeRay's ray.io/cluster label and its controller
// ownerReference) and be Running; then:
//   - the head's dashboard port (the container port named "dashboard", else 8265, KubeRay's
//     DefaultDashboardPort) is that RayCluster's dashboard: the Serve and Jobs REST APIs of package
//     raydashboard, one dashboard per RayCluster UID, so that a RayCluster created again under the
//     same name starts with no applications and no jobs, as a new Ray cluster does;
//   - the serve port (the container port named "serve", else 8000, DefaultServingPort) of any of
//     its Pods answers GET /-/healthz with 200 and "success" (Ray's HEALTHY_MESSAGE,
//     python/ray/serve/_private/proxy.py) while Serve runs an application: Serve starts its proxies,
//     one per node (proxy_location EveryNode), on the first deploy and stops them on shutdown.
//
// INFERRED: anything else, including a Serve proxy before Serve starts, is answered 502 Bad Gateway
// with what was not there (a real client would see its connection refused); requests to Serve
// applications themselves (not /-/healthz) are answered 404, as the emulator runs no application
// code. A deployment's replicas are placed (raydashboard's Config.Place) by the resources of the
// RayCluster's running Pods, each a Ray node with the CPU (cpu limit, else request, in whole CPUs
// rounded up, as KubeRay's --num-cpus), GPU (nvidia.com/gpu) and TPU (google.com/tpu) its Ray container is
// given (ray-operator v1.5.0 controllers/ray/common/pod.go, addWellKnownAcceleratorResources),
// first fit, each deployment judged alone, and a deployment that does not fit is described in the
// emulator's own words.
//
// # Imports
// rayproxy imports raydashboard, k8s.io/api, apimachinery, client-go and the standard library,
// never package emulator: it is built from a [Config] of functions and clients.
package rayproxy
