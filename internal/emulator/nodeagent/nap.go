package nodeagent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// Node auto-provisioning (NAP) for TPUs: a cluster whose Cluster.autoscaling enables node
// auto-provisioning gets, for Pods the scheduler found no room for, node pools of the TPU slice
// they ask for, within the chips its resource limits allow. What pool a Pod gets, what it counts
// against the limits and its name are GKE's rules (rules/nap.go, with their sources); this is the
// loop that reads the Pods and creates the pools.
//
// Sources:
//   - Events on the Pods as the cluster autoscaler records them: TriggeredScaleUp "pod triggered
//     scale-up: [...]" and NotTriggerScaleUp "pod didn't trigger scale-up: ..."
//     (kubernetes/autoscaler@16c271a3: cluster-autoscaler/processors/status/
//     eventing_scale_up_processor.go), with its reason "max cluster X limit reached" (X the
//     resources whose limits a new pool would pass, sorted, joined by ", ")
//     (cluster-autoscaler/core/scaleup/orchestrator/skippedreasons.go) and "in backoff after
//     failed scale-up"; other reasons are the emulator's words.
//
// INFERRED: after a failed creation the shape backs off for napBackoff (the cluster autoscaler's
// default initial node group backoff); idle auto-provisioned pools are never deleted.

// napBackoff is how long NAP leaves a slice shape alone after a pool of it failed to come up.
const napBackoff = 5 * time.Minute

// ClusterSnapshot is what NAP needs to know of the cluster, copied under the emulator's lock.
type ClusterSnapshot struct {
	// NAP says whether node auto-provisioning is on (autoscaling.enableNodeAutoprovisioning).
	NAP bool
	// Limits is the maximum of each resource type (autoscaling.resourceLimits).
	Limits map[string]int64
	// Version is the cluster's current master version.
	Version string
	// Zone is the zone NAP creates pools in (rules.NAPZone).
	Zone string
	// Defaults are the cluster's autoprovisioningNodePoolDefaults (nil: none), a copy of its own.
	Defaults *containerpb.AutoprovisioningNodePoolDefaults
	Pools    []PoolSnapshot
}

// PoolSnapshot is what NAP needs to know of one node pool.
type PoolSnapshot struct {
	Name            string
	Status          containerpb.NodePool_Status
	Autoprovisioned bool
	// Shape is the pool's rules.NAPShapeKey for a TPU pool, "" for another.
	Shape string
	// Usage is what the pool's nodes count against the cluster's limits (rules.NAPUsage).
	Usage map[string]int64
}

func (a *Agent) kickNAP() {
	select {
	case a.napKick <- struct{}{}:
	default:
	}
}

// napLoop runs a NAP round when Pods turn unschedulable or nodes change, and every few seconds
// while Pods still wait (an operation of the cluster may have been in the way).
func (a *Agent) napLoop(ctx context.Context) {
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
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		case <-tick:
		}
		waiting = a.napPass(ctx)
	}
}

// napDemand is one slice's worth of Pods waiting for room: the Pods of one replica of a
// multi-host worker group, or one Pod of a single-host slice.
type napDemand struct {
	shape rules.NAPShape
	pods  []*corev1.Pod
	// class and priority are the ComputeClass the Pods select and the rule of it NAP tries
	// (nap_class.go); priority is nil for Pods of no class.
	class    string
	index    int
	priority *rules.ClassPriority
}

