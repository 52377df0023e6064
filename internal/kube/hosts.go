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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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
	if nodePool == "" {
		return nil, errors.New("kube: listing the hosts of a node pool: the node pool name is empty")
	}
	sel, err := labels.ValidatedSelectorFromSet(labels.Set{tpu.LabelNodePool: nodePool})
	if err != nil {
		return nil, fmt.Errorf("kube: node pool name %q is not a valid label value: %w", nodePool, err)
	}
	list, err := c.core.Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("kube: listing nodes of node pool %q: %w", nodePool, c.explain(err))
	}
	return hostsInWorkerOrder(list.Items), nil
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
		hosts[i] = Host{Name: e.node.Name, WorkerID: i, Ready: ready, NotReadyReason: reason, Labels: e.node.Labels}
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

// WaitForSliceHosts lists the node pool's hosts every poll (DefaultPollInterval when poll ≤ 0)
// until at least want of them are Ready, and returns them all in worker order. Connection trouble
// and 5xx answers are retried; a rejected certificate or token ends the wait at once. When ctx
// ends first, the error wraps ctx's error, says how many of want hosts are Ready after how long
// and names the ones that are not (and how many have not registered); the hosts are the last ones
// listed.
func (c *Client) WaitForSliceHosts(ctx context.Context, nodePool string, want int, poll time.Duration) ([]Host, error) {
	if want < 1 {
		return nil, fmt.Errorf("kube: waiting for the hosts of node pool %q: want %d hosts, need at least 1", nodePool, want)
	}
	var (
		last []Host
		read bool
	)
	err := waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		hosts, err := c.SliceHosts(ctx, nodePool)
		if err != nil {
			return false, err
		}
		last, read = hosts, true
		return countReady(hosts) >= want, nil
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
	return last, err
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
