package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestReplacementCause(t *testing.T) {
	hosts := func(names ...string) types.List {
		values := make([]attr.Value, len(names))
		for i, n := range names {
			values[i] = types.StringValue(n)
		}
		return types.ListValueMust(types.StringType, values)
	}
	slice := func(status string, ready, of int64, lost types.List) sliceResourceModel {
		return sliceResourceModel{
			ID: types.StringValue("projects/p/locations/z/clusters/c/nodePools/s"), Status: types.StringValue(status),
			ReadyHosts: types.Int64Value(ready), NumHosts: types.Int64Value(of), FailedHosts: lost,
		}
	}
	for _, tc := range []struct {
		name  string
		state sliceResourceModel
		want  string // "" for no replacement
	}{
		{"healthy", slice("RUNNING", 4, 4, hosts()), ""},
		{"being created", slice("PROVISIONING", 0, 4, hosts()), ""},
		{"upgrading", slice("RECONCILING", 4, 4, hosts()), ""},
		{"upgrading, hosts recreated", slice("RECONCILING", 2, 4, hosts()), ""},
		{"scaling up, two hosts of four registered", slice("RUNNING", 2, 4, hosts()), ""},
		{"booting hosts", slice("RUNNING", 1, 4, hosts()), ""},
		{"being deleted", slice("STOPPING", 4, 4, hosts()), ""},
		{"an operation's error, hosts fine", slice("RUNNING_WITH_ERROR", 4, 4, hosts()), ""},
		{"hosts not seen", slice("RUNNING", 0, 4, types.ListNull(types.StringType)), ""},
		{"in error", slice("ERROR", 0, 4, hosts()), "node pool is in ERROR"},
		{"a lost host", slice("RUNNING_WITH_ERROR", 3, 4, hosts("gke-c-s-1a2b3c4d-0002")), "lost 1 host (gke-c-s-1a2b3c4d-0002)"},
		{"a lost host during an upgrade", slice("RECONCILING", 3, 4, hosts("a", "b")), "lost 2 hosts (a, b)"},
	} {
		got := replacementCause(tc.state)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: replacementCause = %q, want %q", tc.name, got, tc.want)
		}
	}
}
