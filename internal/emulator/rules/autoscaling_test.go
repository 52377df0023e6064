package rules

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// GKE's rules on NodePoolAutoscaling, on their own.
func TestAutoscalingRules(t *testing.T) {
	cf := ClusterFacts{Location: testZone, Locations: []string{testZone}, MasterVersion: DefaultVersion}
	cpu := func(a *containerpb.NodePoolAutoscaling) *containerpb.NodePool {
		return &containerpb.NodePool{Name: "p", InitialNodeCount: 1, Autoscaling: a, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}
	}
	ok := []*containerpb.NodePoolAutoscaling{
		{Enabled: true, MinNodeCount: 0, MaxNodeCount: 3},
		{Enabled: true, MinNodeCount: 2, MaxNodeCount: 2},
		{Enabled: true, TotalMinNodeCount: 1, TotalMaxNodeCount: 6, LocationPolicy: containerpb.NodePoolAutoscaling_ANY},
		// Zeros beside totals are unset, as the Terraform provider sends them.
		{Enabled: true, MinNodeCount: 0, MaxNodeCount: 0, TotalMaxNodeCount: 6},
		// Disabled autoscaling is stored as sent.
		{Enabled: false, MinNodeCount: 5, MaxNodeCount: 1},
	}
	for _, a := range ok {
		if _, err := PlanNodePool(cf, cpu(a)); err != nil {
			t.Errorf("%v: %v", a, err)
		}
	}
	bad := []struct {
		a   *containerpb.NodePoolAutoscaling
		msg string
	}{
		// GKE's words (terraform-google-modules/terraform-google-kubernetes-engine#1554).
		{&containerpb.NodePoolAutoscaling{Enabled: true}, "Node_pool_autoscaling.max_node_count and node_pool_autoscaling.total_max_node_count cannot be both set to zero."},
		{&containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1}, "cannot be both set to zero"},
		// GKE's words (a refused Config Connector update, 2026-09-05).
		{&containerpb.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 3, TotalMaxNodeCount: 6},
			"Node_pool_autoscaling.max_node_count and node_pool_autoscaling.total_max_node_count cannot be both greater than zero."},
		{&containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, TotalMaxNodeCount: 6}, "mutually exclusive"},
		{&containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 4, MaxNodeCount: 3}, "min_node_count 4 is greater than max_node_count 3"},
		{&containerpb.NodePoolAutoscaling{Enabled: true, TotalMinNodeCount: 7, TotalMaxNodeCount: 6}, "total_min_node_count 7 is greater than total_max_node_count 6"},
		{&containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: -1, MaxNodeCount: 3}, "must not be negative"},
	}
	for _, tc := range bad {
		if _, err := PlanNodePool(cf, cpu(tc.a)); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("%v: %v, want %q", tc.a, err, tc.msg)
		}
	}
}
