package kube

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// How KubeRay v1.5.0 reports a RayService (ray-operator controllers/ray/rayservice_controller.go):
//   - on its first reconcile it names a pending RayCluster (status.pendingServiceStatus.
//     rayClusterName), creates it, and once the head is ready sends the Serve config to its
//     dashboard and copies the applications' statuses into the pending status; when every
//     application is RUNNING it points the head and serve Services at the cluster and promotes it
//     to active (reconcilePromotionAndServingStatus);
//   - the Ready condition (and serviceStatus "Running", its deprecated twin) is True once the serve
//     Service has an endpoint (calculateConditions); a RayService that stays initializing past its
//     ray.io/initializing-timeout annotation is Ready False with reason InitializingTimeout for
//     good: "The user must delete and recreate the RayService to recover" (Reconcile);
//   - each reconcile reads the applications' statuses from the dashboard before it sends a changed
//     config (reconcileServe), and writes them with status.observedGeneration at the RayService's
//     new generation; the statuses of the config sent show from the next reconcile, at most
//     ServiceDefaultRequeueDuration (2 s) later.
//
// Ray's application statuses (ray.serve.schema.ApplicationStatus; KubeRay's ApplicationStatusEnum):
// DEPLOY_FAILED is a deploy that failed, and stays so until another config is sent.

// ServeWant is what a RayService is to reach.
type ServeWant struct {
	// Generation is the RayService's metadata.generation as applied: a status KubeRay wrote for an
	// older one does not count.
	Generation int64
	// Applications are the names of the Serve applications of its config, each to be RUNNING.
	Applications []string
	// Cluster, when set, is the RayCluster that must be serving.
	Cluster string
	// Settle is how long after KubeRay first reports Generation observed its application statuses
	// are taken to be those of the config sent, not of the one before (the reconcile that sends a
	// config writes the statuses it read before): 0 for a new RayService, which had none before.
	Settle time.Duration
}

// ErrServeFailed matches (errors.Is) the failures of a RayService that waiting cannot mend.
var ErrServeFailed = errors.New("the RayService failed")

// serveFailure is such a failure, in its own words.
type serveFailure struct{ msg string }

func (e *serveFailure) Error() string        { return e.msg }
func (e *serveFailure) Is(target error) bool { return target == ErrServeFailed }

// ServeSettle is ServeWant.Settle for a changed Serve config: two of KubeRay's requeues.
const ServeSettle = 4 * time.Second

// ServeProgress judges rs against want, observed is how long its status has shown want.Generation
// observed. done is true once it serves: Ready, the RayCluster it serves from active with no
// other pending, and every application of want RUNNING. failure is a failure that waiting cannot
// mend: the initializing timeout, an application whose deploy failed, or, when want names the
// RayCluster that is to serve, another one coming up, or serving with none coming up (while the one
// named comes up, the one before serves).
func ServeProgress(rs *rayv1.RayService, want ServeWant, observed time.Duration) (done bool, failure error) {
	if rs == nil || rs.Status.ObservedGeneration < want.Generation {
		return false, nil
	}
	ready := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RayServiceReady))
	if ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == string(rayv1.RayServiceInitializingTimeout) {
		return false, &serveFailure{fmt.Sprintf("kube: RayService %s/%s failed: %s (KubeRay gives a RayService that timed out "+
			"initializing up for good: it must be deleted and created again)", rs.Namespace, rs.Name, ready.Message)}
	}
	trusted := observed >= want.Settle
	pending, active := rs.Status.PendingServiceStatus.RayClusterName, rs.Status.ActiveServiceStatus.RayClusterName
	if want.Cluster != "" && trusted && ((pending != "" && pending != want.Cluster) || (pending == "" && active != "" && active != want.Cluster)) {
		other := pending
		if other == "" {
			other = active
		}
		return false, &serveFailure{fmt.Sprintf("kube: RayService %s/%s: KubeRay brings up RayCluster %s in place of %s, which was "+
			"to serve (was the RayService or its RayCluster changed outside Terraform?)", rs.Namespace, rs.Name, other, want.Cluster)}
	}
	for _, s := range []rayv1.RayServiceStatus{rs.Status.PendingServiceStatus, rs.Status.ActiveServiceStatus} {
		if s.RayClusterName == "" || (want.Cluster != "" && s.RayClusterName != want.Cluster) || !trusted {
			continue
		}
		for _, name := range sortedNames(s.Applications) {
			if app := s.Applications[name]; app.Status == rayv1.ApplicationStatusEnum.DEPLOY_FAILED {
				return false, &serveFailure{fmt.Sprintf("kube: RayService %s/%s: Serve application %q failed to deploy on RayCluster %s (%s): %s",
					rs.Namespace, rs.Name, name, s.RayClusterName, app.Status, appMessage(app))}
			}
		}
	}
	if !trusted || ready == nil || ready.Status != metav1.ConditionTrue ||
		active == "" || pending != "" || (want.Cluster != "" && active != want.Cluster) {
		return false, nil
	}
	for _, name := range want.Applications {
		if rs.Status.ActiveServiceStatus.Applications[name].Status != rayv1.ApplicationStatusEnum.RUNNING {
			return false, nil
		}
	}
	return true, nil
}

