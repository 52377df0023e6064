package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// testClientset reaches the API server of an emulated cluster with client-go itself, to look at
// and change what raytpu's kube package does not expose.
func testClientset(t *testing.T, cluster string) kubernetes.Interface {
	t.Helper()
	k, err := testClientsetE(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testClientsetE(cluster string) (kubernetes.Interface, error) {
	c, err := newTestGKEClient()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	cl, err := c.GetCluster(context.Background(), gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster}, gke.Fresh)
	if err != nil {
		return nil, err
	}
	ca, err := base64.StdEncoding.DecodeString(cl.GetMasterAuth().GetClusterCaCertificate())
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(&rest.Config{Host: "https://" + cl.GetEndpoint(), BearerToken: testEmulator.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
}

// rayPodsOf lists the Pods of a RayCluster's group in namespace default ("" for the head).
func rayPodsOf(t *testing.T, cluster, name, group string) []corev1.Pod {
	t.Helper()
	sel := "ray.io/cluster=" + name + ",ray.io/node-type=head"
	if group != "" {
		sel = "ray.io/cluster=" + name + ",ray.io/group=" + group
	}
	pods, err := testClientset(t, cluster).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// createServiceAccountOutOfBand makes a ServiceAccount in namespace default, as a user would with
// kubectl before the RayCluster that names it.
func createServiceAccountOutOfBand(t *testing.T, cluster, name string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
		Annotations: map[string]string{"iam.gke.io/gcp-service-account": fmt.Sprintf("%s@%s.iam.gserviceaccount.com", name, testProject)}}}
	if _, err := testClientset(t, cluster).CoreV1().ServiceAccounts("default").Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// envOf is the value of a variable of a Pod's Ray container ("" when unset).
func envOf(p corev1.Pod, name string) string {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// cordonSlice marks the nodes of a node pool unschedulable (or schedulable again), as kubectl
// cordon does: Pods already there stay, new ones go elsewhere or wait.
func cordonSlice(cluster, pool string, unschedulable bool) error {
	k, err := testClientsetE(cluster)
	if err != nil {
		return err
	}
	ctx := context.Background()
	nodes, err := k.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool=" + pool})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("node pool %s has no nodes", pool)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		n.Spec.Unschedulable = unschedulable
		if _, err := k.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// restartWorkersOutOfBand deletes every worker Pod of the RayClusters at once, so that KubeRay
// makes them again and the scheduler places them in whatever order it takes them.
func restartWorkersOutOfBand(t *testing.T, cluster string, names ...string) {
	t.Helper()
	k := testClientset(t, cluster)
	for _, name := range names {
		err := k.CoreV1().Pods("default").DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "ray.io/cluster=" + name + ",ray.io/node-type=worker"})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// waitRayClusterRunning waits until the RayCluster runs want worker Pods, all of them made after
// since (zero: any).
func waitRayClusterRunning(t *testing.T, cluster, name string, want int, since time.Time) {
	t.Helper()
	ctx := testwait.Context(t)
	k := testClientset(t, cluster)
	_, err := testKubeClient(t, cluster).WaitForRayClusterPods(ctx, "default", name, func(pods []kube.RayPod) bool {
		running := 0
		for _, p := range pods {
			if p.Head || !p.Running {
				continue
			}
			pod, err := k.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{})
			if err == nil && !pod.CreationTimestamp.Time.Before(since.Truncate(time.Second)) {
				running++
			}
		}
		return running == want
	})
	if err != nil {
		t.Fatal(err)
	}
}

// megascaleFromTheWebhook checks that every Pod of a multislice group carries the MEGASCALE_*
// variables of multislice JAX: MEGASCALE_NUM_SLICES from raytpu, the slice id (one per replica,
// 0 to slices-1), coordinator and port from GKE's TPU webhook.
func megascaleFromTheWebhook(t *testing.T, cluster, name, group string, slices int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		byReplica := map[string]string{}
		ids := map[string]bool{}
		for _, p := range rayPodsOf(t, cluster, name, group) {
			want := map[string]string{
				"MEGASCALE_NUM_SLICES": strconv.Itoa(slices), "MEGASCALE_PORT": "8081",
				"MEGASCALE_COORDINATOR_ADDRESS": fmt.Sprintf("%s-0-0.%s-headless", group, name),
			}
			for k, v := range want {
				if got := envOf(p, k); got != v {
					return fmt.Errorf("Pod %s: %s = %q, want %q", p.Name, k, got, v)
				}
			}
			id, replica := envOf(p, "MEGASCALE_SLICE_ID"), p.Labels["ray.io/worker-group-replica-name"]
			if prev, seen := byReplica[replica]; seen && prev != id {
				return fmt.Errorf("replica %s: MEGASCALE_SLICE_ID %s and %s", replica, prev, id)
			}
			byReplica[replica], ids[id] = id, true
		}
		for i := 0; i < slices; i++ {
			if !ids[strconv.Itoa(i)] || len(byReplica) != slices {
				return fmt.Errorf("MEGASCALE_SLICE_ID by replica %v, want one of 0..%d each", byReplica, slices-1)
			}
		}
		return nil
	}
}
