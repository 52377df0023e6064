package emulator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/machines"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// kubeClients builds client-go clients for a cluster's kube-apiserver.
func kubeClients(port int, caPEM []byte, token string) (kubernetes.Interface, dynamic.Interface, error) {
	cfg := &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		QPS:             200,
		Burst:           400,
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return kube, dyn, nil
}

// Node names. A pool's nodes are named
//
//	gke-<cluster>-<pool>-<hash>-<worker>
//
// where <cluster> and <pool> are the names cut to 20 characters, <hash> is 8 hex digits fixed for
// the life of the pool, and <worker> is the host's worker index (TPU_WORKER_ID order), written
// with 4 digits so that sorting names sorts workers. A pool spread over several zones numbers its
// nodes zone after zone, in the order of the pool's locations.
func nodeNamePrefix(clusterName, poolName, poolUID string) string {
	sum := sha256.Sum256([]byte(poolUID))
	return fmt.Sprintf("gke-%s-%s-%s", trimName(clusterName, 20), trimName(poolName, 20), hex.EncodeToString(sum[:4]))
}

// NodeName returns the name of worker index worker of a pool whose node name prefix is prefix.
func nodeName(prefix string, worker int) string { return fmt.Sprintf("%s-%04d", prefix, worker) }

var workerSuffixRE = regexp.MustCompile(`-([0-9]{4,})$`)

