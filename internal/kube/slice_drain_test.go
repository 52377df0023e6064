package kube

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// TestDrainSlice cordons a slice of its own, drains it as kubectl drain does (every host cordoned
// before its Pods are listed) and uncordons it.
// On the slice's host run a ReplicaSet's Pod, a DaemonSet's Pod, a finished Job's Pod and a Pod of
// no controller, made by the cluster's own controllers; what is tested is how the drain treats
// each kind. It needs the add-on on, so it runs after TestKubeRay (files run in name order), which
// times how the add-on comes up from off.
func TestDrainSlice(t *testing.T) {
	requireKubeRay(t)
	ctx := testwait.Context(t)
	const pool = "drain"
	op, err := env.gke.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: testClusterName(), NodePool: &containerpb.NodePool{
		Name: pool, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "ct6e-standard-4t"},
	}})
	if err == nil {
		err = waitOperation(ctx, op)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The slice goes with the test, so that the test runs again in the same process (-count).
	t.Cleanup(func() {
		op, err := env.gke.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: testClusterName() + "/nodePools/" + pool})
		if err == nil {
			err = waitOperation(ctx, op)
		}
		if err != nil {
			t.Errorf("deleting the slice: %v", err)
		}
	})
	hosts, err := env.client.WaitForSliceHosts(ctx, pool, 1, testPoll)
	if err != nil {
		t.Fatal(err)
	}
	node := hosts[0].Name
	// Each workload's Pods run on the slice's host alone; they request no TPU, so they tolerate
	// the TPU taint themselves.
	podSpec := func(app string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: corev1.PodSpec{
			NodeSelector:  map[string]string{"cloud.google.com/gke-nodepool": pool},
			Tolerations:   []corev1.Toleration{{Key: "google.com/tpu", Operator: corev1.TolerationOpExists}},
			RestartPolicy: restart, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}
	}
	selector := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	one := int32(1)
	cs := testClientset(t)
	apps, batch := cs.AppsV1(), cs.BatchV1()
	if _, err := apps.ReplicaSets("default").Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: selector("worker"), Template: podSpec("worker", corev1.RestartPolicyAlways)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := apps.DaemonSets("default").Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: selector("agent"), Template: podSpec("agent", corev1.RestartPolicyAlways)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := batch.Jobs("default").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "done"},
		Spec: batchv1.JobSpec{Template: podSpec("done", corev1.RestartPolicyNever)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bare := podSpec("bare", corev1.RestartPolicyNever)
	if _, err := env.client.core.Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Labels: bare.Labels},
		Spec: bare.Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	background := metav1.DeletePropagationBackground
	t.Cleanup(func() {
		del := metav1.DeleteOptions{PropagationPolicy: &background}
		_ = apps.ReplicaSets("default").Delete(context.Background(), "worker", del)
		_ = apps.DaemonSets("default").Delete(context.Background(), "agent", del)
		_ = batch.Jobs("default").Delete(context.Background(), "done", del)
		_ = env.client.core.Pods("default").Delete(context.Background(), "bare", metav1.DeleteOptions{})
	})
	// The Pod of each, once it runs on the host; the Job's then ends, as a finished Job's Pod does.
	pods := map[string]string{} // app → Pod name
	if err := waitFor(ctx, testPoll, func(ctx context.Context) (bool, error) {
		l, err := env.client.core.Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return false, err
		}
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				pods[p.Labels["app"]] = p.Name
			}
		}
		return len(pods) == 4, nil
	}, func(time.Duration) string { return fmt.Sprintf("the four Pods never ran on %s: %v", node, pods) }); err != nil {
		t.Fatal(err)
	}
	p, err := env.client.core.Pods("default").Get(ctx, pods["done"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodSucceeded
	if _, err := env.client.core.Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The drain's requests, in order, through a client of its own: every host is cordoned before
	// any Pod is listed, so that none lands on the slice after the list (kubectl drain's order).
	var mu sync.Mutex
	var requests []string
	drainer := clientObserving(t, func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, r.Method+" "+r.URL.Path)
	})
	var d Drain
	for _, round := range []struct{ want []string }{{[]string{node}}, {nil}} {
		mu.Lock()
		requests = nil
		mu.Unlock()
		cordoned, drain, err := drainer.CordonForDrain(ctx, pool)
		if err != nil || !reflect.DeepEqual(cordoned, round.want) {
			t.Fatalf("cordon for the drain: cordoned %v, %v; want %v (a node already cordoned is left alone)", cordoned, err, round.want)
		}
		d = drain
		mu.Lock()
		firstList, lastCordon := slices.Index(requests, "GET /api/v1/pods"), -1
		for i, r := range requests {
			if strings.HasPrefix(r, "PATCH /api/v1/nodes/") {
				lastCordon = i
			}
		}
		if firstList < 0 || lastCordon > firstList || (round.want != nil && lastCordon < 0) {
			t.Errorf("the drain's requests %q: a host is cordoned (PATCH) after the Pods are listed (GET), or one of them is "+
				"missing; want every host cordoned before the list", requests)
		}
		mu.Unlock()
	}
	if n, err := env.client.core.Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Fatalf("node %s after cordon: unschedulable %v, %v", node, n.Spec.Unschedulable, err)
	}

	ref := func(app string) []string { return []string{"default/" + pods[app]} }
	for what, got := range map[string][]PodRef{"evict": d.Evict, "unmanaged": d.Unmanaged, "finished": d.Finished} {
		want := map[string][]string{"evict": ref("worker"), "unmanaged": ref("bare"), "finished": ref("done")}[what]
		if names := fmt.Sprint(refNames(got)); names != fmt.Sprint(want) {
			t.Errorf("drain of %s: %s = %s, want %v (DaemonSet Pods stay)", pool, what, names, want)
		}
	}
	if err := env.client.EvictPods(ctx, append(d.Evict, d.Unmanaged...), d.Finished, testPoll); err != nil {
		t.Fatal(err)
	}
	for app, name := range pods {
		_, err := env.client.core.Pods("default").Get(ctx, name, metav1.GetOptions{})
		if gone := apierrors.IsNotFound(err); gone != (app != "agent") {
			t.Errorf("after the drain, Pod %s of %s gone = %v (%v); only the DaemonSet's stays", name, app, gone, err)
		}
	}

	if changed, err := env.client.SetSliceSchedulable(ctx, pool, true); err != nil || !reflect.DeepEqual(changed, []string{node}) {
		t.Errorf("uncordon: changed %v, %v; want %v", changed, err, []string{node})
	}
	if n, err := env.client.core.Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
		t.Errorf("node %s after uncordon: unschedulable %v, %v", node, n.Spec.Unschedulable, err)
	}
}

func refNames(refs []PodRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return out
}

// testClientset is a client-go clientset of the test cluster, for the workloads a test arranges.
func testClientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	ca, err := base64.StdEncoding.DecodeString(env.cluster.GetMasterAuth().GetClusterCaCertificate())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + env.cluster.GetEndpoint(), BearerToken: env.emu.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
