package emulator

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

var computeClassGVR = schema.GroupVersionResource{Group: "cloud.google.com", Version: "v1", Resource: "computeclasses"}

// v6e2x4 is a priority of a v6e 2x4 slice of two ct6e-standard-4t hosts, with its capacity.
func v6e2x4(capacity map[string]any) map[string]any {
	p := map[string]any{"tpu": map[string]any{"type": "tpu-v6e-slice", "count": int64(4), "topology": "2x4"}}
	for k, v := range capacity {
		p[k] = v
	}
	return p
}

func applyComputeClass(t *testing.T, dyn dynamic.Interface, name string, priorities ...map[string]any) {
	t.Helper()
	ps := make([]any, len(priorities))
	for i, p := range priorities {
		ps[i] = p
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"priorities": ps, "nodePoolAutoCreation": map[string]any{"enabled": true}, "whenUnsatisfiable": "DoNotScaleUp"},
	}}
	if _, err := dyn.Resource(computeClassGVR).Create(testCtx(t), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// classPods creates n Pods of one host of a v6e 2x4 slice each, selecting the class; they carry
// the class's toleration, which GKE's admission would add.
func classPods(t *testing.T, kube kubernetes.Interface, prefix, class string, n int) {
	t.Helper()
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: prefix + string(rune('a'+i)), Namespace: "default"}, Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"cloud.google.com/compute-class": class,
				"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"},
			Tolerations: []corev1.Toleration{{Key: "google.com/tpu", Operator: corev1.TolerationOpExists},
				{Key: "cloud.google.com/compute-class", Operator: corev1.TolerationOpEqual, Value: class, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"google.com/tpu": resource.MustParse("4")},
				Limits:   corev1.ResourceList{"google.com/tpu": resource.MustParse("4")}}}},
		}}
		if _, err := kube.CoreV1().Pods("default").Create(testCtx(t), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// Node auto-provisioning honours a ComputeClass's priorities in order: with no on-demand v6e in
// the zone, the first priority's pool fails with a stockout and the Pods come up on a Spot slice,
// one whole slice labelled and tainted for the class; a class whose every priority is stocked out
// leaves its Pods pending with the cluster autoscaler's backoff event.
func TestComputeClassFallsBackOnStockout(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	t.Cleanup(func() { resetControl(t) })
	name := testLocation + "/clusters/ccc"
	nap := rulestest.Autoscaling(true, rulestest.Limit("cpu", 1, 2000), rulestest.Limit("memory", 1, 8000), rulestest.Limit("tpu-v6e-slice", 0, 32))
	mustSucceed(t, c)(c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "ccc", NodePools: []*containerpb.NodePool{tpuPool("system", "e2-standard-4", 1, nil)}, Autoscaling: nap,
	}}))
	t.Cleanup(func() {
		mustSucceed(t, c)(c.DeleteCluster(context.Background(), &containerpb.DeleteClusterRequest{Name: name}))
	})
	if err := testEmu.SetCapacity(ctx, Capacity{Zone: testZone, Generation: "v6e", Type: CapacityOnDemand, Chips: 0}); err != nil {
		t.Fatal(err)
	}
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	kube, dyn := kubeFor(t, cl)
	testwait.For(t, "ComputeClass to be served", func() bool {
		_, err := dyn.Resource(computeClassGVR).List(ctx, metav1.ListOptions{})
		return err == nil
	})
	applyComputeClass(t, dyn, "v6e-fallback", v6e2x4(map[string]any{"spot": false}), v6e2x4(map[string]any{"spot": true}))
	classPods(t, kube, "w-", "v6e-fallback", 2)

	var pods []corev1.Pod
	testwait.For(t, "the class's two Pods to run", func() bool {
		l, err := kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods = pods[:0]
		for _, p := range l.Items {
			if strings.HasPrefix(p.Name, "w-") && p.Status.Phase == corev1.PodRunning {
				pods = append(pods, p)
			}
		}
		return len(pods) == 2
	})
	nodes := nodesOf(t, kube)
	pool := nodes[pods[0].Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]
	if other := nodes[pods[1].Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]; other != pool || pods[0].Spec.NodeName == pods[1].Spec.NodeName {
		t.Fatalf("the Pods are on %s (%s) and %s (%s), want two hosts of one slice", pods[0].Spec.NodeName, pool, pods[1].Spec.NodeName, other)
	}
	if l := nodes[pods[0].Spec.NodeName].Labels; l["cloud.google.com/compute-class"] != "v6e-fallback" || l["cloud.google.com/gke-spot"] != "true" {
		t.Errorf("the slice's node labels %v: want the class's label and Spot", l)
	}
	list, err := c.ListNodePools(ctx, &containerpb.ListNodePoolsRequest{Parent: name})
	if err != nil {
		t.Fatal(err)
	}
	var failed, spot int
	for _, np := range list.NodePools {
		if np.GetConfig().GetLabels()["cloud.google.com/compute-class"] != "v6e-fallback" {
			continue
		}
		if !np.GetAutoscaling().GetAutoprovisioned() || !strings.HasPrefix(np.Name, "nap-ct6e-standa-4t-") {
			t.Errorf("pool %s: want an auto-provisioned nap- pool", np.Name)
		}
		tainted := false
		for _, tn := range np.GetConfig().GetTaints() {
			tainted = tainted || (tn.Key == "cloud.google.com/compute-class" && tn.Value == "v6e-fallback" && tn.Effect == containerpb.NodeTaint_NO_SCHEDULE)
		}
		if !tainted {
			t.Errorf("pool %s: no compute-class taint in %v", np.Name, np.GetConfig().GetTaints())
		}
		switch {
		case np.Status == containerpb.NodePool_ERROR && !np.GetConfig().GetSpot() && strings.Contains(np.StatusMessage, "does not have enough resources"): //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			failed++
		case np.Status == containerpb.NodePool_RUNNING && np.GetConfig().GetSpot() && np.Name == pool:
			spot++
		default:
			t.Errorf("unexpected class pool %s: %v spot=%v", np.Name, np.Status, np.GetConfig().GetSpot())
		}
	}
	if failed != 1 || spot != 1 {
		t.Fatalf("class pools: %d stocked-out on-demand, %d running Spot; want one of each", failed, spot)
	}

	// One priority only, stocked out: the Pods wait, in backoff.
	applyComputeClass(t, dyn, "v6e-on-demand", v6e2x4(map[string]any{"spot": false}))
	classPods(t, kube, "od-", "v6e-on-demand", 2)
	waitScaleUpRefused(t, kube, "od-", "pod didn't trigger scale-up: 1 in backoff after failed scale-up")

	// A class that is not there: the Pod waits, and the event says why.
	classPods(t, kube, "missing-", "missing", 1)
	waitScaleUpRefused(t, kube, "missing-", `pod didn't trigger scale-up: ComputeClass "missing" not found`)
}