// DescribeServe says where rs stands, for a wait that ended before it served: its Ready condition,
// its RayClusters and each application's status with its message.
func DescribeServe(rs *rayv1.RayService, want ServeWant) string {
	if rs == nil {
		return "the RayService does not exist"
	}
	var out []string
	if rs.Status.ObservedGeneration < want.Generation {
		out = append(out, fmt.Sprintf("KubeRay has not reconciled generation %d yet (observed %d)", want.Generation, rs.Status.ObservedGeneration))
	}
	if ready := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RayServiceReady)); ready != nil {
		out = append(out, fmt.Sprintf("Ready %s (%s: %s)", ready.Status, ready.Reason, ready.Message))
	} else {
		out = append(out, "no Ready condition yet")
	}
	for _, s := range []struct {
		which  string
		status rayv1.RayServiceStatus
	}{{"pending", rs.Status.PendingServiceStatus}, {"active", rs.Status.ActiveServiceStatus}} {
		if s.status.RayClusterName == "" {
			continue
		}
		apps := make([]string, 0, len(s.status.Applications))
		for _, name := range sortedNames(s.status.Applications) {
			app := s.status.Applications[name]
			apps = append(apps, fmt.Sprintf("%q %s%s", name, app.Status, optional(appMessage(app))))
		}
		for _, name := range want.Applications {
			if _, ok := s.status.Applications[name]; !ok {
				apps = append(apps, fmt.Sprintf("%q not reported yet", name))
			}
		}
		out = append(out, fmt.Sprintf("%s RayCluster %s (%s), applications: %s", s.which, s.status.RayClusterName,
			orUnknown(string(s.status.RayClusterStatus.State)), orNone(apps))) //nolint:staticcheck // State is deprecated for Conditions, still set by KubeRay v1.5
	}
	return strings.Join(out, "; ")
}

// ActiveApplications are the statuses of the applications of the RayCluster rs serves from, by name.
func ActiveApplications(rs *rayv1.RayService) map[string]string {
	out := map[string]string{}
	for name, app := range rs.Status.ActiveServiceStatus.Applications {
		out[name] = app.Status
	}
	return out
}

// appMessage is an application's message, with those of its deployments that have one.
func appMessage(app rayv1.AppStatus) string {
	msgs := []string{}
	if app.Message != "" {
		msgs = append(msgs, app.Message)
	}
	for _, name := range sortedNames(app.Deployments) {
		if d := app.Deployments[name]; d.Message != "" && !strings.Contains(app.Message, d.Message) {
			msgs = append(msgs, fmt.Sprintf("deployment %q %s: %s", name, d.Status, d.Message))
		}
	}
	return strings.Join(msgs, "; ")
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func optional(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + msg + ")"
}

func orUnknown(s string) string {
	if s == "" {
		return "no state yet"
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none yet"
	}
	return strings.Join(s, ", ")
}
