package emulator

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
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
// are drained before they go (drainNodes), as GKE drains a node pool it deletes.
//
// It also runs node auto-provisioning (nap.go) over the Pods the scheduler leaves unschedulable.

// podsByNode indexes Pods by spec.nodeName.
const podsByNode = "nodeName"

type nodeAgent struct {
	e       *Emulator
	c       *cluster
	kube    kubernetes.Interface
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

func newNodeAgent(e *Emulator, c *cluster, kube kubernetes.Interface) *nodeAgent {
	e.mu.Lock()
	cidr := c.PB.ClusterIpv4Cidr
	e.mu.Unlock()
	base := uint32(10<<24 | 4<<16) // 10.4.0.0/14, GKE's default and the emulator's
	if _, n, err := net.ParseCIDR(cidr); err == nil && n.IP.To4() != nil {
		base = binary.BigEndian.Uint32(n.IP.To4())
	}
	f := informers.NewSharedInformerFactory(kube, 0)
	a := &nodeAgent{
		e: e, c: c, kube: kube,
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

// run serves until ctx ends.
func (a *nodeAgent) run(ctx context.Context) {
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

func (a *nodeAgent) podChanged(obj any) {
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

func (a *nodeAgent) podGone(obj any) {
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

func (a *nodeAgent) enqueueNode(name string) {
	objs, _ := a.pods.GetIndexer().ByIndex(podsByNode, name)
	for _, o := range objs {
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			a.queue.Add(key)
		}
	}
}

func (a *nodeAgent) kickNAP() {
	select {
	case a.napKick <- struct{}{}:
	default:
	}
}

// napLoop runs a NAP round when Pods turn unschedulable or nodes change, and every few seconds
// while Pods still wait (an operation of the cluster may have been in the way).
func (a *nodeAgent) napLoop(ctx context.Context) {
	waiting := false
	for {
		var tick <-chan time.Time
		if waiting {
			tick = time.After(2 * time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.napKick:
			// Let a burst of Pods settle into one round.
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return
			}
		case <-tick:
		}
		waiting = a.napPass(ctx)
	}
}

func (a *nodeAgent) processNext(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	if err := a.sync(ctx, key); err != nil && ctx.Err() == nil {
		if !apierrors.IsConflict(err) {
			a.e.logf("cluster %s: node agent: Pod %s: %v", a.c.Key, key, err)
		}
		a.queue.AddRateLimited(key)
		return true
	}
	a.queue.Forget(key)
	return true
}

// sync brings one Pod to what its node would make of it.
func (a *nodeAgent) sync(ctx context.Context, key string) error {
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
	pods := a.kube.CoreV1().Pods(pod.Namespace)
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
func (a *nodeAgent) node(ctx context.Context, name string) (*corev1.Node, error) {
	if obj, ok, _ := a.nodes.GetStore().GetByKey(name); ok {
		if n, ok := obj.(*corev1.Node); ok {
			return n, nil
		}
	}
	n, err := a.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
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

func podTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeInternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// setPodCondition sets a condition, keeping its transition time when the status is unchanged.
func setPodCondition(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) {
	now := metav1.Now()
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: now})
}

// startedPod is the Pod as a kubelet reports it once every container runs.
func (a *nodeAgent) startedPod(pod *corev1.Pod, node *corev1.Node) (*corev1.Pod, error) {
	hostIP := nodeInternalIP(node)
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		var err error
		if podIP, err = a.allocIP(node.Name, pod.UID); err != nil {
			return nil, err
		}
	}
	now := metav1.Now()
	p := pod.DeepCopy()
	st := &p.Status
	st.Phase = corev1.PodRunning
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	st.PodIP, st.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(st, c, corev1.ConditionTrue, "", "")
	}
	started := true
	st.InitContainerStatuses = nil
	for _, c := range p.Spec.InitContainers {
		cs := containerStatus(c, p.UID)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar keeps running.
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
			cs.Started = &started
		} else {
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: cs.ContainerID}
			notStarted := false
			cs.Started = &notStarted
		}
		cs.Ready = true
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	st.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		cs := containerStatus(c, p.UID)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		cs.Ready, cs.Started = true, &started
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return p, nil
}

// containerStatus names a container as containerd would: an ID and an image digest.
func containerStatus(c corev1.Container, pod types.UID) corev1.ContainerStatus {
	id := sha256.Sum256([]byte(string(pod) + "/" + c.Name))
	img := sha256.Sum256([]byte(c.Image))
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:" + hex.EncodeToString(img[:]),
		ContainerID: "containerd://" + hex.EncodeToString(id[:]),
	}
}

// lostPod is the Pod of a failed host, as described at the top of this file.
func lostPod(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	st := &p.Status
	st.Phase = corev1.PodFailed
	st.Reason = "NodeLost"
	st.Message = fmt.Sprintf("Node %v which was running pod %v is unresponsive", p.Spec.NodeName, p.Name)
	setPodCondition(st, corev1.PodReady, corev1.ConditionFalse, "", "")
	setPodCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "", "")
	now := metav1.Now()
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated",
			FinishedAt: now, ContainerID: cs.ContainerID,
		}}
		notStarted := false
		cs.Ready, cs.Started = false, &notStarted
	}
	return p
}

// allocIP gives a Pod the lowest free address of its node's /24 (.2 to .254).
func (a *nodeAgent) allocIP(node string, pod types.UID) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	block := a.blockLocked(node)
	used := a.used[node]
	for host := uint32(2); host < 255; host++ {
		if uid, taken := used[host]; taken && uid != string(pod) {
			continue
		}
		used[host] = string(pod)
		return ipString(a.podCIDR + block<<8 + host), nil
	}
	return "", fmt.Errorf("node %s has no free Pod address", node)
}

func (a *nodeAgent) blockLocked(node string) uint32 {
	if a.used[node] == nil {
		a.used[node] = map[uint32]string{}
	}
	b, ok := a.nodeBlock[node]
	if !ok {
		b = a.nextBlock
		a.nodeBlock[node] = b
		a.nextBlock++
	}
	return b
}

// noteIP records the address of a Pod already running (an agent started again after the
// kube-apiserver restarted), so that no address is handed out twice.
func (a *nodeAgent) noteIP(p *corev1.Pod) {
	ip := net.ParseIP(p.Status.PodIP).To4()
	if ip == nil || p.Spec.NodeName == "" || p.Spec.HostNetwork {
		return
	}
	v := binary.BigEndian.Uint32(ip)
	if v < a.podCIDR {
		return
	}
	block, host := (v-a.podCIDR)>>8, v&0xff
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used[p.Spec.NodeName] == nil {
		a.used[p.Spec.NodeName] = map[uint32]string{}
	}
	if _, ok := a.nodeBlock[p.Spec.NodeName]; !ok {
		a.nodeBlock[p.Spec.NodeName] = block
		a.nextBlock = max(a.nextBlock, block+1)
	}
	a.used[p.Spec.NodeName][host] = string(p.UID)
}

func ipString(v uint32) string {
	b := make(net.IP, 4)
	binary.BigEndian.PutUint32(b, v)
	return b.String()
}
