package emulator

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

func TestHostFailure(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("flaky", "ct6e-standard-4t", 4, compact("4x4"))}))
	if err := testEmu.FailHost(ctx, HostFailure{Cluster: cluster, NodePool: "flaky", Worker: 2}); err != nil {
		t.Fatal(err)
	}
	np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/flaky"})
	if err != nil || np.Status != containerpb.NodePool_RUNNING_WITH_ERROR {
		t.Fatalf("pool after a host failure: %v %v", np.GetStatus(), err)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=flaky"})
	if err != nil {
		t.Fatal(err)
	}
	notReady := 0
	for _, n := range nodes.Items {
		w, _ := WorkerIndex(n.Name)
		if !nodeReady(n) {
			notReady++
			if w != 2 {
				t.Fatalf("worker %d NotReady, want worker 2", w)
			}
			if !hasTaint(n, corev1.TaintNodeUnreachable) {
				t.Fatalf("failed node taints %v", n.Spec.Taints)
			}
		}
	}
	if notReady != 1 || len(nodes.Items) != 4 {
		t.Fatalf("%d of %d nodes NotReady", notReady, len(nodes.Items))
	}
	// The slice recovers as one: its healthy hosts take no new Pods.
	for _, n := range nodes.Items {
		if nodeReady(n) != n.Spec.Unschedulable {
			t.Fatalf("node %s: ready %t, unschedulable %t; want the healthy hosts cordoned", n.Name, nodeReady(n), n.Spec.Unschedulable)
		}
	}
	// Hosts of single-host slices are slices of their own: a failed one leaves the others be.
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("singles", "ct6e-standard-8t", 2, nil)}))
	if err := testEmu.FailHost(ctx, HostFailure{Cluster: cluster, NodePool: "singles", Worker: 0}); err != nil {
		t.Fatal(err)
	}
	singles, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=singles"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range singles.Items {
		if n.Spec.Unschedulable {
			t.Fatalf("single-host node %s cordoned by another host's failure", n.Name)
		}
	}
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/singles"}))
	if err := testEmu.FailHost(ctx, HostFailure{Cluster: cluster, NodePool: "flaky", Worker: 4}); err == nil {
		t.Fatal("worker 4 of a 4-host slice accepted")
	}
	// A multi-host slice cannot be resized.
	_, err = c.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: cluster + "/nodePools/flaky", NodeCount: 5})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "cannot be resized")
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/flaky"}))
}

func hasTaint(n corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