// WorkerIndex recovers a node's worker index from its name (the number after the last hyphen),
// the rule documented on the node names above. ok is false for names not made by the emulator.
func WorkerIndex(nodeName string) (int, bool) {
	m := workerSuffixRE.FindStringSubmatch(nodeName)
	if m == nil || !strings.HasPrefix(nodeName, "gke-") {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

func trimName(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-")
}

// poolNodesSpec is everything needed to register a pool's nodes, copied out under e.mu.
type poolNodesSpec struct {
	pool        string
	prefix      string
	zones       []string
	perZone     int
	machineType string
	labels      map[string]string
	taints      []corev1.Taint
	chips       int // google.com/tpu per node, 0 for CPU pools
	version     string
	failed      map[int]bool
	// recovering is a multi-host slice with a failed host: its other hosts take no new Pods.
	recovering bool
	region     string
	project    string
}

func nodesSpecLocked(c *cluster, p *rules.NodePool) poolNodesSpec {
	s := poolNodesSpec{
		pool:    p.PB.Name,
		prefix:  nodeNamePrefix(c.PB.Name, p.PB.Name, p.UID),
		zones:   append([]string(nil), p.Zones...),
		perZone: p.NodeCount,
		chips:   p.ChipsPerNode,
		failed:  map[int]bool{},
		region:  rules.ZoneRegion(c.Location),
		project: c.Project,
	}
	for _, i := range p.FailedHosts {
		s.failed[i] = true
	}
	// "Multi-host TPU slices require all instances in the slice to be recovered or rescheduled
	// together ... you can't reschedule individual instances within a slice", and until then "the
	// XLA compiler can't run the workload" (Cloud TPU, Failure recovery of TPU instances,
	// docs.cloud.google.com/tpu/docs/failure-recovery). So a failed host takes its slice's healthy
	// hosts out of scheduling with it. INFERRED: how GKE shows that on the Nodes; here they are
	// cordoned, as a drain would, and stay Ready.
	s.recovering = p.MultiHost && len(p.FailedHosts) > 0
	s.applyConfig(p.PB)
	if p.Accelerator != "" {
		s.labels[gketpu.LabelAccelerator] = p.Accelerator
		s.labels[gketpu.LabelTopology] = p.Topology
	}
	return s
}

// applyConfig takes labels, taints, machine type and version from np (user labels first, so
// GKE's own labels win).
func (s *poolNodesSpec) applyConfig(np *containerpb.NodePool) {
	cfg := np.GetConfig()
	keep := map[string]string{}
	for _, k := range []string{gketpu.LabelAccelerator, gketpu.LabelTopology} {
		if v, ok := s.labels[k]; ok {
			keep[k] = v
		}
	}
	s.labels = map[string]string{}
	for k, v := range cfg.GetLabels() {
		s.labels[k] = v
	}
	for k, v := range keep {
		s.labels[k] = v
	}
	s.machineType = cfg.GetMachineType()
	s.version = np.GetVersion()
	s.labels[gketpu.LabelNodePool] = np.GetName()
	s.labels[corev1.LabelInstanceTypeStable] = s.machineType
	s.labels["beta.kubernetes.io/instance-type"] = s.machineType
	s.labels["cloud.google.com/machine-family"] = strings.SplitN(s.machineType, "-", 2)[0]
	s.labels["cloud.google.com/gke-os-distribution"] = "cos"
	s.labels["cloud.google.com/gke-boot-disk"] = cfg.GetDiskType()
	s.labels["kubernetes.io/os"] = "linux"
	s.labels["kubernetes.io/arch"] = "amd64"
	s.labels["topology.kubernetes.io/region"] = s.region
	if cfg.GetSpot() {
		s.labels["cloud.google.com/gke-spot"] = "true"
	}
	s.taints = nil
	for _, t := range cfg.GetTaints() {
		s.taints = append(s.taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: taintEffect(t.Effect)})
	}
	// The pool's configuration holds GKE's TPU taint (rules.addNodeConfigAnswers); one restored
	// from an older state may not.
	if s.chips > 0 && !slices.ContainsFunc(s.taints, func(t corev1.Taint) bool { return t.Key == gketpu.ResourceName }) {
		s.taints = append(s.taints, corev1.Taint{Key: gketpu.ResourceName, Value: gketpu.TaintValue, Effect: corev1.TaintEffect(gketpu.TaintEffect)})
	}
}

func taintEffect(e containerpb.NodeTaint_Effect) corev1.TaintEffect {
	switch e {
	case containerpb.NodeTaint_PREFER_NO_SCHEDULE:
		return corev1.TaintEffectPreferNoSchedule
	case containerpb.NodeTaint_NO_EXECUTE:
		return corev1.TaintEffectNoExecute
	default:
		return corev1.TaintEffectNoSchedule
	}
}

type desiredNode struct {
	name   string
	zone   string
	worker int
}

func (s poolNodesSpec) nodes() []desiredNode {
	var out []desiredNode
	i := 0
	for _, z := range s.zones {
		for j := 0; j < s.perZone; j++ {
			out = append(out, desiredNode{name: nodeName(s.prefix, i), zone: z, worker: i})
			i++
		}
	}
	return out
}

func (s poolNodesSpec) node(d desiredNode) *corev1.Node {
	labels := map[string]string{}
	for k, v := range s.labels {
		labels[k] = v
	}
	labels[corev1.LabelTopologyZone] = d.zone
	labels["kubernetes.io/hostname"] = d.name
	taints := append([]corev1.Taint(nil), s.taints...)
	if s.failed[d.worker] {
		// What the node lifecycle controller adds to a node whose kubelet stopped reporting.
		taints = append(taints,
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: d.name, Labels: labels},
		Spec: corev1.NodeSpec{
			ProviderID:    fmt.Sprintf("gce://%s/%s/%s", s.project, d.zone, d.name),
			Taints:        taints,
			Unschedulable: s.recovering && !s.failed[d.worker],
		},
	}
}

func (s poolNodesSpec) status(d desiredNode) corev1.NodeStatus {
	// The machine type's vCPUs and memory (machines), less what GKE reserves for the system.
	m, _ := machines.Lookup(s.machineType)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(m.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(m.MemoryMiB<<20, resource.BinarySI),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	allocatable := capacity.DeepCopy()
	allocatable[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(m.VCPUs)*1000-m.ReservedMilliCPU(), resource.DecimalSI)
	allocatable[corev1.ResourceMemory] = *resource.NewQuantity((m.MemoryMiB-m.ReservedMiB())<<20, resource.BinarySI)
	if s.chips > 0 {
		capacity[corev1.ResourceName(gketpu.ResourceName)] = resource.MustParse(strconv.Itoa(s.chips))
		allocatable[corev1.ResourceName(gketpu.ResourceName)] = resource.MustParse(strconv.Itoa(s.chips))
	}
	ready := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}
	if s.failed[d.worker] {
		ready.Status, ready.Reason, ready.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: allocatable,
		Conditions:  []corev1.NodeCondition{ready},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.128.%d.%d", d.worker/250, d.worker%250+2)},
			{Type: corev1.NodeHostName, Address: d.name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:          rules.KubeletVersion(s.version),
			KubeProxyVersion:        rules.KubeletVersion(s.version), //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			OperatingSystem:         "linux",
			Architecture:            "amd64",
			OSImage:                 "Container-Optimized OS from Google",
			ContainerRuntimeVersion: "containerd://1.7.28",
		},
	}
}

// syncPoolNodes makes the cluster's nodes of pool s.pool exactly the ones s describes: creates
// missing ones, updates labels, taints and status, and deletes extra ones.
func (e *Emulator) syncPoolNodes(ctx context.Context, c *cluster, s poolNodesSpec) error {
	kube, _ := c.clients()
	if kube == nil {
		return fmt.Errorf("the cluster's kube-apiserver is not running")
	}
	nodes := kube.CoreV1().Nodes()
	existing, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: gketpu.LabelNodePool + "=" + s.pool})
	if err != nil {
		return err
	}
	have := map[string]*corev1.Node{}
	for i := range existing.Items {
		have[existing.Items[i].Name] = &existing.Items[i]
	}
	for _, d := range s.nodes() {
		want := s.node(d)
		cur, ok := have[d.name]
		delete(have, d.name)
		if ok && cur.Spec.ProviderID != "" && cur.Spec.ProviderID != want.Spec.ProviderID {
			// Workers are numbered zone after zone, so resizing a pool of several zones gives a
			// name to a host of another zone: another VM, another Node (the API server refuses
			// "node updates may not change providerID except from "" to valid").
			if err := nodes.Delete(ctx, d.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			ok = false
		}
		if ok {
			cur.Labels, cur.Spec.Taints, cur.Spec.ProviderID = want.Labels, want.Spec.Taints, want.Spec.ProviderID
			if want.Spec.Unschedulable {
				cur.Spec.Unschedulable = true // a drain's cordon is not undone by a sync
			}
			if cur, err = nodes.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				return err
			}
		} else if cur, err = nodes.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return err
		}
		// Status is dropped on create; it is its own subresource.
		cur.Status = s.status(d)
		if _, err := nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	extra := make([]string, 0, len(have))
	for name := range have {
		extra = append(extra, name)
	}
	return removeNodes(ctx, kube, extra)
}

