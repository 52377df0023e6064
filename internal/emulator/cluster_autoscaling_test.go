package emulator

import (
	"context"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
)

// The cluster API takes and reports the NAP settings, and refuses wrong ones in a create and in
// an update, before any operation starts.
func TestClusterAutoscalingThroughTheAPI(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "nap-bad", InitialNodeCount: 1, Autoscaling: rulestest.Autoscaling(true, rulestest.Limit("tpu-v6e-slice", 0, 8)), //nolint:staticcheck // deprecated in the API, still sent by clients
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource limits for cpu, memory must be specified when enabling node autoprovisioning.")
	_, err = c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredClusterAutoscaling: rulestest.Autoscaling(false, rulestest.Limit("cpu", 0, 8)),
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource limits are supported only with node autoprovisioning.")

	want := rulestest.Autoscaling(true, rulestest.Limit("cpu", 1, 1000), rulestest.Limit("memory", 1, 4000), rulestest.Limit("tpu-v5-lite-podslice", 0, 32))
	want.AutoprovisioningLocations = []string{testZone}
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{DesiredClusterAutoscaling: want}}))
	t.Cleanup(func() {
		mustSucceed(t, c)(c.UpdateCluster(context.Background(), &containerpb.UpdateClusterRequest{Name: cluster,
			Update: &containerpb.ClusterUpdate{DesiredClusterAutoscaling: &containerpb.ClusterAutoscaling{}}}))
	})
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	got := cl.GetAutoscaling()
	if !got.GetEnableNodeAutoprovisioning() || len(got.ResourceLimits) != 3 || got.ResourceLimits[2].ResourceType != "tpu-v5-lite-podslice" ||
		got.ResourceLimits[2].Maximum != 32 || len(got.AutoprovisioningLocations) != 1 {
		t.Fatalf("cluster autoscaling reported as %v", got)
	}
}
