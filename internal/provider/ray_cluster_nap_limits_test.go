package provider

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// The plan's check of node auto-provisioning limits against GKE's own count: every node of the
// cluster, its e2-medium pool here (GKE's default machine type), and the two ct6e-standard-4t hosts (180 vCPUs, 720 GB
// each) of a v6e 2x4 on 4-chip hosts. Limits sized for CPU pools warn; limits that hold the
// hosts do not.
func TestNAPLimitsCountTPUHosts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testGKEClient(t)
	id := createClusterOutOfBand(t, "acc-nap-limits", "")
	setLimits := func(cpu, memory, chips int64) {
		op, err := c.UpdateCluster(ctx, id, &containerpb.ClusterUpdate{DesiredClusterAutoscaling: &containerpb.ClusterAutoscaling{
			EnableNodeAutoprovisioning: true, ResourceLimits: []*containerpb.ResourceLimit{
				{ResourceType: "cpu", Maximum: cpu}, {ResourceType: "memory", Maximum: memory}, {ResourceType: "tpu-v6e-slice", Maximum: chips}},
		}})
		if err == nil {
			err = c.WaitForOperation(ctx, id, op)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	slice, err := tpu.NewSlice("v6e", "2x4", 4)
	if err != nil {
		t.Fatal(err)
	}
	demands := []napDemand{{index: 0, name: "burst", slice: slice, replicas: 1}}
	check := func() diag.Diagnostics {
		var diags diag.Diagnostics
		checkNAPLimits(ctx, c, id, demands, &diags)
		return diags
	}

	setLimits(64, 256, 48)
	diags := check()
	if len(diags) != 1 {
		t.Fatalf("limits of 64 cores and 256 GB: %d diagnostics, want one warning: %v", len(diags), diags)
	}
	// The pool: e2-medium (2 vCPUs, 4 GB); the slice: 2 × 180 cores, 2 × 720 GB.
	for _, want := range []string{`worker group "burst"`, "max_cpu is 64, the cluster's nodes use 2 cores and the slices need 360 more: at least 362",
		"max_memory_gb is 256, the cluster's nodes use 4 GB and the slices need 1440 more: at least 1444"} {
		if d := diags[0]; d.Severity() != diag.SeverityWarning || !strings.Contains(d.Detail(), want) {
			t.Errorf("warning %q: %s, want it to say %q", d.Summary(), d.Detail(), want)
		}
	}
	if strings.Contains(diags[0].Detail(), "max_chips") {
		t.Errorf("the chips limit holds the slice, yet the warning names it: %s", diags[0].Detail())
	}

	setLimits(362, 1444, 8)
	if diags := check(); len(diags) != 0 {
		t.Errorf("limits that hold the slice: %v", diags)
	}

	// A cluster not created yet is not checked.
	var diags2 diag.Diagnostics
	checkNAPLimits(ctx, c, gke.ClusterID{Project: testProject, Location: testLocation, Name: "acc-nap-none"}, demands, &diags2)
	if len(diags2) != 0 {
		t.Errorf("a cluster that does not exist: %v", diags2)
	}
}