// deletePoolNodes removes every node of a pool.
func (e *Emulator) deletePoolNodes(ctx context.Context, c *cluster, pool string) error {
	kube, _ := c.clients()
	if kube == nil {
		return nil // no kube-apiserver, no nodes
	}
	list, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: gketpu.LabelNodePool + "=" + pool})
	if err != nil {
		return err
	}
	names := make([]string, len(list.Items))
	for i, n := range list.Items {
		names[i] = n.Name
	}
	return removeNodes(ctx, kube, names)
}

// drainWait bounds how long a drain waits for the Pods it deleted to go (the node agent, as their
// kubelet, removes them at once; a Pod no kubelet serves is left to the Pod garbage collector).
const drainWait = 30 * time.Second

// removeNodes drains the nodes, then deletes them. GKE drains a node pool it deletes: "When you
// delete a node pool, GKE drains all the nodes in the node pool. The draining process involves GKE
// deleting Pods on each node in the node pool" (gcloud container node-pools delete); the emulator
// drains before every removal of nodes, a resize down included (INFERRED for resizes, as the
// cluster autoscaler drains the nodes it removes). Each node is cordoned, its Pods are deleted
// with their own grace period, and the nodes go once the Pods have gone or drainWait has passed.
func removeNodes(ctx context.Context, kube kubernetes.Interface, names []string) error {
	if len(names) == 0 {
		return nil
	}
	nodes, pods := kube.CoreV1().Nodes(), kube.CoreV1().Pods("")
	var left []corev1.Pod
	for _, name := range names {
		patch := []byte(`{"spec":{"unschedulable":true}}`)
		if _, err := nodes.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		on, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
		if err != nil {
			return err
		}
		for _, p := range on.Items {
			err := kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
			left = append(left, p)
		}
	}
	deadline := time.Now().Add(drainWait)
	for len(left) > 0 && time.Now().Before(deadline) {
		p := left[0]
		got, err := kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && got.UID != p.UID) {
			left = left[1:]
			continue
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
	for _, name := range names {
		if err := nodes.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// FailHost implements Controller: the host's node turns NotReady (Ready=Unknown, as when a
// kubelet stops posting status) and the pool RUNNING_WITH_ERROR.
func (e *Emulator) FailHost(ctx context.Context, h HostFailure) error {
	e.mu.Lock()
	c := e.st.clusters[h.Cluster]
	if c == nil {
		e.mu.Unlock()
		return fmt.Errorf("no cluster %s", h.Cluster)
	}
	p := c.pool(h.NodePool)
	if p == nil {
		e.mu.Unlock()
		return fmt.Errorf("no node pool %s in %s", h.NodePool, h.Cluster)
	}
	if p.PB.Status != containerpb.NodePool_RUNNING && p.PB.Status != containerpb.NodePool_RUNNING_WITH_ERROR {
		e.mu.Unlock()
		return fmt.Errorf("node pool %s is %s, not RUNNING", h.NodePool, p.PB.Status)
	}
	if h.Worker < 0 || h.Worker >= p.TotalNodes() {
		e.mu.Unlock()
		return fmt.Errorf("node pool %s has workers 0..%d, not %d", h.NodePool, p.TotalNodes()-1, h.Worker)
	}
	if !containsInt(p.FailedHosts, h.Worker) {
		p.FailedHosts = append(p.FailedHosts, h.Worker)
		sort.Ints(p.FailedHosts)
	}
	p.PB.Status = containerpb.NodePool_RUNNING_WITH_ERROR
	spec := nodesSpecLocked(c, p)
	p.PB.StatusMessage = fmt.Sprintf("Node %s is not ready: the host failed.", nodeName(spec.prefix, h.Worker)) //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	e.persistLocked()
	e.mu.Unlock()
	return e.syncPoolNodes(ctx, c, spec)
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
