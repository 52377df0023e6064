package emulator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/clusterkube"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/nodeagent"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook/tpuwebhooktest"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// Ray on whole TPU slices, end to end through real clients: the GKE API creates the cluster and
// its pools, KubeRay's Go types the RayClusters; the real KubeRay operator makes the Pods, the
// real kube-scheduler places them, GKE's TPU webhook (served by the emulator and called by the
// kube-apiserver) indexes them, the node agent runs them and NAP adds a slice.
func TestRayOnSlices(t *testing.T) {
	name, c, ec, kube, dyn := rayTestCluster(t, "ray-slices",
		tpuPool("slice-a", "ct6e-standard-4t", 4, compact("4x4")),
		tpuPool("slice-b", "ct6e-standard-4t", 4, compact("4x4")),
		tpuPool("single", "ct6e-standard-4t", 1, nil))
	ctx := testCtx(t)
	rcs := dyn.Resource(rayClusterGVR).Namespace("default")

	// Nothing runs before it is needed.
	if got := ec.runtimeOf().Running(); len(got) != 0 {
		t.Fatalf("components running before any Pod or Ray object: %v", got)
	}

	t.Run("webhook refuses numOfHosts that disagrees with the topology", func(t *testing.T) {
		err := createRayCluster(ctx, dyn, tpuwebhooktest.RayCluster("wrong", "tpu", 1, 3, 4, "4x4"))
		want := `admission webhook "raycluster-kuberay-tpu-webhook.ray-system.svc" denied the request: Number of workers in worker group not equal to specified topology`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want %q, got %v", want, err)
		}
		if _, err := rcs.Get(ctx, "wrong", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the refused RayCluster exists: %v", err)
		}
		if got := ec.runtimeOf().Running(); len(got) != 0 {
			t.Fatalf("a refused RayCluster started %v", got)
		}
	})

	var pids map[string]int
	t.Run("multi-host worker group on two v6e 4x4 slices", func(t *testing.T) {
		if err := createRayCluster(ctx, dyn, tpuwebhooktest.RayCluster("multi", "tpu", 2, 4, 4, "4x4")); err != nil {
			t.Fatal(err)
		}
		workers := waitRayPods(t, kube, "multi", 8)
		nodes := nodesOf(t, kube)
		hosts := map[string]bool{}
		replicas := map[string][]corev1.Pod{}
		for _, p := range workers {
			if hosts[p.Spec.NodeName] {
				t.Fatalf("two workers on node %s", p.Spec.NodeName)
			}
			hosts[p.Spec.NodeName] = true
			if p.Status.PodIP == "" || p.Status.HostIP == "" || p.Status.HostIP != nodeagent.NodeInternalIP(ptrTo(nodes[p.Spec.NodeName])) {
				t.Fatalf("pod %s: podIP %q hostIP %q, node %s", p.Name, p.Status.PodIP, p.Status.HostIP, p.Spec.NodeName)
			}
			if len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready || p.Status.ContainerStatuses[0].State.Running == nil {
				t.Fatalf("pod %s container statuses %+v", p.Name, p.Status.ContainerStatuses)
			}
			replicas[p.Labels[tpuwebhook.ReplicaNameLabel]] = append(replicas[p.Labels[tpuwebhook.ReplicaNameLabel]], p)
		}
		if len(replicas) != 2 {
			t.Fatalf("want 2 replicas, got %d", len(replicas))
		}
		pools := map[string]bool{}
		for rname, pods := range replicas {
			if len(pods) != 4 {
				t.Fatalf("replica %s has %d Pods", rname, len(pods))
			}
			replica := pods[0].Labels[tpuwebhook.ReplicaIndexLabel]
			pool := nodes[pods[0].Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]
			if pools[pool] {
				t.Fatalf("two replicas on node pool %s", pool)
			}
			pools[pool] = true
			ids := map[string]bool{}
			wantHostnames := fmt.Sprintf("tpu-%[1]s-0.multi-headless,tpu-%[1]s-1.multi-headless,tpu-%[1]s-2.multi-headless,tpu-%[1]s-3.multi-headless", replica)
			for _, p := range pods {
				if got := nodes[p.Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]; got != pool {
					t.Fatalf("replica %s spans node pools %s and %s", rname, pool, got)
				}
				id, _ := env(p, "TPU_WORKER_ID")
				ids[id] = true
				if id != p.Labels[tpuwebhook.HostIndexLabel] {
					t.Fatalf("pod %s: TPU_WORKER_ID %s, host index %s", p.Name, id, p.Labels[tpuwebhook.HostIndexLabel])
				}
				if got, _ := env(p, "TPU_WORKER_HOSTNAMES"); got != wantHostnames {
					t.Fatalf("pod %s: TPU_WORKER_HOSTNAMES %q, want %q", p.Name, got, wantHostnames)
				}
				if got, _ := env(p, "TPU_NAME"); got != "tpu-"+replica {
					t.Fatalf("pod %s: TPU_NAME %q", p.Name, got)
				}
				if p.Spec.Hostname != "tpu-"+replica+"-"+id || p.Spec.Subdomain != "multi-headless" {
					t.Fatalf("pod %s: hostname %q subdomain %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
				}
				if a := p.Spec.Affinity; a == nil || a.PodAffinity == nil || a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "cloud.google.com/gke-nodepool" {
					t.Fatalf("pod %s: affinity %+v", p.Name, a)
				}
			}
			if len(ids) != 4 || !ids["0"] || !ids["1"] || !ids["2"] || !ids["3"] {
				t.Fatalf("replica %s TPU_WORKER_IDs %v, want 0..3", rname, ids)
			}
		}
		if !pools["slice-a"] || !pools["slice-b"] {
			t.Fatalf("replicas on pools %v, want slice-a and slice-b", pools)
		}
		pids = ec.runtimeOf().Running()
		for _, comp := range []string{clusterkube.ComponentScheduler, clusterkube.ComponentControllerManager,
			clusterkube.ComponentRayOperator, clusterkube.ComponentNodeAgent} {
			if _, ok := pids[comp]; !ok {
				t.Fatalf("%s not running: %v", comp, pids)
			}
		}
		t.Logf("RSS while running: kube-scheduler %d MB, kube-controller-manager %d MB, ray-operator %d MB",
			rssKB(pids[clusterkube.ComponentScheduler])/1024, rssKB(pids[clusterkube.ComponentControllerManager])/1024,
			rssKB(pids[clusterkube.ComponentRayOperator])/1024)
	})

	t.Run("single-host worker group", func(t *testing.T) {
		if err := createRayCluster(ctx, dyn, tpuwebhooktest.RayCluster("solo", "one", 1, 1, 4, "2x2")); err != nil {
			t.Fatal(err)
		}
		workers := waitRayPods(t, kube, "solo", 1)
		p := workers[0]
		if pool := nodesOf(t, kube)[p.Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]; pool != "single" {
			t.Fatalf("single-host worker on pool %q", pool)
		}
		id, _ := env(p, "TPU_WORKER_ID")
		tpuName, _ := env(p, "TPU_NAME")
		_, hasHostnames := env(p, "TPU_WORKER_HOSTNAMES")
		if id != "0" || tpuName != "one-0" || hasHostnames || p.Spec.Hostname != "" || p.Labels["replicaIndex"] != "one-0" {
			t.Fatalf("single-host worker: TPU_WORKER_ID %q TPU_NAME %q hostnames %v hostname %q labels %v", id, tpuName, hasHostnames, p.Spec.Hostname, p.Labels)
		}
	})

	t.Run("node auto-provisioning adds a v6e 2x4 slice", func(t *testing.T) {
		// NAP settings through UpdateCluster, as GKE takes them.
		mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{
			DesiredClusterAutoscaling: &containerpb.ClusterAutoscaling{EnableNodeAutoprovisioning: true, ResourceLimits: []*containerpb.ResourceLimit{
				{ResourceType: "cpu", Minimum: 1, Maximum: 1000000},
				{ResourceType: "memory", Minimum: 1, Maximum: 10000000},
				// The cluster's own v6e pools hold 36 chips (two 4x4 slices and a 4-chip host),
				// which the limit counts too: room for one auto-provisioned 2x4.
				{ResourceType: "tpu-v6e-slice", Maximum: 44},
			}},
		}}))
		cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
		if err != nil || !cl.GetAutoscaling().GetEnableNodeAutoprovisioning() || len(cl.GetAutoscaling().GetResourceLimits()) != 3 {
			t.Fatalf("cluster autoscaling %v %v", cl.GetAutoscaling(), err)
		}
		if err := createRayCluster(ctx, dyn, tpuwebhooktest.RayCluster("grow", "nap", 1, 2, 4, "2x4")); err != nil {
			t.Fatal(err)
		}
		workers := waitRayPods(t, kube, "grow", 2)
		nodes := nodesOf(t, kube)
		pool := nodes[workers[0].Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]
		if !strings.HasPrefix(pool, "nap-ct6e-standa-4t-") || nodes[workers[1].Spec.NodeName].Labels["cloud.google.com/gke-nodepool"] != pool ||
			workers[0].Spec.NodeName == workers[1].Spec.NodeName {
			t.Fatalf("workers on %s and %s", workers[0].Spec.NodeName, workers[1].Spec.NodeName)
		}
		np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name + "/nodePools/" + pool})
		if err != nil {
			t.Fatal(err)
		}
		if !np.GetAutoscaling().GetAutoprovisioned() || np.Config.MachineType != "ct6e-standard-4t" || np.InitialNodeCount != 2 ||
			np.PlacementPolicy.GetType() != containerpb.NodePool_PlacementPolicy_COMPACT || np.PlacementPolicy.GetTpuTopology() != "2x4" ||
			np.Status != containerpb.NodePool_RUNNING {
			t.Fatalf("auto-provisioned pool %v", np)
		}
		list, err := c.ListNodePools(ctx, &containerpb.ListNodePoolsRequest{Parent: name})
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, p := range list.NodePools {
			listed = listed || p.Name == pool
		}
		ops, err := c.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: testLocation})
		if err != nil {
			t.Fatal(err)
		}
		created := false
		for _, op := range ops.Operations {
			created = created || (op.OperationType == containerpb.Operation_CREATE_NODE_POOL && strings.HasSuffix(op.TargetLink, "/nodePools/"+pool) && op.Status == containerpb.Operation_DONE)
		}
		if !listed || !created {
			t.Fatalf("pool %s listed %v, CREATE_NODE_POOL operation %v", pool, listed, created)
		}

		// A second slice would take the cluster's v6e chips over the limit of 44.
		if err := createRayCluster(ctx, dyn, tpuwebhooktest.RayCluster("over", "nap", 1, 2, 4, "2x4")); err != nil {
			t.Fatal(err)
		}
		waitScaleUpRefused(t, kube, "over-", "pod didn't trigger scale-up: 1 max cluster tpu-v6e-slice limit reached")
		list, err = c.ListNodePools(ctx, &containerpb.ListNodePoolsRequest{Parent: name})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.NodePools {
			if strings.HasPrefix(p.Name, "nap-") && p.Name != pool {
				t.Fatalf("a second auto-provisioned pool %s over the limit", p.Name)
			}
		}
		for _, p := range rayPods(t, kube, "over", "worker") {
			if p.Spec.NodeName != "" {
				t.Fatalf("pod %s placed on %s", p.Name, p.Spec.NodeName)
			}
		}
		if err := rcs.Delete(ctx, "over", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}

		// Every node counts against the cpu and memory limits, TPU hosts of 180 vCPUs and
		// 720 GiB included: with room for the TPU chips but 100 cores short of two more hosts,
		// nothing is created.
		cores, gib := int64(0), int64(0)
		for _, n := range nodesOf(t, kube) {
			cores += n.Status.Capacity.Cpu().Value()
			gib += n.Status.Capacity.Memory().Value() >> 30
		}
		mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{
			DesiredClusterAutoscaling: &containerpb.ClusterAutoscaling{EnableNodeAutoprovisioning: true, ResourceLimits: []*containerpb.ResourceLimit{
				{ResourceType: "cpu", Maximum: cores + 260}, {ResourceType: "memory", Maximum: gib + 2000}, {ResourceType: "tpu-v6e-slice", Maximum: 1000},
			}},
		}}))
		if err := createRayCluster(ctx, dyn, tpuwebhooktest.RayCluster("cores", "nap", 1, 2, 4, "2x4")); err != nil {
			t.Fatal(err)
		}
		waitScaleUpRefused(t, kube, "cores-", "pod didn't trigger scale-up: 1 max cluster cpu limit reached")
		if err := rcs.Delete(ctx, "cores", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a failed host fails its Pods", func(t *testing.T) {
		workers := rayPods(t, kube, "multi", "worker")
		var victim corev1.Pod
		for _, p := range workers {
			if p.Labels[tpuwebhook.HostIndexLabel] == "1" {
				victim = p
			}
		}
		nodes := nodesOf(t, kube)
		pool := nodes[victim.Spec.NodeName].Labels["cloud.google.com/gke-nodepool"]
		worker, _ := WorkerIndex(victim.Spec.NodeName)
		w, err := kube.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + victim.Name, ResourceVersion: victim.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if err := testEmu.FailHost(ctx, HostFailure{Cluster: name, NodePool: pool, Worker: worker}); err != nil {
			t.Fatal(err)
		}
		var failed *corev1.Pod
		for failed == nil {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch ended")
				}
				if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Modified && p.Status.Phase == corev1.PodFailed {
					failed = p
				}
			case <-ctx.Done():
				t.Fatalf("pod %s on the failed host never failed", victim.Name)
			}
		}
		if failed.Status.Reason != "NodeLost" || failed.Status.ContainerStatuses[0].State.Terminated == nil {
			t.Fatalf("failed pod status %+v", failed.Status)
		}
		// KubeRay replaces the whole replica; nothing runs on the failed host again.
		testwait.For(t, "the failed replica to be replaced", func() bool {
			fresh := 0
			for _, p := range rayPods(t, kube, "multi", "worker") {
				if p.Labels[tpuwebhook.ReplicaNameLabel] != victim.Labels[tpuwebhook.ReplicaNameLabel] {
					fresh++
				}
			}
			return fresh == 8 // the healthy replica and the new one
		})
		for _, p := range rayPods(t, kube, "multi", "worker") {
			if p.Spec.NodeName == victim.Spec.NodeName {
				t.Fatalf("pod %s placed on the failed host", p.Name)
			}
		}
	})

	t.Run("deleting a RayCluster removes its Pods", func(t *testing.T) {
		if err := rcs.Delete(ctx, "solo", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, "the Pods of the deleted RayCluster to go", func() bool {
			return len(rayPods(t, kube, "solo", "worker"))+len(rayPods(t, kube, "solo", "head")) == 0
		})
	})

	t.Run("the runtime stops with the cluster", func(t *testing.T) {
		mustSucceed(t, c)(c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: name}))
		if ec.runtimeOf() != nil {
			t.Fatal("the cluster's runtime outlived it")
		}
		for comp, pid := range pids {
			if pid != 0 && syscall.Kill(pid, 0) == nil {
				t.Fatalf("%s (pid %d) still running", comp, pid)
			}
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// A cluster without the Ray Operator add-on runs what users apply as any GKE cluster does:
// kube-scheduler places a Deployment's Pods, kube-controller-manager makes them, the node agent
// runs them; no ray-operator runs. (Its creation also takes NAP settings, reported as given.)
func TestWorkloadsWithoutTheRayAddon(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	name := testLocation + "/clusters/no-ray"
	nap := rulestest.Autoscaling(true, rulestest.Limit("cpu", 1, 64), rulestest.Limit("memory", 1, 256), rulestest.Limit("tpu-v6e-slice", 0, 16))
	mustSucceed(t, c)(c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "no-ray", NodePools: []*containerpb.NodePool{tpuPool("system", "e2-standard-4", 2, nil)}, Autoscaling: nap,
	}}))
	t.Cleanup(func() {
		mustSucceed(t, c)(c.DeleteCluster(context.Background(), &containerpb.DeleteClusterRequest{Name: name}))
	})
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if a := cl.GetAutoscaling(); !a.GetEnableNodeAutoprovisioning() || len(a.ResourceLimits) != 3 || a.ResourceLimits[2].Maximum != 16 {
		t.Fatalf("cluster autoscaling reported as %v", a)
	}
	testEmu.mu.Lock()
	ec := testEmu.st.clusters[name]
	testEmu.mu.Unlock()
	kube, _ := kubeFor(t, cl)
	if got := ec.runtimeOf().Running(); len(got) != 0 {
		t.Fatalf("components running before any workload: %v", got)
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptrTo(int32(3)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}},
	}}
	if _, err := kube.AppsV1().Deployments("web").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the Deployment's three Pods to run", func() bool {
		got, err := kube.AppsV1().Deployments("web").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.ReadyReplicas == 3 && got.Status.AvailableReplicas == 3
	})
	running := ec.runtimeOf().Running()
	for _, comp := range []string{clusterkube.ComponentScheduler, clusterkube.ComponentControllerManager, clusterkube.ComponentNodeAgent} {
		if _, ok := running[comp]; !ok {
			t.Errorf("%s not running: %v", comp, running)
		}
	}
	if _, ok := running[clusterkube.ComponentRayOperator]; ok {
		t.Errorf("ray-operator runs on a cluster without the add-on: %v", running)
	}
	// A node pool being deleted is drained first: its Pods are deleted before its nodes go, well
	// within the 40 s the Pod garbage collector leaves an orphan.
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: name,
		NodePool: &containerpb.NodePool{Name: "extra", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}}))
	pinned := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: "web"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"cloud.google.com/gke-nodepool": "extra"},
		Containers:   []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := kube.CoreV1().Pods("web").Create(ctx, pinned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the pinned Pod to run", func() bool {
		p, err := kube.CoreV1().Pods("web").Get(ctx, "pinned", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	started := time.Now()
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: name + "/nodePools/extra"}))
	if _, err := kube.CoreV1().Pods("web").Get(ctx, "pinned", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Pod of a deleted node pool is still there (%v) %s after the deletion started", err, time.Since(started))
	}

	// The namespace controller empties and removes a deleted namespace; the garbage collector
	// removes the ReplicaSet and its Pods with it.
	if err := kube.CoreV1().Namespaces().Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the deleted namespace to go", func() bool {
		_, err := kube.CoreV1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// Without kube-scheduler, kube-controller-manager or ray-operator the emulator does not start,
// and says what to run.
func TestMissingRayBinariesSayWhatToRun(t *testing.T) {
	dir := t.TempDir()
	optional := []string{"kube-scheduler", "kube-controller-manager", "ray-operator"}
	for _, missing := range optional {
		for _, b := range append([]string{"kube-apiserver", "etcd"}, optional...) {
			if err := os.WriteFile(dir+"/"+b, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.Remove(dir + "/" + missing)
		_, err := Start(context.Background(), Options{KubeBinDir: dir, CRDDir: testEmu.bins.CRDDir})
		if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "make tools") {
			t.Fatalf("without %s: want an error naming it and `make tools`, got %v", missing, err)
		}
	}
}
