package emulator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// reportEvents is how many of a cluster's latest events a report shows.
const reportEvents = 40

// Report is the emulator's view of the clusters whose names (the last part of their resource
// name) are given, of any project and location, or of every cluster when none of them is one:
// each cluster's status and running operations, each node pool's status and hosts, and from its
// kube-apiserver the nodes, the Pods with their phases and the latest events. A failed test
// prints it, so that a machine too slow for a wait can be told from a bug by the log alone.
func (e *Emulator) Report(ctx context.Context, names ...string) string {
	var b strings.Builder
	for _, c := range e.reportedClusters(names) {
		b.WriteString(c.header)
		if c.kube == nil {
			b.WriteString("  kube-apiserver: not running\n")
			continue
		}
		reportKube(ctx, &b, c.kube)
	}
	if b.Len() == 0 {
		return "the emulator has no cluster\n"
	}
	return b.String()
}

// reportedCluster is what a report says of a cluster's GKE side, read under the emulator's lock,
// and the client of its kube-apiserver, read after.
type reportedCluster struct {
	header string
	kube   kubernetes.Interface
}

// reportedClusters are the clusters named, or every cluster when none of them is one.
func (e *Emulator) reportedClusters(names []string) []reportedCluster {
	e.mu.Lock()
	all := e.st.allClusters()
	picked := slices.DeleteFunc(slices.Clone(all), func(c *cluster) bool { return !slices.Contains(names, c.PB.GetName()) })
	if len(picked) == 0 {
		picked = all
	}
	out := make([]reportedCluster, len(picked))
	for i, c := range picked {
		out[i].header = clusterHeader(c, e.st.ops)
	}
	e.mu.Unlock()
	for i, c := range picked {
		out[i].kube, _ = c.clients()
	}
	return out
}

// clusterHeader is the GKE side of a cluster: its status, its unfinished operations and its pools.
func clusterHeader(c *cluster, ops map[string]*operation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s: %s %s\n", c.Key, c.PB.GetStatus(), c.PB.GetStatusMessage()) //nolint:staticcheck // deprecated in the API, still reported by GKE
	var running []string
	for _, op := range ops {
		if op.ClusterKey == c.Key && !op.done() {
			running = append(running, strings.TrimSpace(fmt.Sprintf("%s %s %s", op.PB.GetOperationType(), op.PB.GetStatus(), op.Pool)))
		}
	}
	sort.Strings(running)
	for _, r := range running {
		fmt.Fprintf(&b, "  operation running: %s\n", r)
	}
	for _, p := range c.Pools {
		fmt.Fprintf(&b, "  node pool %s\n", poolLine(p))
	}
	return b.String()
}

func poolLine(p *rules.NodePool) string {
	line := fmt.Sprintf("%s: %s, %d nodes in %v", p.PB.GetName(), p.PB.GetStatus(), p.TotalNodes(), p.Zones)
	if p.Accelerator != "" {
		line += fmt.Sprintf(", %s %s", p.Accelerator, p.Topology)
	}
	if len(p.FailedHosts) > 0 {
		line += fmt.Sprintf(", failed hosts %v", p.FailedHosts)
	}
	if m := p.PB.GetStatusMessage(); m != "" { //nolint:staticcheck // deprecated in the API, still reported by GKE
		line += ": " + m
	}
	for _, cond := range p.PB.GetConditions() {
		line += fmt.Sprintf("; condition %s %s", cond.GetCanonicalCode(), cond.GetMessage())
	}
	return line
}

// reportKube writes a cluster's nodes, Pods and latest events as its kube-apiserver has them.
func reportKube(ctx context.Context, b *strings.Builder, kube kubernetes.Interface) {
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(b, "  nodes: %v\n", err)
	} else {
		for _, n := range nodes.Items {
			fmt.Fprintf(b, "  node %s: %s\n", n.Name, nodeState(n))
		}
	}
	pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(b, "  pods: %v\n", err)
	} else {
		for _, p := range pods.Items {
			fmt.Fprintf(b, "  pod %s/%s: %s\n", p.Namespace, p.Name, podState(p))
		}
	}
	events, err := kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(b, "  events: %v\n", err)
		return
	}
	items := events.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]).Before(eventTime(items[j])) })
	if len(items) > reportEvents {
		fmt.Fprintf(b, "  (%d earlier events left out)\n", len(items)-reportEvents)
		items = items[len(items)-reportEvents:]
	}
	for _, ev := range items {
		fmt.Fprintf(b, "  event %s %s %s %s/%s: %s (x%d)\n", eventTime(ev).Format("15:04:05"), ev.Type, ev.Reason,
			strings.ToLower(ev.InvolvedObject.Kind), ev.InvolvedObject.Name, ev.Message, max(ev.Count, 1))
	}
}

func nodeState(n corev1.Node) string {
	state := "Ready=Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			state = fmt.Sprintf("Ready=%s", c.Status)
			if c.Status != corev1.ConditionTrue && c.Reason != "" {
				state += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
			}
		}
	}
	if pool := n.Labels["cloud.google.com/gke-nodepool"]; pool != "" {
		state += ", pool " + pool
	}
	if n.Spec.Unschedulable {
		state += ", cordoned"
	}
	return state
}

func podState(p corev1.Pod) string {
	state := string(p.Status.Phase)
	if p.DeletionTimestamp != nil {
		state += ", deleting"
	}
	if p.Spec.NodeName != "" {
		state += " on " + p.Spec.NodeName
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && (c.Reason != "" || c.Message != "") {
			state += fmt.Sprintf("; %s=%s %s %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			state += fmt.Sprintf("; container %s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Terminated != nil:
			state += fmt.Sprintf("; container %s terminated: %s, exit %d", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
		}
	}
	return state
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	default:
		return ev.CreationTimestamp.Time
	}
}
