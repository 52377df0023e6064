package emulator

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// Through the client: cluster resource labels on create and on SetLabels, node pool labels and
// resource labels on create and update.
func TestLabelRulesThroughTheAPI(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "rl-labels", ResourceLabels: map[string]string{"owner": "Renovate"},
		NodePools: []*containerpb.NodePool{{Name: "default", InitialNodeCount: 1}},
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", `Invalid field 'cluster.resource_labels.value': "Renovate".`)

	cluster := sharedCluster(t)
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: cluster, LabelFingerprint: cl.LabelFingerprint,
		ResourceLabels: map[string]string{"owner": strings.Repeat("x", 71)}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource_labels.value must be less than 63 bytes.")

	wantRefused(t, c, cluster, &containerpb.NodePool{Name: "rl-bad", InitialNodeCount: 1, Config: &containerpb.NodeConfig{
		MachineType: "e2-standard-4", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}},
		"Applying kubernetes label is not allowed: node-role.kubernetes.io/worker.")
	wantRefused(t, c, cluster, &containerpb.NodePool{Name: "rl-bad", InitialNodeCount: 1, Config: &containerpb.NodeConfig{
		MachineType: "e2-standard-4", ResourceLabels: map[string]string{"Team": "ml"}}},
		`Invalid field 'node_pool.config.resource_labels.key': "Team".`)

	np := createPoolForTest(t, c, cluster, &containerpb.NodePool{Name: "rl-ok", Config: &containerpb.NodeConfig{MachineType: "e2-standard-4",
		Labels: map[string]string{"team": "ML"}, ResourceLabels: map[string]string{"équipe": "données"}}})
	if np.Config.Labels["team"] != "ML" || np.Config.ResourceLabels["équipe"] != "données" {
		t.Errorf("labels reported as %v and %v", np.Config.Labels, np.Config.ResourceLabels)
	}
	_, err = c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: cluster + "/nodePools/rl-ok",
		ResourceLabels: &containerpb.ResourceLabels{Labels: map[string]string{"x": strings.Repeat("y", 64)}}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource_labels.value must be less than 63 bytes.")
}
