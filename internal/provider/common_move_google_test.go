package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

func TestIsGoogleProvider(t *testing.T) {
	for address, want := range map[string]bool{
		"registry.terraform.io/hashicorp/google":      true,
		"registry.opentofu.org/hashicorp/google":      true,
		"registry.terraform.io/hashicorp/google-beta": true,
		"registry.terraform.io/hashicorp/random":      false,
		"registry.terraform.io/someone/google":        false,
		"hashicorp/google":                            false,
	} {
		if got := isGoogleProvider(address); got != want {
			t.Errorf("isGoogleProvider(%q) = %v, want %v", address, got, want)
		}
	}
}

// TestUnmappableNodePool reads node pools as google provider v6/v7 state holds them.
func TestUnmappableNodePool(t *testing.T) {
	for _, tc := range []struct {
		name, state string
		want        string // "" when the pool maps; else a part of the reason
	}{
		{"multi-host v6e", `{"node_count": 4, "node_config": [{"machine_type": "ct6e-standard-4t"}],
			"placement_policy": [{"type": "COMPACT", "tpu_topology": "4x4"}]}`, ""},
		{"single-host v5e", `{"node_count": 1, "node_config": [{"machine_type": "ct5lp-hightpu-8t"}], "placement_policy": []}`, ""},
		{"queued, no nodes yet", `{"node_count": 0, "initial_node_count": 0, "node_config": [{"machine_type": "ct6e-standard-4t"}],
			"placement_policy": [{"tpu_topology": "4x4"}], "queued_provisioning": [{"enabled": true}]}`, ""},
		{"autoscaled slice", `{"node_count": 0, "node_config": [{"machine_type": "ct6e-standard-4t"}], "placement_policy": [{"tpu_topology": "4x4"}],
			"autoscaling": [{"min_node_count": 0, "max_node_count": 4, "total_min_node_count": 0, "total_max_node_count": 0}]}`, ""},
		{"cpu pool", `{"node_count": 3, "node_config": [{"machine_type": "e2-standard-4"}]}`, `"e2-standard-4" is not a TPU machine type`},
		{"no machine type", `{"node_count": 3, "node_config": []}`, "no node_config.machine_type"},
		{"topology the machine cannot hold", `{"node_count": 4, "node_config": [{"machine_type": "ct6e-standard-4t"}],
			"placement_policy": [{"tpu_topology": "2x2x2"}]}`, "not a TPU slice raytpu can describe"},
		{"part of a slice", `{"node_count": 2, "node_config": [{"machine_type": "ct6e-standard-4t"}],
			"placement_policy": [{"tpu_topology": "4x4"}]}`, "node_count is 2, while topology 4x4 on ct6e-standard-4t is 4 hosts"},
		{"several zones", `{"node_count": 4, "node_locations": ["us-east5-a", "us-east5-b"], "node_config": [{"machine_type": "ct6e-standard-4t"}],
			"placement_policy": [{"tpu_topology": "4x4"}]}`, "spans the zones"},
		{"autoscaled by hosts", `{"node_count": 0, "node_config": [{"machine_type": "ct6e-standard-4t"}], "placement_policy": [{"tpu_topology": "4x4"}],
			"autoscaling": [{"min_node_count": 1, "max_node_count": 4}]}`, "autoscales between other bounds"},
		{"workload policy without topology", `{"node_count": 2, "node_config": [{"machine_type": "tpu7x-standard-4t"}],
			"placement_policy": [{"policy_name": "p"}]}`, "workload policy p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s googleNodePoolState
			if err := decodeGoogleState([]byte(tc.state), googleNodePoolType, &s); err != nil {
				t.Fatal(err)
			}
			got := unmappableNodePool(s)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("unmappableNodePool = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGoogleStateIDs(t *testing.T) {
	var pool googleNodePoolState
	if err := decodeGoogleState([]byte(`{"project": "p", "location": "us-east5-b", "cluster": "c", "name": "n"}`), googleNodePoolType, &pool); err != nil {
		t.Fatal(err)
	}
	if id, err := pool.poolID(); err != nil || id.String() != "projects/p/locations/us-east5-b/clusters/c/nodePools/n" {
		t.Errorf("poolID() = %v, %v", id, err)
	}
	if _, err := (googleNodePoolState{Name: "n", Cluster: "c"}).poolID(); err == nil || !strings.Contains(err.Error(), "refresh it") {
		t.Errorf("poolID() without project and location: %v, want an error", err)
	}
	cluster := googleClusterState{ID: "projects/p/locations/l/clusters/c"}
	if id, err := cluster.clusterID(); err != nil || id.Name != "c" {
		t.Errorf("clusterID() = %v, %v", id, err)
	}
}

// TestMoveState_otherSources names what can be moved when something else is.
func TestMoveState_otherSources(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		source, address, want string
	}{
		{"google_compute_instance", "registry.terraform.io/hashicorp/google", "moves in only from google_container_node_pool"},
		{"google_container_node_pool", "registry.terraform.io/example/google", "moves in only from google_container_node_pool"},
	} {
		var resp resource.MoveStateResponse
		req := resource.MoveStateRequest{
			SourceTypeName: tc.source, SourceProviderAddress: tc.address,
			SourceRawState: &tfprotov6.RawState{JSON: []byte(`{}`)},
		}
		(&sliceResource{}).moveFromGoogle(ctx, req, &resp)
		if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), tc.want) {
			t.Errorf("moving %s of %s: %v, want an error saying %q", tc.source, tc.address, resp.Diagnostics, tc.want)
		}
	}
}
