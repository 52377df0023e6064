package clusterkube

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/nodeagent"
)

// Components of a cluster's runtime, as Runtime.Running names them.
const (
	ComponentScheduler         = "kube-scheduler"
	ComponentControllerManager = "kube-controller-manager"
	ComponentRayOperator       = "ray-operator"
	ComponentNodeAgent         = "node-agent"
)

// Config is what a cluster's runtime is built from.
type Config struct {
	// Name names the cluster in log lines (its key, projects/P/locations/L/clusters/C).
	Name string
	// Dir is the cluster's folder, where each component logs to <component>.log and the
	// components' kubeconfig is written.
	Dir string
	// Kube and Dyn are clients of the cluster's kube-apiserver.
	Kube kubernetes.Interface
	Dyn  dynamic.Interface
	// APIPort, CACertPEM and Token are what the components' kubeconfig holds: the kube-apiserver
	// on 127.0.0.1:APIPort, its CA, and the emulator's token (cluster-admin).
	APIPort   int
	CACertPEM []byte
	Token     string
	// Procs is the emulator's process group, so the components stop with the emulator.
	Procs *kubeproc.Group
	// Bins has the paths of kube-scheduler, kube-controller-manager and ray-operator.
	Bins *kubeproc.Binaries
	// RayProxyEnv is added to ray-operator's environment: it points the operator's HTTP client
	// at the proxy to the cluster's Ray endpoints, its dashboards and Serve proxies (rayproxy).
	RayProxyEnv []string
	// NodeAgent builds the node agent's Config, when the cluster's first workload appears.
	NodeAgent func() nodeagent.Config
	// Logf logs a line; nil logs nothing.
	Logf func(format string, args ...any)
}

// Runtime is what runs for one cluster's kube-apiserver.
type Runtime struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	procs   map[string]*kubeproc.Process // running child processes by component
	started map[string]time.Time         // when each component started
	// ray stops the Ray Operator add-on's part (nil while it is not armed); rayDone ends when it
	// has stopped.
	ray     context.CancelFunc
	rayDone chan struct{}
}

// New arms the runtime of a cluster whose kube-apiserver is running: its components start when
// first needed, and run until Stop or until ctx ends. ArmRay arms the add-on's part too.
func New(ctx context.Context, cfg Config) *Runtime {
	ctx, cancel := context.WithCancel(ctx)
	r := &Runtime{cfg: cfg, ctx: ctx, cancel: cancel,
		procs: map[string]*kubeproc.Process{}, started: map[string]time.Time{}}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if r.awaitAny(ctx, workloadListers(cfg.Kube)) {
			r.startWorkloads()
		}
	}()
	return r
}

// Stop stops whatever runs for the cluster and waits for it.
func (r *Runtime) Stop() {
	// Cancelled under mu, so that ArmRay, which adds to wg under mu once it has seen ctx alive,
	// cannot add to it while Wait runs.
	r.mu.Lock()
	r.cancel()
	r.mu.Unlock()
	r.wg.Wait()
}

// Running returns the components running now and the PIDs of the processes among them.
func (r *Runtime) Running() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for name := range r.started {
		out[name] = 0
	}
	for name, p := range r.procs {
		if !p.Exited() {
			out[name] = p.Pid()
		}
	}
	return out
}

// startWorkloads starts the scheduler, the controller manager and the node agent.
func (r *Runtime) startWorkloads() {
	kubeconfig, err := r.kubeconfig()
	if err != nil {
		r.logf("cluster %s: %v", r.cfg.Name, err)
		return
	}
	r.supervise(r.ctx, ComponentScheduler, r.cfg.Bins.Scheduler, kubeproc.SchedulerArgs(kubeconfig), nil)
	r.supervise(r.ctx, ComponentControllerManager, r.cfg.Bins.ControllerManager, kubeproc.ControllerManagerArgs(kubeconfig), nil)
	a := nodeagent.New(r.cfg.NodeAgent())
	r.mu.Lock()
	r.started[ComponentNodeAgent] = time.Now()
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		a.Run(r.ctx)
	}()
}

// kubeconfig writes the kubeconfig the cluster's components use: the kube-apiserver on loopback
// with its CA and the emulator's token (cluster-admin).
func (r *Runtime) kubeconfig() (string, error) {
	path := filepath.Join(r.cfg.Dir, "components.kubeconfig")
	return path, os.WriteFile(path, kubeconfigYAML(r.cfg.APIPort, r.cfg.CACertPEM, r.cfg.Token), 0o600)
}

func kubeconfigYAML(port int, caPEM []byte, token string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: gke\n  cluster:\n")
	b.WriteString("    server: https://127.0.0.1:" + strconv.Itoa(port) + "\n")
	b.WriteString("    certificate-authority-data: " + base64.StdEncoding.EncodeToString(caPEM) + "\n")
	b.WriteString("users:\n- name: admin\n  user:\n    token: " + token + "\n")
	b.WriteString("contexts:\n- name: gke\n  context:\n    cluster: gke\n    user: admin\ncurrent-context: gke\n")
	return []byte(b.String())
}

// supervise runs a component's process until ctx ends, starting it again a second after it exits
// (as the kubelet restarts a crashed Pod), and stops it then; the channel it returns closes once
// the process has stopped.
func (r *Runtime) supervise(ctx context.Context, name, bin string, args, env []string) <-chan struct{} {
	r.mu.Lock()
	r.started[name] = time.Now()
	r.mu.Unlock()
	stopped := make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(stopped)
		defer func() {
			r.mu.Lock()
			delete(r.procs, name)
			delete(r.started, name)
			r.mu.Unlock()
		}()
		for ctx.Err() == nil {
			p, err := r.cfg.Procs.Start(name, bin, args, env, filepath.Join(r.cfg.Dir, name+".log"))
			if err != nil {
				r.logf("cluster %s: %v", r.cfg.Name, err)
				if !pauseBeforeRetry(ctx) {
					return
				}
				continue
			}
			r.mu.Lock()
			r.procs[name] = p
			r.mu.Unlock()
			select {
			case <-ctx.Done():
				p.Stop(5 * time.Second)
				return
			case <-p.Done():
				r.logf("cluster %s: %v (starting it again)", r.cfg.Name, p.ExitError())
				if !pauseBeforeRetry(ctx) {
					return
				}
			}
		}
	}()
	return stopped
}

// pauseBeforeRetry waits the second between a failure and the next try; false when ctx ends first.
func pauseBeforeRetry(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Second):
		return true
	}
}

func (r *Runtime) logf(format string, args ...any) {
	if r.cfg.Logf != nil {
		r.cfg.Logf(format, args...)
	}
}
