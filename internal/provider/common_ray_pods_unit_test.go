package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// Spares of a multi-host group are said to be idle exactly when its Pods lack KubeRay's replica
// index label; single-host groups and groups without spares are never named.
func TestWarnSparesWithoutIndexing(t *testing.T) {
	multi := groupExpectation{replicas: 1, hosts: 4, pools: []string{"slice-a", "slice-spare"}}
	pods := func(group string, indexed bool) []kube.RayPod {
		return []kube.RayPod{{Name: group + "-0", Group: group, ReplicaIndexed: indexed}, {Name: group + "-1", Group: group, ReplicaIndexed: indexed}}
	}
	for name, c := range map[string]struct {
		want  map[string]groupExpectation
		pods  []kube.RayPod
		named string
	}{
		"multi-host with spares, not indexed": {map[string]groupExpectation{"tpu": multi}, pods("tpu", false), "[tpu]"},
		"multi-host with spares, indexed":     {map[string]groupExpectation{"tpu": multi}, pods("tpu", true), ""},
		"multi-host without spares":           {map[string]groupExpectation{"tpu": {replicas: 1, hosts: 4, pools: []string{"slice-a"}}}, pods("tpu", false), ""},
		"single-host with spares":             {map[string]groupExpectation{"tpu": {replicas: 1, hosts: 1, pools: []string{"a", "b"}}}, pods("tpu", false), ""},
		"only one group not indexed": {map[string]groupExpectation{"tpu": multi, "big": multi},
			append(pods("tpu", true), pods("big", false)...), "[big]"},
	} {
		var diags diag.Diagnostics
		warnSparesWithoutIndexing(c.pods, c.want, "applying", &diags)
		switch {
		case c.named == "" && len(diags) > 0:
			t.Errorf("%s: warned %v", name, diags)
		case c.named != "" && (len(diags) != 1 || !strings.Contains(diags[0].Detail(), "worker groups "+c.named+" carry no")):
			t.Errorf("%s: %v, want one warning naming %s", name, diags, c.named)
		}
	}
}
