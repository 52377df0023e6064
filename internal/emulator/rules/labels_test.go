package rules

import (
	"fmt"
	"strings"
	"testing"
)

func TestResourceLabelRules(t *testing.T) {
	many := map[string]string{}
	for i := 0; i < 64; i++ {
		many[fmt.Sprintf("k%d", i)] = ""
	}
	ok := []map[string]string{
		nil,
		{"team": "ml", "cost-center": "r_and_d-7", "empty": ""},
		{"équipe": "données", "チーム": "機械学習"}, // international characters
		{strings.Repeat("k", 63): strings.Repeat("v", 63)},
		many,
	}
	for _, labels := range ok {
		if err := ValidateResourceLabels("cluster.resource_labels", labels); err != nil {
			t.Errorf("%v: %v", labels, err)
		}
	}
	tooMany := map[string]string{"k64": ""}
	for k, v := range many {
		tooMany[k] = v
	}
	bad := []struct {
		labels map[string]string
		msg    string
	}{
		// GKE's words (kyma-project/kyma#4307).
		{map[string]string{"test": "myasset-storeTest"}, `Invalid field 'cluster.resource_labels.value': "myasset-storeTest". It must only contain ` +
			`lowercase letters ([a-z]), numeric characters ([0-9]), underscores (_) and dashes (-). International characters are allowed.`},
		{map[string]string{"v": "a.b"}, "Invalid field 'cluster.resource_labels.value'"},
		// GKE's words (cilium/cilium#40251), counted in bytes.
		{map[string]string{"owner": strings.Repeat("a", 64)}, "Resource_labels.value must be less than 63 bytes."},
		{map[string]string{"owner": strings.Repeat("é", 32)}, "Resource_labels.value must be less than 63 bytes."},
		{map[string]string{strings.Repeat("k", 64): ""}, "Resource_labels.key must be less than 63 bytes."},
		{map[string]string{"Team": "ml"}, "Invalid field 'cluster.resource_labels.key': \"Team\". It must start with a lowercase letter"},
		{map[string]string{"1team": "ml"}, "Invalid field 'cluster.resource_labels.key'"},
		{map[string]string{"-team": "ml"}, "Invalid field 'cluster.resource_labels.key'"},
		{map[string]string{"Équipe": "ml"}, "Invalid field 'cluster.resource_labels.key'"},
		{map[string]string{"": "ml"}, "must not be empty"},
		{tooMany, "A resource can have at most 64 labels."},
	}
	for _, tc := range bad {
		if err := ValidateResourceLabels("cluster.resource_labels", tc.labels); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("%v: %v, want %q", tc.labels, err, tc.msg)
		}
	}
}

func TestNodeLabelRules(t *testing.T) {
	ok := []map[string]string{
		{"team": "ML", "example.com/role": "trainer", "a.b_c-d": ""},
		{"cloud.google.com/gke-queued": "true"},                                     // cluster-toolkit sets it on queued provisioning pools
		{"node.kubernetes.io/pool": "tpu", "topology.kubernetes.io/zone": testZone}, // the kubelet's own
	}
	for _, labels := range ok {
		if err := validateNodeLabels(labels); err != nil {
			t.Errorf("%v: %v", labels, err)
		}
	}
	bad := []struct {
		labels map[string]string
		msg    string
	}{
		// GKE's words (hashicorp/terraform-provider-google#6003).
		{map[string]string{"node-role.kubernetes.io/presslabs-sys": ""}, "Applying kubernetes label is not allowed: node-role.kubernetes.io/presslabs-sys."},
		{map[string]string{"node-restriction.kubernetes.io/ipp": "true"}, "Applying kubernetes label is not allowed"},
		{map[string]string{"k8s.io/x": "y"}, "Applying kubernetes label is not allowed"},
		{map[string]string{"-bad": "x"}, "label key \"-bad\""},
		{map[string]string{strings.Repeat("n", 64): "x"}, "must be no more than 63 characters"},
		{map[string]string{"team": "has space"}, `label "team" value "has space"`},
		{map[string]string{"team": strings.Repeat("v", 64)}, "must be no more than 63 characters"},
	}
	for _, tc := range bad {
		if err := validateNodeLabels(tc.labels); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("%v: %v, want %q", tc.labels, err, tc.msg)
		}
	}
}
