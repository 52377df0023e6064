package kube

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

func testRayServiceSpec() RayServiceSpec {
	shape := map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
	return RayServiceSpec{
		RayClusterSpec: RayClusterSpec{
			Namespace: "default", Name: "serve", RayVersion: "2.55.0", Image: "rayproject/ray:2.55.0-py310-tpu",
			Head: RayHead{CPU: "1", Memory: "2Gi", ServiceType: "ClusterIP", InternalLoadBalancer: true},
			Groups: []RayWorkerGroup{{
				Name: "tpu", Replicas: 2, NumOfHosts: 4, ChipsPerHost: 4, NodeSelector: shape, MegascaleSlices: 2,
				Claim: &SliceClaim{Namespace: "default", Cluster: RayServiceClaimer("serve"), Group: "tpu"},
			}},
			Annotations: map[string]string{"raytpu.dev/config": "{}"},
		},
		ServeConfigV2:        "applications:\n- name: llm\n  import_path: serve_llm:app\n",
		DeletionDelaySeconds: 7,
	}
}

// A RayService's rayClusterConfig is what a RayCluster of the same settings has as its spec: one
// builder for both. Its upgrade strategy keeps KubeRay from bringing up a second RayCluster.
func TestRayServiceObjectHasTheRayClustersSpec(t *testing.T) {
	s := testRayServiceSpec()
	rs, err := RayServiceObject(s)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := RayClusterObject(s.RayClusterSpec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rs.Spec.RayClusterSpec, rc.Spec) {
		t.Errorf("rayClusterConfig differs from the RayCluster's spec:\n%+v\n%+v", rs.Spec.RayClusterSpec, rc.Spec)
	}
	if rs.Kind != RayServiceKind || rs.Name != "serve" || rs.Namespace != "default" || rs.Spec.ServeConfigV2 != s.ServeConfigV2 ||
		!reflect.DeepEqual(rs.Annotations, s.Annotations) {
		t.Errorf("RayService %s %s/%s, annotations %v, serveConfigV2 %q", rs.Kind, rs.Namespace, rs.Name, rs.Annotations, rs.Spec.ServeConfigV2)
	}
	if u := rs.Spec.UpgradeStrategy; u == nil || u.Type == nil || *u.Type != rayv1.None {
		t.Errorf("upgrade strategy %+v, want type None", u)
	}
	if d := rs.Spec.RayClusterDeletionDelaySeconds; d == nil || *d != s.DeletionDelaySeconds {
		t.Errorf("rayClusterDeletionDelaySeconds %v, want %d", d, s.DeletionDelaySeconds)
	}
	s.Upgrade = true
	if upgrading, err := RayServiceObject(s); err != nil || *upgrading.Spec.UpgradeStrategy.Type != rayv1.NewCluster {
		t.Errorf("upgrading: upgrade strategy %+v (%v), want type NewCluster", upgrading.Spec.UpgradeStrategy, err)
	}
	if svc := rs.Spec.ServeService; svc == nil || svc.Annotations[InternalLoadBalancerAnnotation] != "Internal" {
		t.Errorf("serve Service template %+v, want the head's internal load balancer annotation", svc)
	}
	if got := rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.NodeSelector[ClaimClusterLabel]; got != "rayservice.serve" {
		t.Errorf("the group selects claim %q, want rayservice.serve", got)
	}
}

// The claims of a RayService's groups never read as those of a RayCluster of the same name.
func TestRayServiceClaim(t *testing.T) {
	svc := SliceClaim{Namespace: "default", Cluster: RayServiceClaimer("tpu"), Group: "g"}
	rc := SliceClaim{Namespace: "default", Cluster: "tpu", Group: "g"}
	if svc.SameRayCluster(rc) {
		t.Error("the RayService's claim is the RayCluster's")
	}
	if got, want := svc.String(), `worker group "g" of RayService default/tpu`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, ok := ClaimOf(WithClaim(nil, &svc)); !ok || got != svc {
		t.Errorf("ClaimOf(WithClaim(%v)) = %v, %v", svc, got, ok)
	}
}

