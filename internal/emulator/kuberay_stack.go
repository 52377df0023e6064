package emulator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// What consumes a cluster's RayCluster worker groups on GKE, run for each cluster with the Ray
// Operator add-on, and only once it is needed:
//   - on the first Pod: kube-scheduler (k8s.io/kubernetes at the pinned version, built by
//     `make tools`), so that Kubernetes itself places Pods (node selectors, tolerations,
//     google.com/tpu requests, the webhook's Pod affinity), and the node agent (nodeagent.go),
//     which plays the kubelet of the emulated nodes and runs node auto-provisioning (nap.go);
//   - on the first RayCluster, RayJob or RayService: KubeRay's ray-operator (the version in
//     go.mod, built by `make tools`), run outside the cluster with a kubeconfig and
//     --enable-leader-election=false, the way KubeRay's Makefile runs it locally
//     (ray-operator@v1.5.0 Makefile:120), metrics and health probes off so that several run side
//     by side. Feature gate RayMultiHostIndexing=true: KubeRay then creates and deletes a
//     multi-host replica's Pods together and labels them with their replica and host index,
//     which GKE's TPU webhook reads ("In KubeRay v1.5, Pod indexing is performed by RayCluster
//     controller", WH:797-799); the gate is Alpha and off by default in v1.5.0
//     (pkg/features/features.go:49) and Beta and on in v1.6.0. Which gates GKE's add-on sets is
//     not published.
//
// The TPU webhook (webhook_tpu.go) is registered with the KubeRay CRDs. All of it stops with the
// cluster (deletion, Reset, Close) and when the add-on is disabled; the processes are children of
// the emulator like every kube-apiserver, log to kube-scheduler.log and ray-operator.log in the
// cluster's folder, and are started again if they exit.

// rayOperatorFeatureGates are the ray-operator feature gates the emulator runs with.
const rayOperatorFeatureGates = "RayMultiHostIndexing=true"

// Components of a cluster's Ray stack, as rayStack.running names them.
const (
	componentScheduler   = "kube-scheduler"
	componentRayOperator = "ray-operator"
	componentNodeAgent   = "node-agent"
)

var rayGVRs = []schema.GroupVersionResource{
	{Group: "ray.io", Version: "v1", Resource: "rayclusters"},
	{Group: "ray.io", Version: "v1", Resource: "rayjobs"},
	{Group: "ray.io", Version: "v1", Resource: "rayservices"},
}

// rayStack is what runs for one cluster's Ray Operator add-on.
type rayStack struct {
	e      *Emulator
	c      *cluster
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	procs   map[string]*process  // running child processes by component
	started map[string]time.Time // when each component started
	agent   *nodeAgent
}

// startRayStack arms the cluster's Ray stack: its components start when first needed. It does
// nothing if the stack is armed already or the cluster's kube-apiserver is not running.
func (e *Emulator) startRayStack(c *cluster) {
	c.apiMu.Lock()
	defer c.apiMu.Unlock()
	if c.rayStack != nil || c.kube == nil || e.bgCtx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(e.bgCtx)
	s := &rayStack{e: e, c: c, ctx: ctx, cancel: cancel, procs: map[string]*process{}, started: map[string]time.Time{}}
	c.rayStack = s
	kube, dyn := c.kube, c.dyn
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if awaitFirst(ctx, e, c, podLister(kube)) {
			s.startNodes(kube, dyn)
		}
	}()
	go func() {
		defer s.wg.Done()
		if awaitAny(ctx, e, c, dyn) {
			s.startOperator()
		}
	}()
}

// stopRayStack stops whatever runs for the cluster's Ray Operator add-on and waits for it.
func (c *cluster) stopRayStack() {
	c.apiMu.Lock()
	s := c.rayStack
	c.rayStack = nil
	c.apiMu.Unlock()
	if s != nil {
		s.stop()
	}
}

func (s *rayStack) stop() {
	s.cancel()
	s.wg.Wait()
}

// running returns the components running now and the PIDs of the processes among them.
func (s *rayStack) running() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for name := range s.started {
		out[name] = 0
	}
	for name, p := range s.procs {
		if !p.exited() {
			out[name] = p.cmd.Process.Pid
		}
	}
	return out
}

// lister lists one kind of object (at most one), returning whether any exists and the list's
// resourceVersion, and watches it from there.
type lister struct {
	name  string
	list  func(ctx context.Context) (bool, string, error)
	watch func(ctx context.Context, rv string) (watch.Interface, error)
}

func podLister(kube kubernetes.Interface) lister {
	pods := kube.CoreV1().Pods("")
	return lister{
		name: "pods",
		list: func(ctx context.Context) (bool, string, error) {
			l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return false, "", err
			}
			return len(l.Items) > 0, l.ResourceVersion, nil
		},
		watch: func(ctx context.Context, rv string) (watch.Interface, error) {
			return pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		},
	}
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

