package emulator

// Helpers of the Ray-on-slices tests (kuberay_test.go): clusters with the add-on, RayClusters,
// their Pods and the nodes they run on.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"google.golang.org/api/googleapi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

func createRayCluster(ctx context.Context, dyn dynamic.Interface, rc *rayv1.RayCluster) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rc)
	if err != nil {
		return err
	}
	_, err = dyn.Resource(rayClusterGVR).Namespace(rc.Namespace).Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
	return err
}

// rayTestCluster creates a cluster with the Ray Operator add-on, a CPU pool for the Ray heads and
// the given pools, and deletes it when the test ends.
func rayTestCluster(t *testing.T, name string, pools ...*containerpb.NodePool) (string, *container.ClusterManagerClient, *cluster, kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	full := testLocation + "/clusters/" + name
	pools = append([]*containerpb.NodePool{tpuPool("system", "e2-standard-8", 1, nil)}, pools...)
	mustSucceed(t, c)(c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name:         name,
		AddonsConfig: &containerpb.AddonsConfig{RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: true}},
		NodePools:    pools,
	}}))
	t.Cleanup(func() {
		op, err := c.DeleteCluster(context.Background(), &containerpb.DeleteClusterRequest{Name: full})
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == 404 {
			return // the test deleted it
		}
		if err != nil {
			t.Errorf("deleting %s: %v", name, err)
			return
		}
		waitOp(t, c, op)
	})
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: full})
	if err != nil {
		t.Fatal(err)
	}
	kube, dyn := kubeFor(t, cl)
	testEmu.mu.Lock()
	ec := testEmu.st.clusters[full]
	testEmu.mu.Unlock()
	waitRayClusterServed(t, dyn)
	// The add-on's part of the runtime is armed once the CRDs are Established, a moment after they
	// are served.
	testwait.For(t, "the Ray Operator add-on to be armed", func() bool { return rayArmed(ec) })
	return full, c, ec, kube, dyn
}

// rayArmed says whether the Ray Operator add-on's part of the cluster's runtime waits for Ray
// objects.
func rayArmed(c *cluster) bool {
	r := c.runtimeOf()
	return r != nil && r.RayArmed()
}

func rayPods(t *testing.T, kube kubernetes.Interface, rc, nodeType string) []corev1.Pod {
	t.Helper()
	l, err := kube.CoreV1().Pods("default").List(testCtx(t), metav1.ListOptions{LabelSelector: "ray.io/cluster=" + rc + ",ray.io/node-type=" + nodeType})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func podRunningReady(p corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitRayPods waits until the RayCluster has its head and n workers, all Running and Ready.
func waitRayPods(t *testing.T, kube kubernetes.Interface, rc string, n int) []corev1.Pod {
	t.Helper()
	var heads, workers []corev1.Pod
	ready := false
	defer func() {
		if !ready { // the Pods last seen, to say why
			for _, p := range append(heads, workers...) {
				t.Logf("pod %s node %q phase %s conditions %v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
			}
		}
	}()
	testwait.For(t, fmt.Sprintf("RayCluster %s to have a head and %d workers Running and Ready", rc, n), func() bool {
		workers = rayPods(t, kube, rc, "worker")
		heads = rayPods(t, kube, rc, "head")
		ready = len(workers) == n && len(heads) == 1 && podRunningReady(heads[0])
		for _, p := range workers {
			ready = ready && podRunningReady(p)
		}
		return ready
	})
	return workers
}

func env(p corev1.Pod, name string) (string, bool) {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// waitScaleUpRefused waits for the cluster autoscaler's NotTriggerScaleUp event with message on a
// Pod whose name starts with prefix.
func waitScaleUpRefused(t *testing.T, kube kubernetes.Interface, prefix, message string) {
	t.Helper()
	testwait.For(t, "a NotTriggerScaleUp event: "+message, func() bool {
		evs, err := kube.CoreV1().Events("default").List(testCtx(t), metav1.ListOptions{FieldSelector: "reason=NotTriggerScaleUp"})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if strings.HasPrefix(ev.InvolvedObject.Name, prefix) && ev.Message == message {
				return true
			}
		}
		return false
	})
}

func nodesOf(t *testing.T, kube kubernetes.Interface) map[string]corev1.Node {
	t.Helper()
	l, err := kube.CoreV1().Nodes().List(testCtx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range l.Items {
		out[n.Name] = n
	}
	return out
}

// rssKB reads a process's resident set size.
func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}
