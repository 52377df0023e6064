package tpuwebhook

import (
	"context"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// whSlice is WH's slice (WH:53-59).
type whSlice struct {
	cluster, group, namespace string
	replica                   int
	numOfHosts                int32
}

// sliceHosts is WH's getSliceToTPUHosts (WH:606-682): the TPU worker IDs already handed out per
// replica of a worker group, read from its Pods. WH reads them from an informer on KubeRay's
// worker Pods (WH:1199-1203) and waits for it to see the Pod it admitted last (WH:815-822); the
// emulator lists them from the API server, which already holds every Pod admitted before (the
// mutations are serialized, and KubeRay creates its Pods one at a time).
func sliceHosts(ctx context.Context, kube kubernetes.Interface, clusterName, group, namespace string, numOfHosts int32) (map[whSlice][]int, error) {
	out := map[whSlice][]int{}
	sel := labels.SelectorFromSet(labels.Set{ClusterLabel: clusterName, GroupLabel: group,
		rayNodeTypeLabel: "worker", k8sCreatedByLabel: kubeRayComponent})
	pods, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Namespace != namespace {
			continue
		}
		if !containerRequestsTPUs(p.Spec.Containers...) {
			return out, nil // WH:630-633
		}
		label := p.Labels[LegacyReplicaLabel]
		if label == "" {
			continue
		}
		parts := strings.Split(label, "-")
		replica, _ := strconv.Atoi(parts[len(parts)-1])
		tpuContainers := 0
		for _, c := range p.Spec.Containers {
			if containerRequestsTPUs(c) {
				tpuContainers++
			}
		}
		host := -1
		for _, c := range p.Spec.Containers {
			if !containerRequestsTPUs(c) {
				continue
			}
			id, _ := envValue("TPU_WORKER_ID", c)
			if id == "" {
				return nil, errors.New("existing TPU worker missing TPU_WORKER_ID")
			}
			n, err := strconv.Atoi(id)
			if err != nil {
				continue
			}
			host = n / tpuContainers
			break
		}
		if host != -1 {
			s := whSlice{clusterName, group, namespace, replica, numOfHosts}
			out[s] = append(out[s], host)
		}
	}
	return out, nil
}

// nextReplicaIndex is WH's getReplicaIndex (WH:552-576): the lowest replica with fewer workers
// than hosts, else the number of replicas seen.
func nextReplicaIndex(slices map[whSlice][]int, clusterName, group, namespace string) int {
	if len(slices) == 0 {
		return 0
	}
	next, replicas := math.MaxInt32, 0
	for s, workers := range slices {
		if s.cluster == clusterName && s.group == group && s.namespace == namespace {
			replicas++
			if len(workers) < int(s.numOfHosts) && s.replica < next {
				next = s.replica
			}
		}
	}
	if next == math.MaxInt32 {
		next = replicas
	}
	return next
}

// nextWorkerID is WH's getNextWorkerID (WH:579-603): the lowest TPU_WORKER_ID not yet used in
// the replica.
func nextWorkerID(slices map[whSlice][]int, s whSlice) (int, error) {
	ids := slices[s]
	if len(ids) == 0 {
		return 0, nil
	}
	sort.Ints(ids)
	id, last := 0, 0
	for i, w := range ids {
		if i > 0 && w == last {
			return 0, errors.New("Identical TPU_WORKER_ID assigned to multiple TPU workers in slice") //nolint:staticcheck // WH's words
		}
		if w != id {
			break
		}
		last = w
		id++
	}
	return id, nil
}
