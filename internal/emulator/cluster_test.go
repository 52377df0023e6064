package emulator

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

func TestSharedClusterWithRayAddon(t *testing.T) {
	name := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != containerpb.Cluster_RUNNING || !strings.HasPrefix(cl.Endpoint, "127.0.0.1:") {
		t.Fatalf("cluster status %s endpoint %q", cl.Status, cl.Endpoint)
	}
	if cl.CurrentMasterVersion != rules.DefaultVersion || cl.Location != testZone || len(cl.NodePools) == 0 || cl.NodePools[0].Name != "system" {
		t.Fatalf("cluster: version %s location %s pools %d", cl.CurrentMasterVersion, cl.Location, len(cl.NodePools))
	}
	if !cl.GetAddonsConfig().GetRayOperatorConfig().GetEnabled() {
		t.Fatal("Ray Operator add-on not reported enabled")
	}

	kube, dyn := kubeFor(t, cl)
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=system"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("want the system pool's node, got %d nodes", len(nodes.Items))
	}
	n := nodes.Items[0]
	if n.Labels[tpu.LabelNodePool] != "system" || n.Labels[tpu.LabelInstanceType] != "e2-standard-4" ||
		n.Labels[tpu.LabelZone] != testZone || len(n.Spec.Taints) != 0 {
		t.Fatalf("system node labels %v taints %v", n.Labels, n.Spec.Taints)
	}
	if _, ok := n.Status.Allocatable[tpu.ResourceName]; ok {
		t.Fatal("a CPU node must not have google.com/tpu")
	}

	// The CRDs come after the add-on is reported enabled; wait until RayCluster is served.
	waitRayClusterServed(t, dyn)
	rc := dyn.Resource(rayClusterGVR).Namespace("default")
	if _, err := rc.Create(ctx, rayClusterObject(t, "rc-ok", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("valid RayCluster refused: %v", err)
	}
	_, err = rc.Create(ctx, rayClusterObject(t, "rc-bad", `"three"`), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "replicas") {
		t.Fatalf("invalid RayCluster: want 422 about replicas, got %v", err)
	}
	if err := rc.Delete(ctx, "rc-ok", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

var rayClusterGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}

// waitRayClusterServed polls until the RayCluster resource is served (CRD created and Established).
func waitRayClusterServed(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	var err error
	defer func() {
		if err != nil { // not served: say what the CRD is up to
			t.Logf("listing RayClusters: %v", err)
			crd, gerr := dyn.Resource(crdGVR).Get(testCtx(t), "rayclusters.ray.io", metav1.GetOptions{})
			if gerr == nil {
				st, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
				t.Logf("CRD deletionTimestamp %v finalizers %v conditions %v", crd.GetDeletionTimestamp(), crd.GetFinalizers(), st)
			} else {
				t.Logf("CRD: %v", gerr)
			}
		}
	}()
	testwait.For(t, "the RayCluster resource to be served", func() bool {
		_, err = dyn.Resource(rayClusterGVR).Namespace("default").List(testCtx(t), metav1.ListOptions{})
		return err == nil
	})
}

func rayClusterObject(t *testing.T, name, replicas string) *unstructured.Unstructured {
	t.Helper()
	doc := `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ` + name + `, namespace: default}
spec:
  rayVersion: "2.55.0"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: "rayproject/ray:2.55.0-py310-tpu"}]
  workerGroupSpecs:
  - groupName: tpu
    replicas: ` + replicas + `
    minReplicas: 0
    maxReplicas: 2
    numOfHosts: 4
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: "rayproject/ray:2.55.0-py310-tpu"
          resources: {limits: {google.com/tpu: "4"}, requests: {google.com/tpu: "4"}}
        nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 4x4}
`
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// As in GKE, a pool's creation ends once its nodes have registered: none before the latency has
// passed, all of them Ready by the time the operation is DONE.
func TestPoolNodesRegisterAtTheEndOfTheCreation(t *testing.T) {
	cluster, c, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	const latency = 1500 * time.Millisecond
	if err := testEmu.SetLatencies(ctx, map[string]time.Duration{"CREATE_NODE_POOL": latency}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resetControl(t) })
	sent := time.Now()
	op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("late-nodes", "e2-standard-4", 2, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mustSucceed(t, c)(c.DeleteNodePool(context.Background(), &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/late-nodes"}))
	})
	selector := metav1.ListOptions{LabelSelector: tpu.LabelNodePool + "=late-nodes"}
	testwait.For(t, "the creation to run", func() bool {
		got, err := c.GetOperation(ctx, &containerpb.GetOperationRequest{Name: testLocation + "/operations/" + op.Name})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status >= containerpb.Operation_RUNNING
	})
	nodes, err := kube.CoreV1().Nodes().List(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	// Only a list answered within the latency of the request proves that none registered early; a
	// busy machine may answer later, when they have.
	if elapsed := time.Since(sent); elapsed >= latency {
		t.Logf("nodes listed %s after the request, past the %s creation: not checking that none registered early", elapsed, latency)
	} else if len(nodes.Items) != 0 {
		t.Fatalf("%d nodes registered %s into a %s creation, want none yet", len(nodes.Items), elapsed, latency)
	}
	if done, _ := waitOp(t, c, op); done.Error != nil {
		t.Fatalf("creation failed: %v", done.Error)
	}
	if nodes, err = kube.CoreV1().Nodes().List(ctx, selector); err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, n := range nodes.Items {
		if nodeReady(n) {
			ready++
		}
	}
	if len(nodes.Items) != 2 || ready != 2 {
		t.Fatalf("%d nodes, %d Ready when the creation is DONE; want 2 Ready", len(nodes.Items), ready)
	}
}
