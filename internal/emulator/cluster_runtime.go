package emulator

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/nodeagent"
)

// What runs beside a cluster's kube-apiserver, as in a GKE cluster, each part started only once
// the cluster needs it, and stopped with the kube-apiserver:
//   - on the cluster's first workload (a Pod; a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job
//     or CronJob; a Namespace being deleted): kube-scheduler and kube-controller-manager
//     (k8s.io/kubernetes at the pinned version, built by `make tools`), so that Kubernetes itself
//     places Pods and runs the controllers of the objects users apply
//     (kubeproc/controller_manager.go), and the node agent (package nodeagent), which plays the
//     kubelet of the emulated nodes and runs node auto-provisioning;
//   - with the Ray Operator add-on, on the first RayCluster, RayJob or RayService: KubeRay's
//     ray-operator (kuberay_stack.go), stopped again when the add-on is disabled.
//
// The processes are children of the emulator like every kube-apiserver, log to <component>.log in
// the cluster's folder, run with a kubeconfig of the emulator's token (cluster-admin), leader
// election and serving off so that several run side by side, and are started again if they exit.

// Components of a cluster's runtime, as clusterRuntime.running names them.
const (
	componentScheduler         = "kube-scheduler"
	componentControllerManager = "kube-controller-manager"
	componentRayOperator       = "ray-operator"
	componentNodeAgent         = "node-agent"
)

// clusterRuntime is what runs for one cluster's kube-apiserver.
type clusterRuntime struct {
	e      *Emulator
	c      *cluster
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	procs   map[string]*kubeproc.Process // running child processes by component
	started map[string]time.Time         // when each component started
	agent   *nodeagent.Agent
	// ray stops the Ray Operator add-on's part (nil while it is not armed); rayDone ends when it
	// has stopped.
	ray     context.CancelFunc
	rayDone chan struct{}
}

// startRuntime arms the cluster's runtime: its components start when first needed, and with ray
// the add-on's part too. It does nothing if the runtime is armed already or the cluster's
// kube-apiserver is not running.
func (e *Emulator) startRuntime(c *cluster, ray bool) {
	c.apiMu.Lock()
	if c.runtime != nil || c.kube == nil || e.bgCtx.Err() != nil {
		c.apiMu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(e.bgCtx)
	r := &clusterRuntime{e: e, c: c, kube: c.kube, dyn: c.dyn, ctx: ctx, cancel: cancel,
		procs: map[string]*kubeproc.Process{}, started: map[string]time.Time{}}
	c.runtime = r
	c.apiMu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if awaitAny(ctx, e, c, workloadListers(r.kube)) {
			r.startWorkloads()
		}
	}()
	if ray {
		r.armRay()
	}
}

// runtimeOf is the cluster's runtime, nil while its kube-apiserver is not running.
func (c *cluster) runtimeOf() *clusterRuntime {
	c.apiMu.Lock()
	defer c.apiMu.Unlock()
	return c.runtime
}

// stopRuntime stops whatever runs for the cluster and waits for it.
func (c *cluster) stopRuntime() {
	c.apiMu.Lock()
	r := c.runtime
	c.runtime = nil
	c.apiMu.Unlock()
	if r != nil {
		r.cancel()
		r.wg.Wait()
	}
}

// running returns the components running now and the PIDs of the processes among them.
func (r *clusterRuntime) running() map[string]int {
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
func (r *clusterRuntime) startWorkloads() {
	kubeconfig, err := r.kubeconfig()
	if err != nil {
		r.e.logf("cluster %s: %v", r.c.Key, err)
		return
	}
	r.supervise(r.ctx, componentScheduler, r.e.bins.Scheduler, kubeproc.SchedulerArgs(kubeconfig))
	r.supervise(r.ctx, componentControllerManager, r.e.bins.ControllerManager, kubeproc.ControllerManagerArgs(kubeconfig))
	a := nodeagent.New(r.e.nodeAgentConfig(r.c, r.kube))
	r.mu.Lock()
	r.agent = a
	r.started[componentNodeAgent] = time.Now()
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		a.Run(r.ctx)
	}()
}

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
func awaitFirst(ctx context.Context, e *Emulator, c *cluster, l lister) bool {
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
				e.logf("cluster %s: watching %s: %v (retrying)", c.Key, l.name, err)
			}
			sleepCtx(ctx, time.Second)
			continue
		}
		for ev := range w.ResultChan() {
			if counts(ev) {
				w.Stop()
				return true
			}
			if ev.Type == watch.Error {
				break
			}
		}
		w.Stop()
	}
	return false
}

// awaitAny waits until an object of one of listers' kinds exists; false when ctx ends.
func awaitAny(ctx context.Context, e *Emulator, c *cluster, listers []lister) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	found := make(chan bool, len(listers))
	for _, l := range listers {
		go func() { found <- awaitFirst(ctx, e, c, l) }()
	}
	for range listers {
		if <-found {
			return true
		}
	}
	return false
}

// kubeconfig writes the kubeconfig the cluster's components use: the kube-apiserver on loopback
// with its CA and the emulator's token (cluster-admin).
func (r *clusterRuntime) kubeconfig() (string, error) {
	r.c.apiMu.Lock()
	api, pki := r.c.api, r.c.pki
	r.c.apiMu.Unlock()
	if api == nil || pki == nil {
		return "", errNoAPIServer
	}
	path := filepath.Join(r.c.dir, "components.kubeconfig")
	return path, os.WriteFile(path, kubeconfigYAML(api.Port(), pki.CACertPEM, r.e.token), 0o600)
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
func (r *clusterRuntime) supervise(ctx context.Context, name, bin string, args []string) <-chan struct{} {
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
			p, err := r.e.procs.Start(name, bin, args, filepath.Join(r.c.dir, name+".log"))
			if err != nil {
				r.e.logf("cluster %s: %v", r.c.Key, err)
				if !sleepCtx(ctx, time.Second) {
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
				r.e.logf("cluster %s: %v (starting it again)", r.c.Key, p.ExitError())
				if !sleepCtx(ctx, time.Second) {
					return
				}
			}
		}
	}()
	return stopped
}