// The API server takes the rendered RayService as KubeRay's CRD defines it, strictly: no field it
// does not know, none null where it wants an object.
func TestDryRunApplyRayService(t *testing.T) {
	requireKubeRay(t)
	ctx := testwait.Context(t)
	rs, err := RayServiceObject(testRayServiceSpec())
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.client.DryRunApplyRayService(ctx, rs)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServeConfigV2 != rs.Spec.ServeConfigV2 || len(got.Spec.RayClusterSpec.WorkerGroupSpecs) != 1 ||
		got.Spec.RayClusterSpec.HeadGroupSpec.HeadService == nil || got.Spec.ServeService == nil {
		t.Errorf("stored spec %+v", got.Spec)
	}
	if _, err := env.client.GetRayService(ctx, "default", rs.Name); !errors.Is(err, ErrRayServiceNotFound) {
		t.Errorf("after a dry run, GetRayService: %v, want ErrRayServiceNotFound", err)
	}
}

func TestServeProgress(t *testing.T) {
	app := func(status, msg string) rayv1.AppStatus { return rayv1.AppStatus{Status: status, Message: msg} }
	ready := metav1.Condition{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue, Reason: string(rayv1.NonZeroServeEndpoints)}
	serving := func(mod func(*rayv1.RayService)) *rayv1.RayService {
		rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "serve", Generation: 2}}
		rs.Status = rayv1.RayServiceStatuses{
			ObservedGeneration: 2, Conditions: []metav1.Condition{ready},
			ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "serve-abcde", Applications: map[string]rayv1.AppStatus{
				"llm": app("RUNNING", ""), "embed": app("RUNNING", ""),
			}},
		}
		if mod != nil {
			mod(rs)
		}
		return rs
	}
	want := ServeWant{Generation: 2, Applications: []string{"embed", "llm"}, Cluster: "serve-abcde"}
	settling := want
	settling.Settle = ServeSettle
	for _, tc := range []struct {
		name     string
		rs       *rayv1.RayService
		want     ServeWant
		observed time.Duration
		done     bool
		failure  string
	}{
		{name: "serving", rs: serving(nil), want: want, done: true},
		{name: "not yet", rs: nil, want: want},
		{name: "older generation", rs: serving(func(rs *rayv1.RayService) { rs.Status.ObservedGeneration = 1 }), want: want},
		{name: "not ready", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.Conditions[0].Status = metav1.ConditionFalse
		}), want: want},
		{name: "an application deploying", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.ActiveServiceStatus.Applications["llm"] = app("DEPLOYING", "")
		}), want: want},
		{name: "an application not reported", rs: serving(func(rs *rayv1.RayService) {
			delete(rs.Status.ActiveServiceStatus.Applications, "embed")
		}), want: want},
		{name: "another cluster serves", rs: serving(nil), want: ServeWant{Generation: 2, Applications: []string{"llm"}, Cluster: "serve-fghij"},
			failure: "KubeRay brings up RayCluster serve-abcde in place of serve-fghij"},
		{name: "a second cluster comes up", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.PendingServiceStatus.RayClusterName = "serve-fghij"
		}), want: want, failure: "KubeRay brings up RayCluster serve-fghij in place of serve-abcde"},
		{name: "an upgrade to the cluster wanted", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.PendingServiceStatus.RayClusterName = "serve-fghij"
		}), want: ServeWant{Generation: 2, Applications: []string{"llm"}, Cluster: "serve-fghij"}},
		{name: "an upgrade pending", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.PendingServiceStatus.RayClusterName = "serve-fghij"
		}), want: ServeWant{Generation: 2, Applications: []string{"llm"}}},
		{name: "deploy failed", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: "DEPLOY_FAILED", Message: "Failed to import serve_llm",
				Deployments: map[string]rayv1.ServeDeploymentStatus{"LLM": {Status: "UNHEALTHY", Message: "ModuleNotFoundError: No module named 'vllm'"}}}
		}), want: want, failure: `Serve application "llm" failed to deploy on RayCluster serve-abcde (DEPLOY_FAILED): Failed to import serve_llm; deployment "LLM" UNHEALTHY: ModuleNotFoundError`},
		{name: "deploy failed while the cluster is pending", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.PendingServiceStatus = rs.Status.ActiveServiceStatus
			rs.Status.ActiveServiceStatus = rayv1.RayServiceStatus{}
			rs.Status.PendingServiceStatus.Applications["llm"] = app("DEPLOY_FAILED", "boom")
		}), want: want, failure: `"llm" failed to deploy on RayCluster serve-abcde (DEPLOY_FAILED): boom`},
		{name: "a failure of the config before is not yet trusted", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.ActiveServiceStatus.Applications["llm"] = app("DEPLOY_FAILED", "old")
		}), want: settling, observed: time.Second},
		{name: "statuses of the config before are not yet trusted", rs: serving(nil), want: settling, observed: time.Second},
		{name: "statuses trusted after the settle", rs: serving(nil), want: settling, observed: ServeSettle, done: true},
		{name: "initializing timeout", rs: serving(func(rs *rayv1.RayService) {
			rs.Status.Conditions[0] = metav1.Condition{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionFalse,
				Reason: string(rayv1.RayServiceInitializingTimeout), Message: "RayService failed to become ready within the configured timeout of 5m0s"}
		}), want: want, failure: "failed: RayService failed to become ready within the configured timeout of 5m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, failure := ServeProgress(tc.rs, tc.want, tc.observed)
			if done != tc.done {
				t.Errorf("done = %v, want %v", done, tc.done)
			}
			switch {
			case tc.failure == "" && failure != nil:
				t.Errorf("failure %v, want none", failure)
			case tc.failure != "" && (!errors.Is(failure, ErrServeFailed) || !strings.Contains(failure.Error(), tc.failure)):
				t.Errorf("failure %v, want an ErrServeFailed containing %q", failure, tc.failure)
			}
		})
	}
}

