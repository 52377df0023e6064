package kube

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// Host is one host (VM, Kubernetes node) of a TPU slice.
type Host struct {
	// Name is the node's name.
	Name string
	// WorkerID is the host's position in worker order, 0 to hosts-1 (see SliceHosts).
	WorkerID int
	// Ready is true when the node's Ready condition is True.
	Ready bool
	// NotReadyReason says why Ready is false: the Ready condition's reason and message, or that
	// the node has no Ready condition yet. Empty when Ready.
	NotReadyReason string
	// Lost is true when the cluster has lost touch with the node: its Ready condition is Unknown,
	// which the node controller sets "if the node controller has not heard from the node in the
	// last node-monitor-grace-period" (Kubernetes, "Nodes": Node status, Conditions). A node that
	// boots or that its kubelet reports not ready (Ready False) is not lost.
	Lost bool
	// Cordoned is true when the node takes no new Pods (spec.unschedulable): drained, or a host of
	// a multi-host slice whose other host failed, which recovers with it.
	Cordoned bool
	// Labels are the node's labels (GKE's cloud.google.com/gke-tpu-accelerator,
	// cloud.google.com/gke-tpu-topology, topology.kubernetes.io/zone, ...).
	Labels map[string]string
}

// workerIndexRE is the worker index at the end of a node name: the digits after the last hyphen.
var workerIndexRE = regexp.MustCompile(`-([0-9]+)$`)

// SliceHosts lists the nodes of a node pool (label cloud.google.com/gke-nodepool=<nodePool>) in
// worker order, Ready or not.
//
// Worker order is:
//
//  1. by the worker index in the node names, when every node of the pool has one: the number
//     after the name's last hyphen. The emulator names a pool's nodes
//     gke-<cluster>-<pool>-<hash>-<index>, the index being the host's TPU_WORKER_ID
//     (zero-padded, numbered zone after zone for a pool spread over zones); a number rather than
//     the text decides, so that -10 comes after -9.
//  2. otherwise by name. GKE names a node after its VM, gke-<cluster>-<pool>-<hash>-<suffix>
//     with four random characters from the managed instance group as the suffix, and documents
//     no worker index on nodes (TPU_WORKER_ID reaches pods through the KubeRay TPU webhook), so
//     the name is the stable order there is. A pool whose random suffixes happen to be all
//     digits sorts the same either way, since the suffixes have the same width.
//
// Ties (two names with the same index) fall back to the name. WorkerID is the position in that
// order, so it runs 0..n-1 even if the names' numbering has gaps.
func (c *Client) SliceHosts(ctx context.Context, nodePool string) ([]Host, error) {
	sel, err := poolSelector(nodePool)
	if err != nil {
		return nil, err
	}
	list, err := c.listPoolNodes(ctx, nodePool, sel)
	if err != nil {
		return nil, err
	}
	return hostsInWorkerOrder(list.Items), nil
}

// poolSelector is the label selector of a node pool's nodes.
func poolSelector(nodePool string) (string, error) {
	if nodePool == "" {
		return "", errors.New("kube: listing the hosts of a node pool: the node pool name is empty")
	}
	sel, err := labels.ValidatedSelectorFromSet(labels.Set{tpu.LabelNodePool: nodePool})
	if err != nil {
		return "", fmt.Errorf("kube: node pool name %q is not a valid label value: %w", nodePool, err)
	}
	return sel.String(), nil
}

func (c *Client) listPoolNodes(ctx context.Context, nodePool, sel string) (*corev1.NodeList, error) {
	list, err := c.core.Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("kube: listing nodes of node pool %q: %w", nodePool, c.explain(err))
	}
	return list, nil
}

// hostsInWorkerOrder sorts nodes as SliceHosts documents and turns them into Hosts.
func hostsInWorkerOrder(nodes []corev1.Node) []Host {
	type entry struct {
		node  *corev1.Node
		index int
	}
	entries := make([]entry, len(nodes))
	byIndex := true
	for i := range nodes {
		entries[i].node = &nodes[i]
		m := workerIndexRE.FindStringSubmatch(nodes[i].Name)
		if m == nil {
			byIndex = false
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil { // more digits than an int holds
			byIndex = false
			continue
		}
		entries[i].index = n
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if byIndex && a.index != b.index {
			return a.index < b.index
		}
		return a.node.Name < b.node.Name
	})
	hosts := make([]Host, len(entries))
	for i, e := range entries {
		ready, reason := nodeReady(e.node)
		hosts[i] = Host{Name: e.node.Name, WorkerID: i, Ready: ready, NotReadyReason: reason, Lost: nodeLost(e.node),
			Cordoned: e.node.Spec.Unschedulable, Labels: e.node.Labels}
	}
	return hosts
}

// nodeReady reads the node's Ready condition.
func nodeReady(n *corev1.Node) (bool, string) {
	for _, cond := range n.Status.Conditions {
		if cond.Type != corev1.NodeReady {
			continue
		}
		if cond.Status == corev1.ConditionTrue {
			return true, ""
		}
		why := "Ready is " + string(cond.Status)
		if cond.Reason != "" {
			why = cond.Reason
		}
		if cond.Message != "" {
			why += ": " + cond.Message
		}
		return false, why
	}
	return false, "no Ready condition yet"
}

// nodeLost reports a node whose Ready condition is Unknown.
func nodeLost(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionUnknown
		}
	}
	return false
}

// watchTimeout is how long the API server keeps one watch of WaitForSliceHosts open; then the
// wait lists the nodes again and watches anew.
const watchTimeout = 5 * time.Minute

