package tpuwebhook

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

// headlessServiceName is KubeRay's "<cluster>-headless" through its CheckName: WH:264-270.
func headlessServiceName(clusterName string) string {
	return kubeRayCheckName(clusterName + "-" + headlessSuffix)
}

// kubeRayCheckName is KR controllers/ray/utils/util.go:192-214 (CheckName): names longer than 50
// lose their start; a leading digit or punctuation becomes "r".
func kubeRayCheckName(s string) string {
	const maxLength = 50
	if len(s) > maxLength {
		s = s[len(s)-maxLength:]
	}
	if s != "" && (unicode.IsDigit(rune(s[0])) || unicode.IsPunct(rune(s[0]))) {
		s = "r" + s[1:]
	}
	return s
}

// tpuWorkerHostnames is "<group>-<replica>-<host>.<headless service>" for every host, comma
// separated: WH:273-286.
func tpuWorkerHostnames(numOfHosts int32, group, clusterName string, replica int) (string, error) {
	if numOfHosts == 0 {
		return "", errors.New("workerGroupSpec NumOfHosts not set")
	}
	svc := headlessServiceName(clusterName)
	names := make([]string, numOfHosts)
	for j := range names {
		names[j] = fmt.Sprintf("%s-%d-%d.%s", group, replica, j, svc)
	}
	return strings.Join(names, ","), nil
}

// tpuProcessAddresses lists host:port for every TPU container of the slice (v7x): WH:290-305.
func tpuProcessAddresses(numOfHosts int32, containers int, group, clusterName string, replica int) string {
	svc := headlessServiceName(clusterName)
	var out []string
	for h := 0; h < int(numOfHosts); h++ {
		for c := 0; c < containers; c++ {
			out = append(out, fmt.Sprintf("%s-%d-%d.%s:%d", group, replica, h, svc, whTPUProcessPortBase+c))
		}
	}
	return strings.Join(out, ",")
}

// tpuAffinity is the scheduling constraint that keeps a multi-host replica on one node pool and
// other replicas and RayClusters off it: WH:357-438, topologyKey cloud.google.com/gke-nodepool.
func tpuAffinity(pod *corev1.Pod, replica int, group string) corev1.Affinity {
	clusterName := pod.Labels[ClusterLabel]
	key, value := LegacyReplicaLabel, fmt.Sprintf("%s-%d", group, replica)
	_, hasName := pod.Labels[ReplicaNameLabel]
	_, hasHost := pod.Labels[HostIndexLabel]
	if hasName && hasHost {
		// KubeRay's unique replica name when it indexes the Pods itself (WH:364-372).
		key, value = ReplicaNameLabel, pod.Labels[ReplicaNameLabel]
	}
	req := func(k string, op metav1.LabelSelectorOperator, v ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: v}
	}
	replicaIn := req(key, metav1.LabelSelectorOpIn, value)
	clusterIn := req(ClusterLabel, metav1.LabelSelectorOpIn, clusterName)
	return corev1.Affinity{
		PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{replicaIn, clusterIn}},
			TopologyKey:   gketpu.LabelNodePool,
		}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					req(key, metav1.LabelSelectorOpNotIn, value), clusterIn,
				}},
				TopologyKey: gketpu.LabelNodePool,
			},
			{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					req(ClusterLabel, metav1.LabelSelectorOpNotIn, clusterName), req(key, metav1.LabelSelectorOpExists),
				}},
				TopologyKey: gketpu.LabelNodePool,
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					req("kubernetes.io/metadata.name", metav1.LabelSelectorOpNotIn, "kube-system"),
				}},
			},
		}},
	}
}
