package emulator

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// SetNodePoolManagement applies the same rule to a pool of a cluster on a release channel.
func TestSetNodePoolManagementRule(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	name := cluster + "/nodePools/mg-cpu"
	createPoolForTest(t, c, cluster, &containerpb.NodePool{Name: "mg-cpu", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}})
	_, err := c.SetNodePoolManagement(testCtx(t), &containerpb.SetNodePoolManagementRequest{Name: name,
		Management: &containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: false}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Auto_upgrade and auto_repair cannot be false when release_channel REGULAR is set.")
}
