package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// autoscalerSource is the event source of GKE's cluster autoscaler, which also speaks for node
// auto-provisioning ("TriggeredScaleUp", "NotTriggerScaleUp" on the Pods it considered).
const autoscalerSource = "cluster-autoscaler"

// maxPodsDescribed bounds how many waiting Pods a timeout error names.
const maxPodsDescribed = 5

// autoscalerEventsWait bounds the read of the cluster autoscaler's events that explains a wait
// which has timed out.
const autoscalerEventsWait = 5 * time.Second

func unscheduled(pods []RayPod) bool {
	for _, p := range pods {
		if p.Node == "" && !p.Running {
			return true
		}
	}
	return false
}

// AutoscalerEvents returns the cluster autoscaler's latest event message by Pod name in the
// namespace ("pod triggered scale-up: ...", "pod didn't trigger scale-up: ..."). It only
// explains, so a failure to list gives nothing rather than an error.
func (c *Client) AutoscalerEvents(ctx context.Context, namespace string) map[string]string {
	list, err := c.core.Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "source=" + autoscalerSource})
	if err != nil {
		return nil
	}
	latest := map[string]corev1.Event{}
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind != "Pod" {
			continue
		}
		if prev, ok := latest[ev.InvolvedObject.Name]; !ok || eventTime(ev).After(eventTime(prev)) {
			latest[ev.InvolvedObject.Name] = ev
		}
	}
	out := make(map[string]string, len(latest))
	for pod, ev := range latest {
		out[pod] = ev.Message
	}
	return out
}

func eventTime(ev corev1.Event) time.Time {
	if !ev.LastTimestamp.IsZero() {
		return ev.LastTimestamp.Time
	}
	if !ev.EventTime.IsZero() {
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// describePodWait says how far a RayCluster's Pods got: how many run, and for up to
// maxPodsDescribed others their phase, node and, when unscheduled, the scheduler's and the
// cluster autoscaler's reasons.
func describePodWait(namespace, name string, pods []RayPod, scaleUp map[string]string, waited time.Duration) string {
	running := 0
	var waiting []string
	for _, p := range pods {
		if p.Running {
			running++
			continue
		}
		if len(waiting) == maxPodsDescribed {
			continue
		}
		where := p.Node
		if where == "" {
			where = "unscheduled"
		}
		var why []string
		if p.Unschedulable != "" {
			why = append(why, "scheduler: "+p.Unschedulable)
		}
		if m := scaleUp[p.Name]; m != "" && p.Node == "" {
			why = append(why, autoscalerSource+": "+m)
		}
		desc := fmt.Sprintf("%s (%s, %s", p.Name, p.Phase, where)
		if len(why) > 0 {
			desc += "; " + strings.Join(why, "; ")
		}
		waiting = append(waiting, desc+")")
	}
	msg := fmt.Sprintf("kube: RayCluster %s/%s: %d of %d Pods Running after waiting %s", namespace, name, running, len(pods), waited)
	if len(waiting) > 0 {
		msg += "; not running: " + strings.Join(waiting, ", ")
	}
	return msg
}
