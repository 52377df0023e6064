package nodeagent

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// The node agent plays, for the emulated nodes of a cluster, the parts of Kubernetes that act on
// Pods once they are bound and that kube-controller-manager does not run here
// (kubeproc/controller_manager.go):
//   - the kubelet: a Pod bound to a Ready node starts at once: Running, its init containers
//     Completed, its containers running and ready, conditions PodReadyToStartContainers,
//     Initialized, ContainersReady and Ready true, a Pod IP from the node's /24 of the cluster's
//     Pod range (as GKE gives each node a /24, a hostNetwork Pod the node's IP) and the node's
//     InternalIP as hostIP. A Pod being deleted is removed (the kubelet's final delete with grace
//     period 0 once its containers stopped), or its deletion would never end.
//   - the node lifecycle controller, for a failed host (Controller.FailHost: node Ready=Unknown):
//     its Pods' Ready condition turns False (MarkPodsNotReady, k8s.io/kubernetes@v1.34.4
//     pkg/controller/util/node/controller_utils.go:121), and, the host being gone, they fail:
//     phase Failed, reason "NodeLost", "Node %v which was running pod %v is unresponsive"
//     (pkg/util/node/node.go:30-33), containers terminated as the kubelet reports a container it
//     lost ("ContainerStatusUnknown", exit code 137, pkg/kubelet/kubelet_pods.go:2146-2150).
//     KubeRay deletes a Failed worker and, for a multi-host group, its whole replica.
//
// A Pod on a node that no longer exists is kube-controller-manager's Pod garbage collector's; nodes
// are drained before they go (the emulator's drainNodes), as GKE drains a node pool it deletes.
//
// It also runs node auto-provisioning (nap.go) over the Pods the scheduler leaves unschedulable.

// Config is what an Agent is built from: the cluster's Kubernetes client, and what it needs from
// the emulated GKE, as functions. Each of those functions takes the emulator's lock itself, if it
// needs it, and releases it before it returns; the Agent holds no lock of the emulator's.
type Config struct {
	// Name names the cluster in log lines (its key, projects/P/locations/L/clusters/C).
	Name string
	// Kube is a client of the cluster's kube-apiserver.
	Kube kubernetes.Interface
	// PodCIDR is the cluster's Pod range (Cluster.clusterIpv4Cidr); 10.4.0.0/14 when it is not an
	// IPv4 CIDR.
	PodCIDR string
	// Logf logs a line; nil logs nothing.
	Logf func(format string, args ...any)

	// Cluster is what node auto-provisioning needs of the cluster now; false while the cluster is
	// gone or neither RUNNING nor RECONCILING.
	Cluster func() (ClusterSnapshot, bool)
	// CreateNodePool starts the creation of a node pool of the cluster as CreateNodePool does
	// (validation, quota, capacity, a CREATE_NODE_POOL operation under GKE's concurrency rules)
	// and returns its operation, or GKE's refusal.
	CreateNodePool func(np *containerpb.NodePool) (*containerpb.Operation, *apierr.Error)
	// TPUChips is the google.com/tpu request of a Pod's containers, as GKE's TPU webhook sums it.
	TPUChips func(containers ...corev1.Container) int64
	// ReplicaKey names the slice replica a Pod belongs to; "" for a Pod of none.
	ReplicaKey func(p *corev1.Pod) string
}

// podsByNode indexes Pods by spec.nodeName.
const podsByNode = "nodeName"

// Agent is the node agent of one cluster.
type Agent struct {
	cfg     Config
	pods    cache.SharedIndexInformer
	nodes   cache.SharedIndexInformer
	queue   workqueue.TypedRateLimitingInterface[string]
	napKick chan struct{}

	mu        sync.Mutex
	podCIDR   uint32                       // first address of the cluster's Pod range
	nodeBlock map[string]uint32            // node → index of its /24
	nextBlock uint32                       // next unused /24
	used      map[string]map[uint32]string // node → host part → Pod UID

	// NAP's own state, touched only by its loop.
	napSeen    map[string]bool
	napCreated map[string]string    // pool → shape key, for pools NAP created
	napBackoff map[string]time.Time // shape key → end of its backoff
}

