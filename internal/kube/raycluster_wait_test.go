package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// A wait that times out on a Pod no node takes says why, in the words of the scheduler and of
// the cluster autoscaler, as `kubectl describe pod` shows them.
func TestWaitForRayClusterPods_explainsUnscheduledPods(t *testing.T) {
	requireKubeRay(t)
	ctx := testwait.Context(t)
	c := env.client
	const ns, cluster = "default", "wait-unscheduled"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cluster + "-worker-abc", Namespace: ns,
			Labels: map[string]string{rayClusterLabel: cluster, rayGroupLabel: "on-demand", rayNodeTypeLabel: "worker"}},
		Spec: corev1.PodSpec{
			// No scheduler of this name runs, so only this test writes the Pod's status.
			SchedulerName: "raytpu-test-none",
			Containers:    []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.55.0-py310-tpu"}},
		},
	}
	created, err := c.core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.core.Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{})
	})
	const schedulerSays = "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector."
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: schedulerSays, LastTransitionTime: metav1.Now()}}
	created.Status.Phase = corev1.PodPending
	if _, err := c.core.Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, msg := range []string{
		"pod triggered scale-up: [{nap-ct6e-standa-4t-aaaaaaaa 0->2 (max: 2)}]",
		"pod didn't trigger scale-up: 1 max cluster tpu-v6e-slice limit reached",
	} {
		at := metav1.NewTime(time.Now().Add(time.Duration(i) * time.Second))
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: created.UID},
			Reason:         "NotTriggerScaleUp", Message: msg, Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: autoscalerSource},
			FirstTimestamp: at, LastTimestamp: at, Count: 1,
		}
		if _, err := c.core.Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Safe on a busy machine: the wait is to time out, and what it says then it reads as it does,
	// from its watch or, not synced yet, from a listing of its own.
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pods, err := c.WaitForRayClusterPods(waitCtx, ns, cluster, func(p []RayPod) bool { return false })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a deadline error, got %v", err)
	}
	if len(pods) != 1 || pods[0].Unschedulable != schedulerSays {
		t.Errorf("pods: got %+v, want one with the scheduler's message", pods)
	}
	for _, want := range []string{
		"0 of 1 Pods Running",
		pod.Name + " (Pending, unscheduled; scheduler: " + schedulerSays,
		"; cluster-autoscaler: pod didn't trigger scale-up: 1 max cluster tpu-v6e-slice limit reached)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "pod triggered scale-up") {
		t.Errorf("error %q names an older autoscaler event, not the latest", err)
	}
	// A wait that ends before its watch has listed anything still says what there is.
	shortCtx, cancelShort := context.WithTimeout(ctx, time.Nanosecond)
	defer cancelShort()
	if _, err := c.WaitForRayClusterPods(shortCtx, ns, cluster, func([]RayPod) bool { return false }); err == nil ||
		!strings.Contains(err.Error(), "0 of 1 Pods Running") {
		t.Errorf("a wait ended before the first listing: error %v, want it to count the Pod", err)
	}
}

// A long wait for a RayCluster's Pods costs the API server a few requests, however long it lasts:
// it lists and then watches, and notices a Pod turn Running as it does.
func TestWaitForRayClusterPods_watchesInsteadOfPolling(t *testing.T) {
	requireKubeRay(t)
	ctx := testwait.Context(t)
	const ns, cluster = "default", "wait-long"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cluster + "-worker-abc", Namespace: ns,
			Labels: map[string]string{rayClusterLabel: cluster, rayGroupLabel: "g", rayNodeTypeLabel: "worker"}},
		Spec: corev1.PodSpec{
			SchedulerName: "raytpu-test-none", // only this test writes the Pod's status
			Containers:    []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.55.0-py310-tpu"}},
		},
	}
	created, err := env.client.core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.client.core.Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{}) })

	var mu sync.Mutex
	requests := map[string]int{}
	reads, watches := 0, 0
	// Watching the RayCluster, its Pods and the TPU nodes, the wait has listed them all.
	watching, watchesAll := signal()
	cl := clusterFor(env.cluster, staticToken(env.emu.Token()))
	cl.onRequest = func(r *http.Request) {
		what := r.Method + " " + r.URL.Path
		if r.URL.Query().Get("watch") == "true" {
			what = "WATCH " + r.URL.Path
		}
		mu.Lock()
		defer mu.Unlock()
		requests[what]++
		if strings.HasPrefix(what, "WATCH ") {
			watches++
		} else {
			reads++
		}
		if watches == 3 {
			watchesAll()
		}
	}
	c := testClient(t, cl)

	// The quiet part of a long wait, in which polling would keep reading.
	const quiet = 20 * time.Second
	readsBefore := make(chan int, 1) // the Pod turned Running
	started := time.Now()
	go func() {
		select {
		case <-watching:
		case <-ctx.Done():
			return
		}
		time.Sleep(quiet)
		mu.Lock()
		readsBefore <- reads
		mu.Unlock()
		created.Status.Phase = corev1.PodRunning
		created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if _, err := env.client.core.Pods(ns).UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}()
	pods, err := c.WaitForRayClusterPods(ctx, ns, cluster, func(p []RayPod) bool { return len(p) == 1 && p[0].Running })
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(started)
	if len(pods) != 1 || pods[0].Name != pod.Name {
		t.Fatalf("pods: %+v", pods)
	}
	mu.Lock()
	defer mu.Unlock()
	if after := reads - <-readsBefore; after != 0 {
		t.Errorf("the wait read %d times after the Pod turned Running, want its watch to tell it", after)
	}
	total := 0
	for _, n := range requests {
		total += n
	}
	t.Logf("%d requests in a wait of %s (%.1f per minute): %v", total, waited.Round(time.Second), float64(total)/waited.Minutes(), requests)
	// One listing and one watch each of the RayCluster, its Pods and the TPU nodes, and a few
	// to spare for a watch the API server ends early; polling made 2 requests a poll.
	if total > 10 {
		t.Errorf("%d requests in %s, want at most 10: %v", total, waited.Round(time.Second), requests)
	}
}