// WaitForSliceHosts waits until at least want of the node pool's hosts are Ready and returns them
// all in worker order. It lists the pool's nodes, then watches them from that listing: a node pool
// takes minutes to create, and one open watch sees a host turn Ready the moment it does, where
// listing every poll would load the API server and notice it up to a poll late. When a watch ends
// (after watchTimeout, or when the listing is too old to watch from) the wait lists again after
// poll (DefaultPollInterval when ≤ 0), which is also the pause before retrying connection trouble
// and 5xx answers; a rejected certificate or token ends the wait at once. Where the caller may list
// nodes but not watch them (403 on the watch), the wait lists every poll instead. When ctx ends first, the
// error wraps ctx's error, says how many of want hosts are Ready after how long and names the ones
// that are not (and how many have not registered); the hosts are the last ones seen.
func (c *Client) WaitForSliceHosts(ctx context.Context, nodePool string, want int, poll time.Duration) ([]Host, error) {
	if want < 1 {
		return nil, fmt.Errorf("kube: waiting for the hosts of node pool %q: want %d hosts, need at least 1", nodePool, want)
	}
	sel, err := poolSelector(nodePool)
	if err != nil {
		return nil, err
	}
	var (
		last []Host
		read bool
		// listOnly is set once a watch is refused (403) where listing is allowed, as it is to an
		// RBAC role with list but not watch on nodes: the wait then lists every poll.
		listOnly bool
	)
	err = waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		list, err := c.listPoolNodes(ctx, nodePool, sel)
		if err != nil {
			return false, err
		}
		nodes := make(map[string]corev1.Node, len(list.Items))
		for _, n := range list.Items {
			nodes[n.Name] = n
		}
		// enough refreshes last from nodes, so that a timeout describes what was last seen.
		enough := func() bool {
			all := make([]corev1.Node, 0, len(nodes))
			for _, n := range nodes {
				all = append(all, n)
			}
			last, read = hostsInWorkerOrder(all), true
			return countReady(last) >= want
		}
		if enough() {
			return true, nil
		}
		if listOnly {
			return false, nil
		}
		done, err := c.watchPoolNodes(ctx, nodePool, sel, list.ResourceVersion, func(event watch.EventType, n *corev1.Node) bool {
			if event == watch.Deleted {
				delete(nodes, n.Name)
			} else {
				nodes[n.Name] = *n
			}
			return enough()
		})
		if apierrors.IsForbidden(err) {
			listOnly = true
			return false, nil
		}
		return done, err
	}, func(waited time.Duration) string {
		if !read {
			return fmt.Sprintf("kube: node pool %q: hosts unknown after waiting %s: the nodes could not be listed", nodePool, waited)
		}
		var msg strings.Builder
		fmt.Fprintf(&msg, "kube: node pool %q: %d of %d hosts Ready after waiting %s", nodePool, countReady(last), want, waited)
		var notReady []string
		for _, h := range last {
			if !h.Ready {
				notReady = append(notReady, fmt.Sprintf("%s (%s)", h.Name, h.NotReadyReason))
			}
		}
		if len(notReady) > 0 {
			fmt.Fprintf(&msg, "; not ready: %s", strings.Join(notReady, ", "))
		}
		if missing := want - len(last); missing > 0 {
			fmt.Fprintf(&msg, "; %d of %d nodes not registered yet", missing, want)
		}
		return msg.String()
	})
	if err != nil && !read {
		err = &notObserved{err}
	}
	return last, err
}

// watchPoolNodes watches the pool's nodes (label selector sel) from resourceVersion and hands
// each added, changed or deleted node to apply, until apply reports enough (true, nil) or the
// watch ends. A watch that ends without a failure of the cluster's making — closed by the API
// server, its resource version too old (410), or ctx ending — gives (false, nil): the caller lists
// again, or reports what it last saw. Other failures are returned for waitFor to judge.
func (c *Client) watchPoolNodes(ctx context.Context, nodePool, sel, resourceVersion string, apply func(watch.EventType, *corev1.Node) bool) (bool, error) {
	// The API server ends the watch after watchTimeout; this later deadline ends one whose
	// connection died silently.
	ctx, cancel := context.WithTimeout(ctx, watchTimeout+requestTimeout)
	defer cancel()
	timeout := int64(watchTimeout / time.Second)
	w, err := c.coreWatch.Nodes().Watch(ctx, metav1.ListOptions{
		LabelSelector:       sel,
		ResourceVersion:     resourceVersion,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      &timeout,
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		return false, fmt.Errorf("kube: watching nodes of node pool %q: %w", nodePool, c.explain(err))
	}
	defer w.Stop()
	for {
		var (
			event watch.Event
			open  bool
		)
		select {
		case <-ctx.Done():
			return false, nil
		case event, open = <-w.ResultChan():
		}
		if !open {
			return false, nil
		}
		switch event.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			n, ok := event.Object.(*corev1.Node)
			if !ok {
				return false, fmt.Errorf("kube: watching nodes of node pool %q: a %s event carries a %T, not a node", nodePool, event.Type, event.Object)
			}
			if apply(event.Type, n) {
				return true, nil
			}
		case watch.Error:
			err := apierrors.FromObject(event.Object)
			if ctx.Err() != nil || apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				return false, nil
			}
			return false, fmt.Errorf("kube: watching nodes of node pool %q: %w", nodePool, c.explain(err))
		}
		// A bookmark only moves the resource version on, which a fresh listing does too.
	}
}

func countReady(hosts []Host) int {
	n := 0
	for _, h := range hosts {
		if h.Ready {
			n++
		}
	}
	return n
}
