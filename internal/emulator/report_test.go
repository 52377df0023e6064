package emulator

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// TestReportShowsWhatATestWaitsFor: the report of a cluster has its pools' status and hosts, its
// nodes, its Pods' phases with why they wait, and the events that say so.
func TestReportShowsWhatATestWaitsFor(t *testing.T) {
	_, _, kube, _ := sharedKube(t)
	ctx := testCtx(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "report-nowhere", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"cloud.google.com/gke-nodepool": "no-such-pool"},
			Containers:   []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}
	if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Pods("default").Delete(testCtx(t), pod.Name, metav1.DeleteOptions{}) })

	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^cluster projects/[^ ]+/clusters/` + sharedClusterID + `: RUNNING`),
		regexp.MustCompile(`(?m)^  node pool system: RUNNING, 1 nodes in \[`),
		regexp.MustCompile(`(?m)^  node [^ ]+: Ready=True, pool system$`),
		regexp.MustCompile(`(?m)^  pod default/report-nowhere: Pending; PodScheduled=False Unschedulable `),
		regexp.MustCompile(`(?m)^  event \d\d:\d\d:\d\d Warning FailedScheduling pod/report-nowhere: `),
	}
	var report string
	defer func() {
		if t.Failed() {
			t.Logf("the last report:\n%s", report)
		}
	}()
	testwait.For(t, "the unschedulable Pod and its event in the report", func() bool {
		report = testEmu.Report(ctx, sharedClusterID, "not-a-cluster")
		for _, re := range want {
			if !re.MatchString(report) {
				return false
			}
		}
		return true
	})
	if strings.Count(report, "\ncluster ") != 0 || !strings.HasPrefix(report, "cluster ") {
		t.Errorf("want the one cluster named, got:\n%s", report)
	}
	if all := testEmu.Report(ctx, "not-a-cluster"); !strings.Contains(all, "/clusters/"+sharedClusterID+":") {
		t.Errorf("a report naming no cluster the emulator has: want every cluster, got:\n%s", all)
	}
}