// napPass runs one round of node auto-provisioning over the Pods the scheduler marked
// unschedulable. It reports whether Pods are still waiting, so that the caller comes back.
func (a *Agent) napPass(ctx context.Context) bool {
	var pending []*corev1.Pod
	placed := map[string]bool{} // replica keys with a Pod on a node
	for _, obj := range a.pods.GetStore().List() {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName != "" {
			if k := a.cfg.ReplicaKey(p); k != "" {
				placed[k] = true
			}
			continue
		}
		sel := p.Spec.NodeSelector
		if podUnschedulable(p) && (sel[gketpu.LabelAccelerator] != "" && sel[gketpu.LabelTopology] != "" || sel[rules.LabelComputeClass] != "") {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		return false
	}
	cl, ok := a.cfg.Cluster()
	if !ok {
		return true
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].CreationTimestamp.Before(&pending[j].CreationTimestamp) })
	demands := a.napDemands(ctx, pending, placed, cl)

	// Auto-provisioned pools still free (coming up, or up with no Pod on any node) serve demands
	// first: the scheduler will place Pods there.
	free := a.freeNAPPools(cl)
	used := map[string]int64{}
	for _, p := range cl.Pools {
		if p.Status != containerpb.NodePool_ERROR {
			rules.AddUsage(used, p.Usage)
		}
	}
	for _, d := range demands {
		key := d.key()
		if free[key] > 0 {
			free[key]--
			continue
		}
		if until, ok := a.napBackoff[d.backoffKey()]; ok && time.Now().Before(until) {
			a.napEvents(ctx, d.pods, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 in backoff after failed scale-up")
			continue
		}
		delta := rules.NAPUsage(d.shape.Machine.Name, d.shape.Accelerator, d.shape.Machine.ChipsPerVM, d.shape.Slice.Hosts)
		// A class that creates its own pools does so without cluster-level NAP, whose limits
		// then do not apply (INFERRED: GKE documents the limits for node auto-provisioning only).
		if cl.NAP {
			if exceeded := rules.NAPExceeded(cl.Limits, used, delta); len(exceeded) > 0 {
				a.napEvents(ctx, d.pods, "NotTriggerScaleUp", fmt.Sprintf("pod didn't trigger scale-up: 1 max cluster %s limit reached", strings.Join(exceeded, ", ")))
				continue
			}
		}
		np := rules.NAPNodePool(d.shape, cl.Zone, cl.Defaults)
		if d.priority != nil {
			np = rules.ClassNodePool(d.class, *d.priority, d.shape, cl.Zone, cl.Defaults)
		}
		op, err := a.cfg.CreateNodePool(np)
		if err != nil {
			// Another operation holds the cluster or the pool quota (GKE's concurrency rules):
			// the next round tries again.
			a.logf("cluster %s: node auto-provisioning of %s: %s", a.cfg.Name, np.Name, err.Message)
			continue
		}
		rules.AddUsage(used, delta)
		a.napCreated[np.Name] = d.backoffKey()
		a.logf("cluster %s: node auto-provisioning creates node pool %s (%s, %s, %d nodes%s): operation %s",
			a.cfg.Name, np.Name, d.shape.Machine.Name, d.shape.Topology, d.shape.Slice.Hosts, d.describe(), op.Name)
		a.napEvents(ctx, d.pods, "TriggeredScaleUp", fmt.Sprintf("pod triggered scale-up: [{%s 0->%d (max: %d)}]",
			np.Name, d.shape.Slice.Hosts, np.Autoscaling.MaxNodeCount))
	}
	return true
}

// napDemands groups the pending Pods into slices, telling those NAP passes over why.
func (a *Agent) napDemands(ctx context.Context, pending []*corev1.Pod, placed map[string]bool, cl ClusterSnapshot) []*napDemand {
	var demands []*napDemand
	byReplica := map[string]*napDemand{}
	loose := map[string]*napDemand{}
	classes := map[string]*classLookup{}
	version := cl.Version
	for _, p := range pending {
		var shape rules.NAPShape
		var class *classChoice
		if name := p.Spec.NodeSelector[rules.LabelComputeClass]; name != "" {
			var why string
			if class, why = a.classPriority(ctx, classes, name, p, cl); why != "" {
				a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: "+why)
				continue
			}
			shape = class.shape
		} else {
			if !cl.NAP {
				continue
			}
			var why string
			shape, why = rules.NAPShapeFor(p.Spec.NodeSelector[gketpu.LabelAccelerator], p.Spec.NodeSelector[gketpu.LabelTopology], int(a.cfg.TPUChips(p.Spec.Containers...)))
			if why != "" {
				a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: "+why)
				continue
			}
		}
		if v, ok := rules.NAPMinVersion(shape.Machine.Generation.Name, version); !ok {
			a.napEvent(ctx, p, "NotTriggerScaleUp", fmt.Sprintf("pod didn't trigger scale-up: node auto-provisioning of TPU %s needs GKE %s or later, the cluster runs %s",
				shape.Machine.Generation.Name, v, version))
			continue
		}
		if pinnedToNodePools(p) {
			// A new pool's name is NAP's own, so a Pod held to named pools never fits one: the
			// cluster autoscaler's check of the Pod on the new group's template node fails with
			// the scheduler's NodeAffinity reason.
			a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector")
			continue
		}
		k := a.cfg.ReplicaKey(p)
		if k != "" && placed[k] {
			// The rest of its replica is on a node pool already; the Pod's affinity keeps it
			// there, so no new pool can take it.
			a.napEvent(ctx, p, "NotTriggerScaleUp", "pod didn't trigger scale-up: the rest of its slice is on an existing node pool")
			continue
		}
		if k != "" && shape.Slice.MultiHost {
			d := byReplica[k]
			if d == nil {
				d = newNAPDemand(shape, class)
				byReplica[k] = d
				demands = append(demands, d)
			}
			d.pods = append(d.pods, p)
			continue
		}
		// Pods without a replica: as many slices as they fill.
		lk := newNAPDemand(shape, class).backoffKey()
		d := loose[lk]
		if d == nil || len(d.pods) >= shape.Slice.Hosts {
			d = newNAPDemand(shape, class)
			loose[lk] = d
			demands = append(demands, d)
		}
		d.pods = append(d.pods, p)
	}
	return demands
}

