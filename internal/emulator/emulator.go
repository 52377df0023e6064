package emulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
)

// DefaultLatency is the default time an operation takes (PENDING → RUNNING → DONE), short for
// tests. A CREATE_CLUSTER additionally lasts until its kube-apiserver is ready (~2 s).
const DefaultLatency = 200 * time.Millisecond

// DefaultRayCRDDelay is the default gap between the Ray Operator add-on being reported enabled and
// the KubeRay CRDs being created in the cluster.
const DefaultRayCRDDelay = 500 * time.Millisecond

// Options configure an emulator. The zero value is a usable in-memory emulator on a free port.
type Options struct {
	// Addr is the listen address, default "127.0.0.1:0". Only loopback addresses are accepted.
	Addr string
	// Token is the bearer token the emulator and every cluster accept; random when empty.
	Token string
	// StateDir keeps clusters, pools, operations, key material and etcd data across restarts.
	// Empty means a temporary folder removed by Close.
	StateDir string
	// KubeBinDir holds kube-apiserver, etcd, kube-scheduler and ray-operator; default
	// DefaultKubeBinDir().
	KubeBinDir string
	// CRDDir holds the KubeRay CRD YAML files; default <KubeBinDir>/kuberay-crds.
	CRDDir string
	// DefaultLatency applies to every operation type not in Latencies; 0 means DefaultLatency.
	DefaultLatency time.Duration
	// Latencies per operation type (containerpb.Operation_Type names such as "CREATE_NODE_POOL";
	// "default" stands for DefaultLatency).
	Latencies map[string]time.Duration
	// RayCRDDelay is the gap between enabling the Ray Operator add-on and its CRDs being created;
	// 0 means DefaultRayCRDDelay, negative means none.
	RayCRDDelay time.Duration
	// MaxNodePoolOperations is how many node pool operations (of different pools) may run at once
	// on one cluster, as GKE's concurrent operations quota; 0 means DefaultMaxNodePoolOperations
	// (5), negative means unlimited. Cluster-level operations always run alone.
	MaxNodePoolOperations int
	// Logf receives progress and child-process problems; nil discards them.
	Logf func(format string, args ...any)
}