// New builds the agent of a cluster; Run runs it.
func New(cfg Config) *Agent {
	base := uint32(10<<24 | 4<<16) // 10.4.0.0/14, GKE's default and the emulator's
	if _, n, err := net.ParseCIDR(cfg.PodCIDR); err == nil && n.IP.To4() != nil {
		base = binary.BigEndian.Uint32(n.IP.To4())
	}
	f := informers.NewSharedInformerFactory(cfg.Kube, 0)
	a := &Agent{
		cfg:     cfg,
		pods:    f.Core().V1().Pods().Informer(),
		nodes:   f.Core().V1().Nodes().Informer(),
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		napKick: make(chan struct{}, 1),
		podCIDR: base, nodeBlock: map[string]uint32{}, used: map[string]map[uint32]string{},
		napSeen: map[string]bool{}, napCreated: map[string]string{}, napBackoff: map[string]time.Time{},
	}
	_ = a.pods.AddIndexers(cache.Indexers{podsByNode: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}})
	_, _ = a.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.podChanged(obj) },
		UpdateFunc: func(_, obj any) { a.podChanged(obj) },
		DeleteFunc: func(obj any) { a.podGone(obj) },
	})
	nodeChanged := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok {
			a.enqueueNode(n.Name)
		} else if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			if n, ok := t.Obj.(*corev1.Node); ok {
				a.enqueueNode(n.Name)
			}
		}
		a.kickNAP()
	}
	_, _ = a.nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    nodeChanged,
		UpdateFunc: func(_, obj any) { nodeChanged(obj) },
		DeleteFunc: nodeChanged,
	})
	return a
}

// Run serves until ctx ends.
func (a *Agent) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a.pods.Run(ctx.Done()) }()
	go func() { defer wg.Done(); a.nodes.Run(ctx.Done()) }()
	if cache.WaitForCacheSync(ctx.Done(), a.pods.HasSynced, a.nodes.HasSynced) {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for a.processNext(ctx) {
				}
			}()
		}
		wg.Add(1)
		go func() { defer wg.Done(); a.napLoop(ctx) }()
	}
	<-ctx.Done()
	a.queue.ShutDown()
	wg.Wait()
}

func (a *Agent) logf(format string, args ...any) {
	if a.cfg.Logf != nil {
		a.cfg.Logf(format, args...)
	}
}

func (a *Agent) podChanged(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.noteIP(p)
	if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
		a.queue.Add(key)
	}
	if p.Spec.NodeName == "" && podUnschedulable(p) {
		a.kickNAP()
	}
}

func (a *Agent) podGone(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for host, uid := range a.used[p.Spec.NodeName] {
		if uid == string(p.UID) {
			delete(a.used[p.Spec.NodeName], host)
		}
	}
}

func (a *Agent) enqueueNode(name string) {
	objs, _ := a.pods.GetIndexer().ByIndex(podsByNode, name)
	for _, o := range objs {
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			a.queue.Add(key)
		}
	}
}

func (a *Agent) processNext(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	if err := a.sync(ctx, key); err != nil && ctx.Err() == nil {
		if !apierrors.IsConflict(err) {
			a.logf("cluster %s: node agent: Pod %s: %v", a.cfg.Name, key, err)
		}
		a.queue.AddRateLimited(key)
		return true
	}
	a.queue.Forget(key)
	return true
}

// sync brings one Pod to what its node would make of it.
func (a *Agent) sync(ctx context.Context, key string) error {
	obj, exists, err := a.pods.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	node, err := a.node(ctx, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	pods := a.cfg.Kube.CoreV1().Pods(pod.Namespace)
	switch {
	case node == nil:
		return nil // no kubelet: the Pod garbage collector's
	case pod.DeletionTimestamp != nil:
		grace := int64(0)
		err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	case podTerminal(pod):
		return nil
	case !nodeIsReady(node):
		_, err := pods.UpdateStatus(ctx, lostPod(pod), metav1.UpdateOptions{})
		return ignoreNotFound(err)
	case pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "":
		started, err := a.startedPod(pod, node)
		if err != nil {
			return err
		}
		_, err = pods.UpdateStatus(ctx, started, metav1.UpdateOptions{})
		return ignoreNotFound(err)
	}
	return nil
}

// node returns the Pod's node from the cache, or from the API server when the cache has not seen
// it yet; nil when it does not exist.
func (a *Agent) node(ctx context.Context, name string) (*corev1.Node, error) {
	if obj, ok, _ := a.nodes.GetStore().GetByKey(name); ok {
		if n, ok := obj.(*corev1.Node); ok {
			return n, nil
		}
	}
	n, err := a.cfg.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return n, err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
