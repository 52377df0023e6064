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
	// HistoryServer, when set, adds the History Server's collector to the head and every worker.
	HistoryServer *Collector
}

// RayHead is the head group.
type RayHead struct {
	CPU, Memory    string // Kubernetes quantities, requests and limits
	ServiceType    string // ClusterIP, NodePort or LoadBalancer
	RayStartParams map[string]string
	Pod            PodSettings
	// InternalLoadBalancer makes a LoadBalancer service an internal one (GKE's annotation).
	InternalLoadBalancer bool
	// SourceRanges are the CIDR ranges a LoadBalancer service admits (loadBalancerSourceRanges).
	SourceRanges []string
}

// RayWorkerGroup is one worker group: Replicas slices of NumOfHosts hosts each.
type RayWorkerGroup struct {
	Name         string
	Replicas     int
	NumOfHosts   int
	ChipsPerHost int
	// NodeSelector selects the slice shape (accelerator and topology labels).
	NodeSelector map[string]string
	// Claim, when set, holds the group to the slices that carry its labels (SliceClaim); unset
	// lets any pool of the shape that no group claimed take it, including one node
	// auto-provisioning creates for it.
	Claim          *SliceClaim
	CPU, Memory    string // optional, per host
	RayStartParams map[string]string
	Pod            PodSettings
	// WorkersToDelete are Pods KubeRay is to delete first when the group shrinks, so that it
	// takes the replicas raytpu says (those on a slice the group no longer has) rather than
	// any: KubeRay deletes the whole replica of each (raycluster_controller.go,
	// reconcileMultiHostWorkerGroup; each Pod named otherwise).
	WorkersToDelete []string
	// MegascaleSlices, when above 1, sets MEGASCALE_NUM_SLICES on the workers, which is what makes
	// GKE's TPU webhook inject MEGASCALE_SLICE_ID, MEGASCALE_COORDINATOR_ADDRESS and
	// MEGASCALE_PORT for multislice JAX ("If MEGASCALE_NUM_SLICES is set explicitly", ai-on-gke
	// kuberay-tpu-webhook README; main.go, mutatePod).
	MegascaleSlices int
}

// RayClusterObject renders s with KubeRay's Go types.
func RayClusterObject(s RayClusterSpec) (*rayv1.RayCluster, error) {
	spec, err := RayClusterConfig(s)
	if err != nil {
		return nil, err
	}
	return &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: RayClusterKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Annotations: s.Annotations},
		Spec:       spec,
	}, nil
}

// RayClusterConfig renders the spec of s: a RayCluster's spec, and a RayService's
// rayClusterConfig, from which KubeRay makes the RayService's RayClusters.
func RayClusterConfig(s RayClusterSpec) (rayv1.RayClusterSpec, error) {
	head, err := HeadGroupSpec(s.Head, s.Image)
	if err != nil {
		return rayv1.RayClusterSpec{}, fmt.Errorf("head: %w", err)
	}
	spec := rayv1.RayClusterSpec{RayVersion: s.RayVersion, HeadGroupSpec: head}
	// Before the stamp, so that adding or removing the collector replaces the Pods.
	if s.HistoryServer != nil {
		AddCollector(&spec.HeadGroupSpec.Template, *s.HistoryServer, true)
	}
	stamp(&spec.HeadGroupSpec.Template, s.RayVersion, head.RayStartParams)
	for _, g := range s.Groups {
		group, err := WorkerGroupSpec(g, s.Image)
		if err != nil {
			return rayv1.RayClusterSpec{}, fmt.Errorf("worker group %s: %w", g.Name, err)
		}
		if s.HistoryServer != nil {
			AddCollector(&group.Template, *s.HistoryServer, false)
		}
		stamp(&group.Template, s.RayVersion, group.NumOfHosts, group.RayStartParams)
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, group)
	}
	return spec, nil
}

// HeadGroupSpec renders the head group; image is the RayCluster's, unless h.Pod names another.
func HeadGroupSpec(h RayHead, image string) (rayv1.HeadGroupSpec, error) {
	res, err := resources(h.CPU, h.Memory, 0)
	if err != nil {
		return rayv1.HeadGroupSpec{}, err
	}
	var svc *corev1.Service
	if h.InternalLoadBalancer || len(h.SourceRanges) > 0 {
		// KubeRay builds the head Service from this one, with its own name, selector and ports.
		svc = &corev1.Service{Spec: corev1.ServiceSpec{LoadBalancerSourceRanges: h.SourceRanges}}
		if h.InternalLoadBalancer {
			svc.Annotations = map[string]string{InternalLoadBalancerAnnotation: "Internal"}
		}
	}
	return rayv1.HeadGroupSpec{
		ServiceType:    corev1.ServiceType(h.ServiceType),
		HeadService:    svc,
		RayStartParams: nonNil(h.RayStartParams),
		Template: h.Pod.template(corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ray-head", Image: image, Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
		}}}),
	}, nil
}

// WorkerGroupSpec renders one worker group, whose replicas are whole slices; image is the
// RayCluster's unless g.Pod names another.
func WorkerGroupSpec(g RayWorkerGroup, image string) (rayv1.WorkerGroupSpec, error) {
	res, err := resources(g.CPU, g.Memory, g.ChipsPerHost)
	if err != nil {
		return rayv1.WorkerGroupSpec{}, err
	}
	replicas := int32(g.Replicas)
	var env []corev1.EnvVar
	if g.MegascaleSlices > 1 {
		env = append(env, corev1.EnvVar{Name: "MEGASCALE_NUM_SLICES", Value: strconv.Itoa(g.MegascaleSlices)})
	}
	pod := corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "ray-worker", Image: image, Resources: corev1.ResourceRequirements{Requests: res, Limits: res}, Env: env,
		}},
		NodeSelector: maps.Clone(g.NodeSelector),
		Tolerations: []corev1.Toleration{{
			Key: tpu.ResourceName, Operator: corev1.TolerationOpEqual, Value: tpu.TaintValue, Effect: corev1.TaintEffectNoSchedule,
		}},
	}
	if g.Claim != nil {
		// Its slices carry the claim's labels: the node selector, which GKE's TPU webhook leaves
		// alone, holds the group to them (slice_claim.go).
		if pod.NodeSelector == nil {
			pod.NodeSelector = map[string]string{}
		}
		maps.Copy(pod.NodeSelector, g.Claim.Labels())
	} else {
		// A group of a shape keeps off every claimed slice (a single-host v6e-8 is labelled 2x4
		// too, and two 4-chip workers of a 2x4 shape would fit on it). Only a single-host group
		// keeps this affinity: the webhook replaces a multi-host Pod's (kuberay-tpu-webhook
		// main.go, injectPodAffinity: a JSON patch "add" of /spec/affinity), which is why raytpu
		// refuses a multi-host shape that has the labels of another group's slice.
		pod.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: ClaimGroupLabel, Operator: corev1.NodeSelectorOpDoesNotExist}},
			}}},
		}}
	}
	return rayv1.WorkerGroupSpec{
		GroupName:      g.Name,
		Replicas:       &replicas,
		MinReplicas:    &replicas,
		MaxReplicas:    &replicas,
		NumOfHosts:     int32(g.NumOfHosts),
		RayStartParams: nonNil(g.RayStartParams),
		Template:       g.Pod.template(pod),
		ScaleStrategy:  rayv1.ScaleStrategy{WorkersToDelete: g.WorkersToDelete},
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
