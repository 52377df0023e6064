package nodeagent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNAPSkipsPodsPinnedToNodePools(t *testing.T) {
	inPools := func(keys ...string) *corev1.Affinity {
		var terms []corev1.NodeSelectorTerm
		for _, k := range keys {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{"slice-a"}}}})
		}
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	for _, tc := range []struct {
		name     string
		selector map[string]string
		affinity *corev1.Affinity
		want     bool
	}{
		{"shape only", map[string]string{"cloud.google.com/gke-tpu-topology": "2x4"}, nil, false},
		{"node pool selector", map[string]string{"cloud.google.com/gke-nodepool": "slice-a"}, nil, true},
		{"node pool affinity", nil, inPools("cloud.google.com/gke-nodepool"), true},
		{"one term free of pools", nil, inPools("cloud.google.com/gke-nodepool", "topology.kubernetes.io/zone"), false},
		{"affinity on another label", nil, inPools("topology.kubernetes.io/zone"), false},
	} {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: tc.selector, Affinity: tc.affinity}}
		if got := pinnedToNodePools(p); got != tc.want {
			t.Errorf("%s: pinnedToNodePools = %v, want %v", tc.name, got, tc.want)
		}
	}
}
