package rayproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// target is the Ray Pod and port a request is for.
type target struct {
	pod     *corev1.Pod
	port    int
	cluster types.UID // the RayCluster the Pod belongs to
	head    bool
}

// resolve finds the Pod and port that host:port names: a Pod address, or a Service's cluster DNS
// name (<service>.<namespace>.svc, with or without the cluster domain), resolved to one of the
// running, ready Pods it selects, as kube-proxy would route to its endpoints.
func resolve(ctx context.Context, kube kubernetes.Interface, hostport string) (target, error) {
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return target{}, err
	}
	var pod *corev1.Pod
	if net.ParseIP(host) != nil {
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.podIP=" + host})
		if err != nil {
			return target{}, err
		}
		// The field selector is the server's filter; the check is kept for clients that ignore it.
		var at []corev1.Pod
		for _, p := range pods.Items {
			if p.Status.PodIP == host {
				at = append(at, p)
			}
		}
		if pod = firstServing(at, false); pod == nil {
			return target{}, fmt.Errorf("no running Pod has the address %s", host)
		}
	} else {
		if pod, port, err = resolveService(ctx, kube, host, port); err != nil {
			return target{}, err
		}
	}
	owner := metav1.GetControllerOf(pod)
	if pod.Labels[rayClusterLabel] == "" || owner == nil || owner.Kind != "RayCluster" {
		return target{}, fmt.Errorf("%s/%s is not a Pod of a RayCluster", pod.Namespace, pod.Name)
	}
	return target{pod: pod, port: port, cluster: owner.UID, head: pod.Labels[rayNodeTypeLabel] == "head"}, nil
}

func resolveService(ctx context.Context, kube kubernetes.Interface, host string, port int) (*corev1.Pod, int, error) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) < 3 || parts[2] != "svc" {
		return nil, 0, fmt.Errorf("no such host: %s is neither a Pod address nor a Service's name in the cluster", host)
	}
	svc, err := kube.CoreV1().Services(parts[1]).Get(ctx, parts[0], metav1.GetOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("no such host: %w", err)
	}
	var targetPort *intstr.IntOrString
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == port {
			targetPort = &p.TargetPort
		}
	}
	if targetPort == nil {
		return nil, 0, fmt.Errorf("the Service %s/%s has no port %d", svc.Namespace, svc.Name, port)
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, 0, fmt.Errorf("the Service %s/%s selects no Pods", svc.Namespace, svc.Name)
	}
	pods, err := kube.CoreV1().Pods(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return nil, 0, err
	}
	pod := firstServing(pods.Items, true)
	if pod == nil {
		return nil, 0, fmt.Errorf("the Service %s/%s has no ready endpoints", svc.Namespace, svc.Name)
	}
	switch {
	case targetPort.Type == intstr.String:
		port = containerPort(pod, targetPort.StrVal, 0)
		if port == 0 {
			return nil, 0, fmt.Errorf("the Pod %s/%s has no port named %q", pod.Namespace, pod.Name, targetPort.StrVal)
		}
	case targetPort.IntVal != 0:
		port = int(targetPort.IntVal)
	}
	return pod, port, nil
}

// firstServing is the first Pod, by name, that runs and is not being deleted (and is Ready when
// ready).
func firstServing(pods []corev1.Pod, ready bool) *corev1.Pod {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		if ready && !podReady(p) {
			continue
		}
		return p
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// rayNodes are the Ray resources of each running Pod of the RayCluster ns/name.
func rayNodes(ctx context.Context, kube kubernetes.Interface, ns, name string) ([]map[string]float64, error) {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{rayClusterLabel: name}).String()})
	if err != nil {
		return nil, err
	}
	var nodes []map[string]float64
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || len(p.Spec.Containers) == 0 {
			continue
		}
		nodes = append(nodes, nodeResources(p.Spec.Containers[0].Resources))
	}
	return nodes, nil
}

// nodeResources are the Ray resources KubeRay starts a node with from its container's resources
// (ray-operator v1.5.0 controllers/ray/common/pod.go generateRayStartCommand and
// addWellKnownAcceleratorResources): CPU from the limit, else the request, as Quantity.Value
// rounds it; GPU and TPU from the limits.
func nodeResources(r corev1.ResourceRequirements) map[string]float64 {
	out := map[string]float64{}
	cpu := r.Limits[corev1.ResourceCPU]
	if cpu.IsZero() {
		cpu = r.Requests[corev1.ResourceCPU]
	}
	if !cpu.IsZero() {
		out["CPU"] = float64(cpu.Value())
	}
	for resource, ray := range map[corev1.ResourceName]string{"nvidia.com/gpu": "GPU", "google.com/tpu": "TPU"} {
		if q, ok := r.Limits[resource]; ok && !q.IsZero() {
			out[ray] = float64(q.Value())
		}
	}
	return out
}

// place fits replicas of a deployment that each need need onto nodes, first fit; when they do not
// all fit it says how many could not, the resources each needs and what the cluster has in total
// (INFERRED wording: Ray's Serve controller warns of replicas it cannot schedule with the resources
// they need and those available, but its exact text was not confirmed).
func place(nodes []map[string]float64, replicas int, need map[string]float64) (bool, string) {
	free := make([]map[string]float64, len(nodes))
	total := map[string]float64{}
	for i, n := range nodes {
		free[i] = map[string]float64{}
		for k, v := range n {
			free[i][k], total[k] = v, total[k]+v
		}
	}
	placed := 0
	for r := 0; r < replicas; r++ {
		for _, node := range free {
			if fits(node, need) {
				for k, v := range need {
					node[k] -= v
				}
				placed++
				break
			}
		}
	}
	if placed == replicas {
		return true, ""
	}
	needText, _ := json.Marshal(need)
	totalText, _ := json.Marshal(total)
	return false, fmt.Sprintf("%d of %d replicas cannot be scheduled. Resources required for each replica: %s, total resources available: %s.", replicas-placed, replicas, needText, totalText)
}

func fits(node, need map[string]float64) bool {
	for k, v := range need {
		if v > 0 && node[k] < v {
			return false
		}
	}
	return true
}
