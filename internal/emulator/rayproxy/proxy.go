package rayproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/raydashboard"
)

// Config is what a Proxy is built from.
type Config struct {
	// Kube is the cluster's client, nil while its kube-apiserver is not running.
	Kube func() kubernetes.Interface
	// Dashboards holds the cluster's dashboards; it outlives a Proxy, which ends with the
	// kube-apiserver that was started with its address.
	Dashboards *Dashboards
}

// Proxy is one cluster's HTTP proxy to its Ray endpoints.
type Proxy struct {
	cfg       Config
	ln        net.Listener
	socketDir string // holds the Unix socket the kube-apiserver's egress connects to
	srv       *http.Server

	mu      sync.Mutex
	tunnels map[net.Conn]bool // hijacked CONNECT tunnels, closed with the proxy
	closed  bool
}

// Start listens on a free loopback port and on a Unix socket, and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// A short folder of its own: a socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "raytpu-egress-")
	if err != nil {
		ln.Close()
		return nil, err
	}
	sock, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	p := &Proxy{cfg: cfg, ln: ln, socketDir: dir, tunnels: map[net.Conn]bool{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	go func() { _ = p.srv.Serve(sock) }()
	return p, nil
}

// URL is the proxy's address, as HTTP_PROXY takes it.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Socket is the path of the proxy's Unix socket, as a kube-apiserver's egress selector takes it
// (HTTPConnect over UDS, the way Konnectivity's server is reached).
func (p *Proxy) Socket() string { return filepath.Join(p.socketDir, "s") }

// Env points a process's Go HTTP clients at the proxy for plain HTTP; loopback addresses stay
// direct (Go's transport never proxies them; NO_PROXY says so to other clients too).
func (p *Proxy) Env() []string {
	return []string{"HTTP_PROXY=" + p.URL(), "NO_PROXY=127.0.0.1,localhost"}
}

// Close stops the proxy, its tunnels and the requests it is answering.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.srv.Close()
	_ = os.RemoveAll(p.socketDir)
}

// ServeHTTP answers a request for a Ray endpoint: a proxied request, whose URL names the host it
// is for, or a CONNECT, whose tunnel then carries requests for the host it names.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.Host == "":
		http.Error(w, "this proxy carries requests to a cluster's Ray endpoints: absolute URLs or CONNECT", http.StatusMethodNotAllowed)
	default:
		p.serve(w, r, r.URL.Host)
	}
}

// serve answers r as the endpoint at hostport would.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, hostport string) {
	kube := p.cfg.Kube()
	if kube == nil {
		badGateway(w, hostport, "the cluster's Kubernetes API is not running")
		return
	}
	t, err := resolve(r.Context(), kube, hostport)
	if err != nil {
		badGateway(w, hostport, err.Error())
		return
	}
	dash := p.cfg.Dashboards.For(t.cluster, func() raydashboard.Config { return p.clusterConfig(t) })
	switch {
	case t.head && t.port == containerPort(t.pod, dashboardPortName, defaultDashboardPort):
		dash.ServeHTTP(w, r)
	case t.port == containerPort(t.pod, servePortName, defaultServePort):
		serveProxy(w, r, hostport, dash)
	default:
		badGateway(w, hostport, fmt.Sprintf("nothing listens on port %d of Pod %s/%s", t.port, t.pod.Namespace, t.pod.Name))
	}
}

// clusterConfig is the dashboard Config of the RayCluster t's Pod belongs to: the shared one,
// with replicas placed on that RayCluster's Pods. The dashboard outlives this proxy, so placement
// reads the cluster through Config.Kube each time, the client of the kube-apiserver running then.
func (p *Proxy) clusterConfig(t target) raydashboard.Config {
	cfg := p.cfg.Dashboards.cfg
	ns, name := t.pod.Namespace, t.pod.Labels[rayClusterLabel]
	cfg.Place = func(app, deployment string, replicas int, resources map[string]float64) (bool, string) {
		kube := p.cfg.Kube()
		if kube == nil {
			return false, "the cluster's Kubernetes API is not running"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		nodes, err := rayNodes(ctx, kube, ns, name)
		if err != nil {
			return false, err.Error()
		}
		return place(nodes, replicas, resources)
	}
	return cfg
}

// serveProxy answers for a node's Serve proxy.
func serveProxy(w http.ResponseWriter, r *http.Request, hostport string, dash *raydashboard.Dashboard) {
	if len(dash.Routes()) == 0 {
		badGateway(w, hostport, "Serve is not running on this Ray cluster")
		return
	}
	if r.URL.Path == "/-/healthz" {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("success"))
		return
	}
	http.NotFound(w, r)
}

func badGateway(w http.ResponseWriter, hostport, why string) {
	http.Error(w, "cannot reach "+hostport+": "+why, http.StatusBadGateway)
}

// Dashboards are a cluster's Ray dashboards, one per RayCluster UID, kept across restarts of its
// kube-apiserver (and so of its Proxy), as Ray clusters outlive their control plane's restarts.
type Dashboards struct {
	cfg raydashboard.Config

	mu   sync.Mutex
	dash map[types.UID]*raydashboard.Dashboard
}

// NewDashboards returns a cluster's dashboards, each built from cfg and its RayCluster's
// placement.
func NewDashboards(cfg raydashboard.Config) *Dashboards {
	return &Dashboards{cfg: cfg, dash: map[types.UID]*raydashboard.Dashboard{}}
}

// For is the dashboard of the RayCluster with uid, built from config() the first time.
func (d *Dashboards) For(uid types.UID, config func() raydashboard.Config) *raydashboard.Dashboard {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dash, ok := d.dash[uid]; ok {
		return dash
	}
	dash := raydashboard.New(config())
	d.dash[uid] = dash
	return dash
}

// KubeRay's names (ray-operator v1.5.0, controllers/ray/utils/constant.go).
const (
	rayClusterLabel      = "ray.io/cluster"
	rayNodeTypeLabel     = "ray.io/node-type"
	dashboardPortName    = "dashboard"
	servePortName        = "serve"
	defaultDashboardPort = 8265
	defaultServePort     = 8000
)

// containerPort is the port of the Pod's Ray container (its first) named name, else def.
func containerPort(p *corev1.Pod, name string, def int) int {
	if len(p.Spec.Containers) > 0 {
		for _, port := range p.Spec.Containers[0].Ports {
			if port.Name == name {
				return int(port.ContainerPort)
			}
		}
	}
	return def
}

// splitHostPort splits host[:port], port 80 when absent.
func splitHostPort(hostport string) (string, int, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) && addrErr.Err == "missing port in address" {
			return hostport, 80, nil
		}
		return "", 0, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", 0, fmt.Errorf("bad port %q", portText)
	}
	return host, port, nil
}