// Emulator is a running emulated GKE.
type Emulator struct {
	opts     Options
	token    string
	bins     *kubeproc.Binaries
	workDir  string
	tempWork bool
	etcd     *kubeproc.Etcd
	procs    *kubeproc.Group
	listener net.Listener
	server   *http.Server
	endpoint string
	dnsPKI   *dnsEndpointPKI
	// rayAddon serves what the Ray Operator add-on's clusters share (webhook_tpu.go).
	rayAddon rayAddonState
	// crdTemplates are the KubeRay CRDs as the first cluster stored them (ray_crds_seed.go).
	crdTemplates crdTemplates

	mu  sync.Mutex
	st  *state
	ctl *controlState
	// capacity is the emulated world's TPU capacity, quota and reservations.
	capacity *capacityState
	bgCtx    context.Context
	stop     context.CancelFunc
	bg       sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Start starts an emulator: checks the binaries, starts etcd, restores a saved state (restarting
// its clusters' kube-apiservers) and serves the API. Close stops everything it started.
func Start(ctx context.Context, opts Options) (*Emulator, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if err := checkLoopback(opts.Addr); err != nil {
		return nil, err
	}
	for k, d := range opts.Latencies {
		if _, ok := containerpb.Operation_Type_value[k]; (!ok && k != "default") || d < 0 {
			return nil, fmt.Errorf("emulator: latency %s=%s: want a containerpb.Operation_Type name such as CREATE_NODE_POOL and a duration >= 0", k, d)
		}
	}
	bins, err := kubeproc.FindBinaries(opts.KubeBinDir, opts.CRDDir)
	if err != nil {
		return nil, err
	}
	e := &Emulator{opts: opts, token: opts.Token, bins: bins, procs: kubeproc.NewGroup()}
	if opts.StateDir != "" {
		if e.workDir, err = filepath.Abs(opts.StateDir); err != nil {
			return nil, err
		}
	} else {
		if e.workDir, err = os.MkdirTemp("", "raytpu-emulator-"); err != nil {
			return nil, err
		}
		e.tempWork = true
	}
	for _, d := range []string{"etcd", "clusters"} {
		if err := os.MkdirAll(filepath.Join(e.workDir, d), 0o700); err != nil {
			return nil, err
		}
	}
	if e.token == "" {
		if e.token, err = e.loadOrNewToken(); err != nil {
			return nil, err
		}
	}
	if e.dnsPKI, err = loadOrNewDNSEndpointPKI(filepath.Join(e.workDir, "dns-endpoint")); err != nil {
		return nil, fmt.Errorf("emulator: the DNS endpoint CA: %w", err)
	}
	e.bgCtx, e.stop = context.WithCancel(context.Background())
	e.ctl = newControlState(opts)
	e.capacity = newCapacityState()
	e.st = newState()

	if e.etcd, err = kubeproc.StartEtcd(ctx, e.procs, bins.Etcd, filepath.Join(e.workDir, "etcd", "data"), filepath.Join(e.workDir, "etcd")); err != nil {
		e.Close()
		return nil, err
	}
	if e.listener, err = e.listen(opts.Addr); err != nil {
		e.Close()
		return nil, fmt.Errorf("emulator: listen: %w", err)
	}
	e.endpoint = "http://" + e.listener.Addr().String()
	if opts.StateDir != "" {
		if err := e.restore(ctx); err != nil {
			e.Close()
			return nil, err
		}
	}
	e.server = &http.Server{Handler: e.handler(), ReadHeaderTimeout: 10 * time.Second}
	// Shutdown waits for running handlers; one holding a lost response (Fault.Lost) ends at once.
	e.server.RegisterOnShutdown(e.stop)
	go func() { _ = e.server.Serve(e.listener) }()
	return e, nil
}

// Endpoint is the API root, http://127.0.0.1:PORT: the value for option.WithEndpoint and for the
// provider's container_endpoint.
func (e *Emulator) Endpoint() string { return e.endpoint }

// ComputeEndpoint is the Compute Engine API root, the value for the provider's compute_endpoint.
func (e *Emulator) ComputeEndpoint() string { return e.endpoint + computePrefix }

// Token is the bearer token the emulator and its clusters accept.
func (e *Emulator) Token() string { return e.token }

// Close stops serving, ends running operations and stops every kube-apiserver and etcd. With a
// StateDir the state stays on disk for the next Start.
func (e *Emulator) Close() error {
	e.closeOnce.Do(func() {
		if e.server != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = e.server.Shutdown(sctx)
			cancel()
		} else if e.listener != nil {
			e.listener.Close()
		}
		if e.stop != nil {
			e.stop()
		}
		e.bg.Wait()
		if e.st != nil {
			e.mu.Lock()
			if e.opts.StateDir != "" {
				e.closeErr = e.saveLocked()
			}
			clusters := e.st.allClusters()
			e.mu.Unlock()
			var wg sync.WaitGroup
			for _, c := range clusters {
				wg.Add(1)
				go func() { defer wg.Done(); c.stopAPIServer() }()
			}
			wg.Wait()
		}
		// Whatever is still running (etcd last, after the kube-apiservers that use it).
		e.procs.StopAll(10 * time.Second)
		if e.tempWork {
			if err := os.RemoveAll(e.workDir); err != nil && e.closeErr == nil {
				e.closeErr = err
			}
		}
	})
	return e.closeErr
}

func (e *Emulator) logf(format string, args ...any) {
	if e.opts.Logf != nil {
		e.opts.Logf(format, args...)
	}
}

// goBackground runs f as tracked background work that Close waits for.
func (e *Emulator) goBackground(f func(ctx context.Context)) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		f(e.bgCtx)
	}()
}

// listen binds addr; with a state folder and port 0 it first tries the address of the previous
// run, so a restarted emulator keeps its endpoint when it can.
func (e *Emulator) listen(addr string) (net.Listener, error) {
	if e.opts.StateDir != "" && strings.HasSuffix(addr, ":0") {
		if prev, err := os.ReadFile(filepath.Join(e.workDir, addressFile)); err == nil {
			if l, err := net.Listen("tcp", strings.TrimSpace(string(prev))); err == nil {
				return l, nil
			}
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if e.opts.StateDir != "" {
		if err := os.WriteFile(filepath.Join(e.workDir, addressFile), []byte(l.Addr().String()+"\n"), 0o600); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// loadOrNewToken returns a random token, the same one across restarts of a stateful emulator.
func (e *Emulator) loadOrNewToken() (string, error) {
	if e.opts.StateDir == "" {
		return randomToken(), nil
	}
	path := filepath.Join(e.workDir, tokenFile)
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	t := randomToken()
	return t, os.WriteFile(path, []byte(t+"\n"), 0o600)
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("emulator: listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return errors.New("emulator: the listen address must be on loopback (127.0.0.1, ::1 or localhost), got " + addr)
	}
	return nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "ya29.emulator-" + hex.EncodeToString(b)
}
