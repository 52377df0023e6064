package emulator

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// The slice controller add-on, on create and update: refused outside the Rapid channel and below
// 1.35.2-gke.1842000 (GKE's dynamic slicing requirements), reported once on, and turned off
// without touching the Ray Operator add-on.
func TestSliceControllerAddon(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	on := &containerpb.AddonsConfig{SliceControllerConfig: &containerpb.SliceControllerConfig{Enabled: true}}
	create := func(name, version string, channel containerpb.ReleaseChannel_Channel) (*containerpb.Operation, error) {
		return c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
			Name: name, InitialClusterVersion: version, ReleaseChannel: &containerpb.ReleaseChannel{Channel: channel},
			AddonsConfig: &containerpb.AddonsConfig{
				RayOperatorConfig:     &containerpb.RayOperatorConfig{Enabled: true},
				SliceControllerConfig: &containerpb.SliceControllerConfig{Enabled: true},
			},
			NodePools: []*containerpb.NodePool{{Name: "system", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}},
		}})
	}
	_, err := create("sc-regular", "", containerpb.ReleaseChannel_REGULAR)
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "The Slice Controller add-on requires the RAPID release channel; the cluster's release channel is REGULAR.")
	_, err = create("sc-old", "1.35.0-gke.1795000", containerpb.ReleaseChannel_RAPID)
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "The Slice Controller add-on requires GKE version 1.35.2-gke.1842000 or later; the cluster version is 1.35.0-gke.1795000.")

	// The shared cluster is in the REGULAR channel: an update is refused as a create is.
	_, err = c.SetAddonsConfig(ctx, &containerpb.SetAddonsConfigRequest{Name: sharedCluster(t), AddonsConfig: on})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "The Slice Controller add-on requires the RAPID release channel")

	mustSucceed(t, c)(create("sc-rapid", "1.36", containerpb.ReleaseChannel_RAPID))
	name := testLocation + "/clusters/sc-rapid"
	defer func() { mustSucceed(t, c)(c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: name})) }()
	addons := func() *containerpb.AddonsConfig {
		cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return cl.GetAddonsConfig()
	}
	if a := addons(); !a.GetSliceControllerConfig().GetEnabled() || !a.GetRayOperatorConfig().GetEnabled() {
		t.Fatalf("created with both add-ons, reported %v", a)
	}
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{
		DesiredAddonsConfig: &containerpb.AddonsConfig{SliceControllerConfig: &containerpb.SliceControllerConfig{Enabled: false}}}}))
	if a := addons(); a.GetSliceControllerConfig().GetEnabled() || !a.GetRayOperatorConfig().GetEnabled() {
		t.Fatalf("after turning the slice controller off alone, reported %v", a)
	}
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{DesiredAddonsConfig: on}}))
	if a := addons(); !a.GetSliceControllerConfig().GetEnabled() {
		t.Fatalf("after turning the slice controller on again, reported %v", a)
	}
}
