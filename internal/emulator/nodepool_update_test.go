package emulator

import (
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodePoolMachineAttributesChangeInPlace migrates a CPU pool to another machine type and disk,
// as GKE's UpdateNodePool does, and refuses what GKE cannot do in place.
func TestNodePoolMachineAttributesChangeInPlace(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	name := cluster + "/nodePools/migrated"
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: &containerpb.NodePool{
		Name: "migrated", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"},
	}}))
	t.Cleanup(func() { mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: name})) })

	op := mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{
		Name: name, MachineType: "e2-standard-8", DiskType: "pd-ssd", DiskSizeGb: 200,
	}))
	if op.OperationType != containerpb.Operation_UPGRADE_NODES {
		t.Errorf("operation type %s, want UPGRADE_NODES", op.OperationType)
	}
	pool, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := pool.GetConfig(); cfg.GetMachineType() != "e2-standard-8" || cfg.GetDiskType() != "pd-ssd" || cfg.GetDiskSizeGb() != 200 {
		t.Errorf("config after the update: %v", cfg)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool=migrated"})
	if err != nil || len(nodes.Items) != 1 || nodes.Items[0].Labels[corev1.LabelInstanceTypeStable] != "e2-standard-8" {
		t.Errorf("nodes after the update: %v %v", nodes, err)
	}

	for _, tc := range []struct {
		what string
		req  *containerpb.UpdateNodePoolRequest
		want string
	}{
		{"a disk below 10GB", &containerpb.UpdateNodePoolRequest{Name: name, DiskSizeGb: 5}, "below the smallest allowed disk size, 10GB"},
		{"a machine type that does not exist", &containerpb.UpdateNodePoolRequest{Name: name, MachineType: "q9-standard-4"}, `Machine type "q9-standard-4" does not exist`},
	} {
		_, err := c.UpdateNodePool(ctx, tc.req)
		wantGoogleError(t, err, 400, "INVALID_ARGUMENT", tc.want)
	}
}

// TestTPUSliceMachineTypeIsNotMigrated refuses to change a TPU slice's machine type (its
// topology follows from it) and takes a new max run duration of a flex-start slice.
func TestTPUSliceMachineTypeIsNotMigrated(t *testing.T) {
	cluster, c, _, _ := sharedKube(t)
	ctx := testCtx(t)
	name := cluster + "/nodePools/v6e-fixed"
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("v6e-fixed", "ct6e-standard-4t", 1, nil)}))
	t.Cleanup(func() { mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: name})) })
	_, err := c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: name, MachineType: "ct6e-standard-8t"})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "cannot be changed in place")

	flex := cluster + "/nodePools/v6e-flex"
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster,
		NodePool: edit(flexPool("v6e-flex", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) {
			np.Config.MaxRunDuration = durationpb.New(24 * time.Hour)
		})}))
	t.Cleanup(func() { mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: flex})) })
	mustSucceed(t, c)(c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: flex, MaxRunDuration: durationpb.New(48 * time.Hour)}))
	pool, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: flex})
	if err != nil || pool.GetConfig().GetMaxRunDuration().AsDuration() != 48*time.Hour {
		t.Errorf("max run duration after the update: %v %v", pool.GetConfig().GetMaxRunDuration(), err)
	}
	_, err = c.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: flex, MaxRunDuration: durationpb.New(8 * 24 * time.Hour)})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "longer than flex-start allows")
}