// freeNAPPools counts, by shape, the auto-provisioned pools NAP can still count on: coming up,
// or up with no Pod on any of their nodes. A pool of NAP's that failed puts its shape in backoff.
func (a *Agent) freeNAPPools(cl ClusterSnapshot) map[string]int {
	free := map[string]int{}
	for _, p := range cl.Pools {
		if !p.Autoprovisioned || p.Shape == "" {
			continue
		}
		switch p.Status {
		case containerpb.NodePool_PROVISIONING:
			free[p.Shape]++
		case containerpb.NodePool_RUNNING:
			if !a.poolOccupied(p.Name) {
				free[p.Shape]++
			}
		case containerpb.NodePool_ERROR:
			if shape, ok := a.napCreated[p.Name]; ok {
				delete(a.napCreated, p.Name)
				a.napBackoff[shape] = time.Now().Add(napBackoff)
			}
		}
	}
	return free
}

// poolOccupied says whether a Pod sits on a node of the pool.
func (a *Agent) poolOccupied(pool string) bool {
	for _, obj := range a.nodes.GetStore().List() {
		n, ok := obj.(*corev1.Node)
		if !ok || n.Labels[gketpu.LabelNodePool] != pool {
			continue
		}
		pods, _ := a.pods.GetIndexer().ByIndex(podsByNode, n.Name)
		for _, o := range pods {
			if p, ok := o.(*corev1.Pod); ok && p.DeletionTimestamp == nil && !podTerminal(p) {
				return true
			}
		}
	}
	return false
}

// podUnschedulable: the scheduler set PodScheduled=False with reason Unschedulable, which is what
// the cluster autoscaler looks for.
func podUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

func (a *Agent) napEvents(ctx context.Context, pods []*corev1.Pod, reason, message string) {
	for _, p := range pods {
		a.napEvent(ctx, p, reason, message)
	}
}

// napEvent records an event on a Pod as the cluster autoscaler does, once per Pod and message.
func (a *Agent) napEvent(ctx context.Context, p *corev1.Pod, reason, message string) {
	key := string(p.UID) + "\x00" + reason + "\x00" + message
	if a.napSeen[key] {
		return
	}
	a.napSeen[key] = true
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano()), Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID,
			APIVersion: "v1", ResourceVersion: p.ResourceVersion},
		Reason: reason, Message: message, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "cluster-autoscaler"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := a.cfg.Kube.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
		a.logf("cluster %s: event %s on Pod %s/%s: %v", a.cfg.Name, reason, p.Namespace, p.Name, err)
	}
}

// pinnedToNodePools reports whether the Pod may only run on named node pools: by node selector,
// or by a required node affinity each of whose terms (they are ORed) names pools with In on
// cloud.google.com/gke-nodepool.
func pinnedToNodePools(p *corev1.Pod) bool {
	if p.Spec.NodeSelector[gketpu.LabelNodePool] != "" {
		return true
	}
	if p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil || p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		named := false
		for _, e := range term.MatchExpressions {
			named = named || (e.Key == gketpu.LabelNodePool && e.Operator == corev1.NodeSelectorOpIn)
		}
		if !named {
			return false
		}
	}
	return len(terms) > 0
}