// awaitFirst waits, with one watch, until an object of l's kind exists; false when ctx ends.
func awaitFirst(ctx context.Context, e *Emulator, c *cluster, l lister) bool {
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
			if ev.Type == watch.Added {
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

// awaitAny waits until a RayCluster, RayJob or RayService exists.
func awaitAny(ctx context.Context, e *Emulator, c *cluster, dyn dynamic.Interface) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	found := make(chan bool, len(rayGVRs))
	for _, gvr := range rayGVRs {
		go func() { found <- awaitFirst(ctx, e, c, crLister(dyn, gvr)) }()
	}
	for range rayGVRs {
		if <-found {
			return true
		}
	}
	return false
}

// startNodes starts the scheduler and the node agent.
func (s *rayStack) startNodes(kube kubernetes.Interface, dyn dynamic.Interface) {
	kubeconfig, err := s.kubeconfig()
	if err != nil {
		s.e.logf("cluster %s: %v", s.c.Key, err)
		return
	}
	s.supervise(componentScheduler, s.e.bins.Scheduler, []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		// No serving: nothing reads the scheduler's health or metrics endpoints here.
		"--secure-port=0",
		"--profiling=false",
	})
	a := newNodeAgent(s.e, s.c, kube, dyn)
	s.mu.Lock()
	s.agent = a
	s.started[componentNodeAgent] = time.Now()
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		a.run(s.ctx)
	}()
}

// startOperator starts KubeRay's operator.
func (s *rayStack) startOperator() {
	kubeconfig, err := s.kubeconfig()
	if err != nil {
		s.e.logf("cluster %s: %v", s.c.Key, err)
		return
	}
	s.supervise(componentRayOperator, s.e.bins.RayOperator, []string{
		"--kubeconfig=" + kubeconfig,
		"--enable-leader-election=false",
		"--metrics-addr=0",
		"--health-probe-bind-address=0",
		"--feature-gates=" + rayOperatorFeatureGates,
		"--log-stdout-encoder=console",
	})
}

// kubeconfig writes the kubeconfig the cluster's components use: the kube-apiserver on loopback
// with its CA and the emulator's token (cluster-admin).
func (s *rayStack) kubeconfig() (string, error) {
	s.c.apiMu.Lock()
	api, pki := s.c.api, s.c.pki
	s.c.apiMu.Unlock()
	if api == nil || pki == nil {
		return "", errNoAPIServer
	}
	path := filepath.Join(s.c.dir, "ray-components.kubeconfig")
	return path, os.WriteFile(path, kubeconfigYAML(api.port, pki.CACertPEM, s.e.token), 0o600)
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

// supervise runs a component's process until the stack stops, starting it again a second after
// it exits (as the kubelet restarts a crashed Pod), and stops it with the stack.
func (s *rayStack) supervise(name, bin string, args []string) {
	s.mu.Lock()
	s.started[name] = time.Now()
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for s.ctx.Err() == nil {
			p, err := s.e.procs.start(name, bin, args, filepath.Join(s.c.dir, name+".log"))
			if err != nil {
				s.e.logf("cluster %s: %v", s.c.Key, err)
				if !sleepCtx(s.ctx, time.Second) {
					return
				}
				continue
			}
			s.mu.Lock()
			s.procs[name] = p
			s.mu.Unlock()
			select {
			case <-s.ctx.Done():
				p.stop(5 * time.Second)
				return
			case <-p.done:
				s.e.logf("cluster %s: %v (starting it again)", s.c.Key, p.exitError())
				if !sleepCtx(s.ctx, time.Second) {
					return
				}
			}
		}
	}()
}

// installRayAddon is what enabling the add-on puts in the cluster: the TPU webhook's
// registration, then the KubeRay CRDs.
func (e *Emulator) installRayAddon(ctx context.Context, c *cluster, current func() bool) error {
	if err := e.installTPUWebhook(ctx, c); err != nil {
		if errors.Is(err, errNoAPIServer) {
			return err
		}
		return fmt.Errorf("registering the TPU webhook: %w", err)
	}
	return e.installRayCRDs(ctx, c, current)
}

// removeRayAddon stops the cluster's Ray stack, unregisters the webhook and deletes the CRDs.
func (e *Emulator) removeRayAddon(ctx context.Context, c *cluster, current func() bool) error {
	c.stopRayStack()
	if err := e.removeTPUWebhook(ctx, c); err != nil {
		return fmt.Errorf("unregistering the TPU webhook: %w", err)
	}
	return e.removeRayCRDs(ctx, c, current)
}
