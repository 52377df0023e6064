package kube

import (
	"fmt"
	"maps"
	"strconv"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// RayClusterSpec is a RayCluster as raytpu manages it: a CPU head and TPU worker groups, each
// group's replicas being whole slices.
type RayClusterSpec struct {
	Namespace, Name string
	RayVersion      string
	Image           string
	Head            RayHead
	Groups          []RayWorkerGroup
	// Annotations are set on the RayCluster (raytpu keeps its own configuration there, so that an
	// import can read it back).
	Annotations map[string]string
}

// RayHead is the head group.
type RayHead struct {
	CPU, Memory    string // Kubernetes quantities, requests and limits
	ServiceType    string // ClusterIP, NodePort or LoadBalancer
	RayStartParams map[string]string
	Pod            PodSettings
}

// RayWorkerGroup is one worker group: Replicas slices of NumOfHosts hosts each.
type RayWorkerGroup struct {
	Name         string
	Replicas     int
	NumOfHosts   int
	ChipsPerHost int
	// NodeSelector selects the slice shape (accelerator and topology labels).
	NodeSelector map[string]string
	// NodePools, when set, confines the group to these node pools (its slices); empty lets any
	// pool of the shape take it, including one node auto-provisioning creates for it.
	NodePools      []string
	CPU, Memory    string // optional, per host
	RayStartParams map[string]string
	Pod            PodSettings
}

// RayClusterObject renders s with KubeRay's Go types.
func RayClusterObject(s RayClusterSpec) (*rayv1.RayCluster, error) {
	head, err := HeadGroupSpec(s.Head, s.Image)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	rc := &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: RayClusterKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Annotations: s.Annotations},
		Spec:       rayv1.RayClusterSpec{RayVersion: s.RayVersion, HeadGroupSpec: head},
	}
	var claimed []string
	for _, g := range s.Groups {
		claimed = append(claimed, g.NodePools...)
	}
	for _, g := range s.Groups {
		spec, err := WorkerGroupSpec(g, s.Image, claimed)
		if err != nil {
			return nil, fmt.Errorf("worker group %s: %w", g.Name, err)
		}
		rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, spec)
	}
	return rc, nil
}

// HeadGroupSpec renders the head group; image is the RayCluster's, unless h.Pod names another.
func HeadGroupSpec(h RayHead, image string) (rayv1.HeadGroupSpec, error) {
	res, err := resources(h.CPU, h.Memory, 0)
	if err != nil {
		return rayv1.HeadGroupSpec{}, err
	}
	return rayv1.HeadGroupSpec{
		ServiceType:    corev1.ServiceType(h.ServiceType),
		RayStartParams: nonNil(h.RayStartParams),
		Template: h.Pod.template(corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ray-head", Image: image, Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
		}}}),
	}, nil
}

// WorkerGroupSpec renders one worker group, whose replicas are whole slices; image is the
// RayCluster's unless g.Pod names another, and claimed are the node pools of the slice groups of
// the whole RayCluster (or RayService), which a group of a shape keeps off.
func WorkerGroupSpec(g RayWorkerGroup, image string, claimed []string) (rayv1.WorkerGroupSpec, error) {
	res, err := resources(g.CPU, g.Memory, g.ChipsPerHost)
	if err != nil {
		return rayv1.WorkerGroupSpec{}, err
	}
	replicas := int32(g.Replicas)
	pod := corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "ray-worker", Image: image, Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
		}},
		NodeSelector: maps.Clone(g.NodeSelector),
		Tolerations: []corev1.Toleration{{
			Key: tpu.ResourceName, Operator: corev1.TolerationOpEqual, Value: tpu.TaintValue, Effect: corev1.TaintEffectNoSchedule,
		}},
	}
	// GKE's TPU webhook replaces the affinity of a multi-host group's Pods with its own, which
	// keeps each replica within one node pool (kuberay-tpu-webhook main.go, injectPodAffinity: a
	// JSON patch "add" of /spec/affinity), and leaves their node selector alone.
	switch {
	case len(g.NodePools) == 1:
		// One slice: the node selector holds the group to it, whatever its host count.
		if pod.NodeSelector == nil {
			pod.NodeSelector = map[string]string{}
		}
		pod.NodeSelector[tpu.LabelNodePool] = g.NodePools[0]
	case len(g.NodePools) > 1:
		// Several slices: only a node affinity names them all. It holds a single-host group; a
		// multi-host group loses it to the webhook, and the placement check after create says
		// when its replicas took another pool of their shape.
		pod.Affinity = nodePoolAffinity(corev1.NodeSelectorOpIn, g.NodePools)
	case len(claimed) > 0:
		// A group of a shape keeps off the slices the other groups take (a single-host v6e-8 is
		// labelled 2x4 too, and two 4-chip workers of a 2x4 shape would fit on it). Only a
		// single-host group keeps this affinity, which is why raytpu refuses a multi-host shape
		// that has the labels of another group's slice.
		pod.Affinity = nodePoolAffinity(corev1.NodeSelectorOpNotIn, claimed)
	}
	return rayv1.WorkerGroupSpec{
		GroupName:      g.Name,
		Replicas:       &replicas,
		MinReplicas:    &replicas,
		MaxReplicas:    &replicas,
		NumOfHosts:     int32(g.NumOfHosts),
		RayStartParams: nonNil(g.RayStartParams),
		Template:       g.Pod.template(pod),
	}, nil
}

// resources is the container's requests and limits: cpu and memory when given, and the TPU chips.
func resources(cpu, memory string, chips int) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a Kubernetes quantity: %w", name, v, err)
		}
		out[name] = q
	}
	if chips > 0 {
		out[corev1.ResourceName(tpu.ResourceName)] = resource.MustParse(strconv.Itoa(chips))
	}
	return out, nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nodePoolAffinity(op corev1.NodeSelectorOperator, pools []string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: tpu.LabelNodePool, Operator: op, Values: pools}},
		}}},
	}}
}
