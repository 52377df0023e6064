package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A wait that times out on a Pod no node takes says why, in the words of the scheduler and of
// the cluster autoscaler, as `kubectl describe pod` shows them.
func TestWaitForRayClusterPods_explainsUnscheduledPods(t *testing.T) {
	ctx := testContext(t, time.Minute)
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

	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pods, err := c.WaitForRayClusterPods(waitCtx, ns, cluster, 200*time.Millisecond, func(p []RayPod) bool { return false })
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
}