// A wait that ends says where each RayCluster and application stands.
func TestDescribeServe(t *testing.T) {
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	rs.Status.ObservedGeneration = 3
	rs.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionFalse,
		Reason: string(rayv1.RayServiceInitializing), Message: "RayService is initializing"}}
	rs.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "serve-abcde",
		Applications: map[string]rayv1.AppStatus{"llm": {Status: "DEPLOYING", Message: "Deployment 'LLM' in application 'llm': no TPU"}}}
	got := DescribeServe(rs, ServeWant{Generation: 3, Applications: []string{"llm", "embed"}})
	for _, want := range []string{
		"Ready False (Initializing: RayService is initializing)",
		`pending RayCluster serve-abcde (no state yet), applications: "llm" DEPLOYING (Deployment 'LLM' in application 'llm': no TPU), "embed" not reported yet`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("DescribeServe = %q, want it to contain %q", got, want)
		}
	}
}

// The claims of a RayService's generations are its own, apart from each other and from a
// RayCluster's.
func TestRayServiceGenerationClaims(t *testing.T) {
	first := SliceClaim{Namespace: "default", Cluster: RayServiceClaimer("llm"), Group: "g"}
	second := SliceClaim{Namespace: "default", Cluster: RayServiceGenerationClaimer("llm", 2), Group: "g"}
	if first == second || first.Labels()[ClaimClusterLabel] == second.Labels()[ClaimClusterLabel] {
		t.Errorf("generations 0 and 2 claim alike: %v, %v", first.Labels(), second.Labels())
	}
	if !first.SameRayCluster(second) || second.String() != `worker group "g" of RayService default/llm` {
		t.Errorf("generation 2 is not the RayService's: same %v, %q", first.SameRayCluster(second), second.String())
	}
	if other := (SliceClaim{Namespace: "default", Cluster: RayServiceGenerationClaimer("llm2", 1)}); other.SameRayCluster(first) {
		t.Error("RayService llm2's claim is llm's")
	}
	for claimer, want := range map[string]int{RayServiceClaimer("llm"): 0, RayServiceGenerationClaimer("llm", 1): 1, RayServiceGenerationClaimer("llm", 12): 12} {
		if gen, ok := RayServiceGeneration(claimer, "llm"); !ok || gen != want {
			t.Errorf("RayServiceGeneration(%q) = %d, %v; want %d", claimer, gen, ok, want)
		}
	}
	for _, claimer := range []string{"llm", RayServiceClaimer("llm2"), RayServiceClaimer("llm") + ".x", RayServiceClaimer("llm") + ".0"} {
		if _, ok := RayServiceGeneration(claimer, "llm"); ok {
			t.Errorf("RayServiceGeneration(%q) is a generation of llm", claimer)
		}
	}
}
