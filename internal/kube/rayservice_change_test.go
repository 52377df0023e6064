package kube

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// The classification without the operator: replicas and the slices a claim selects are muted,
// groups appended at the end are an in-place update, anything else a new RayCluster.
func TestClassifyConfig(t *testing.T) {
	render := func(mod func(*RayServiceSpec)) rayv1.RayClusterSpec {
		s := testRayServiceSpec()
		mod(&s)
		rs, err := RayServiceObject(s)
		if err != nil {
			t.Fatal(err)
		}
		return rs.Spec.RayClusterSpec
	}
	running := render(func(*RayServiceSpec) {})
	appended := func(s *RayServiceSpec) {
		g := s.Groups[0]
		g.Name = "more"
		s.Groups = append(s.Groups, g)
	}
	for name, tc := range map[string]struct {
		mod  func(*RayServiceSpec)
		want ConfigChange
	}{
		"unchanged":          {func(*RayServiceSpec) {}, ConfigSame},
		"replicas":           {func(s *RayServiceSpec) { s.Groups[0].Replicas = 3 }, ConfigSame},
		"workers to delete":  {func(s *RayServiceSpec) { s.Groups[0].WorkersToDelete = []string{"tpu-abc"} }, ConfigSame},
		"serve config":       {func(s *RayServiceSpec) { s.ServeConfigV2 = "applications: []\n" }, ConfigSame},
		"group appended":     {appended, ConfigAppended},
		"group removed":      {func(s *RayServiceSpec) { s.Groups = nil }, ConfigNewCluster},
		"head cpu":           {func(s *RayServiceSpec) { s.Head.CPU = "2" }, ConfigNewCluster},
		"head service type":  {func(s *RayServiceSpec) { s.Head.ServiceType = "LoadBalancer" }, ConfigNewCluster},
		"claim":              {func(s *RayServiceSpec) { s.Groups[0].Claim.Cluster += ".1" }, ConfigNewCluster},
		"megascale":          {func(s *RayServiceSpec) { s.Groups[0].MegascaleSlices = 3 }, ConfigNewCluster},
		"appended, head cpu": {func(s *RayServiceSpec) { appended(s); s.Head.CPU = "2" }, ConfigNewCluster},
	} {
		got, err := ClassifyConfig(running, render(tc.mod))
		if err != nil || got != tc.want {
			t.Errorf("%s: %v (%v), want %v", name, got, err, tc.want)
		}
	}
}

// The classification holds against KubeRay's operator: the hash it writes on the RayCluster it makes
// is RayClusterConfigHash of the RayService as stored; a change of replicas alone leaves the
// RayCluster as it was, replicas included; an appended group updates it in place; a change of the
// head brings up another RayCluster.
func TestClassifyConfigAsKubeRayMeetsIt(t *testing.T) {
	requireKubeRay(t)
	ctx := testwait.Context(t)
	s := testRayServiceSpec()
	s.Name, s.Upgrade = "classify", true
	s.Groups[0].Claim = nil
	apply := func(s RayServiceSpec) *rayv1.RayService {
		t.Helper()
		obj, err := RayServiceObject(s)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := env.client.ApplyRayService(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		return stored
	}
	t.Cleanup(func() {
		ctx, cancel := testwait.MainContext()
		defer cancel()
		_ = env.client.DeleteRayService(ctx, s.Namespace, s.Name)
	})
	// observed is the RayCluster of the newest configuration (pending, or active once it serves)
	// once KubeRay reconciled generation gen of the RayService and ok holds.
	observed := func(gen int64, ok func(*rayv1.RayCluster) bool) *rayv1.RayCluster {
		t.Helper()
		var rc *rayv1.RayCluster
		testwait.For(t, "KubeRay reconciling RayService generation", func() bool {
			rs, err := env.client.GetRayService(ctx, s.Namespace, s.Name)
			if err != nil || rs.Status.ObservedGeneration < gen {
				return false
			}
			name := rs.Status.PendingServiceStatus.RayClusterName
			if name == "" {
				name = rs.Status.ActiveServiceStatus.RayClusterName
			}
			if rc, err = env.client.GetRayCluster(ctx, s.Namespace, name); err != nil {
				return false
			}
			return ok(rc)
		})
		return rc
	}
	anyCluster := func(*rayv1.RayCluster) bool { return true }

	stored := apply(s)
	first := observed(stored.Generation, anyCluster)
	hash, err := RayClusterConfigHash(stored.Spec.RayClusterSpec)
	if err != nil || first.Annotations[clusterHashAnnotation] != hash {
		t.Fatalf("KubeRay's hash %q, RayClusterConfigHash %q (%v)", first.Annotations[clusterHashAnnotation], hash, err)
	}

	s.Groups[0].Replicas = 3
	stored = apply(s)
	if c, err := ClassifyAgainstCluster(first, stored.Spec.RayClusterSpec); err != nil || c != ConfigSame {
		t.Fatalf("replicas: %v (%v), want %v", c, err, ConfigSame)
	}
	rc := observed(stored.Generation, anyCluster)
	if rc.Name != first.Name || *rc.Spec.WorkerGroupSpecs[0].Replicas != 2 {
		t.Errorf("replicas changed alone: RayCluster %s with %d replicas, want %s left at 2", rc.Name, *rc.Spec.WorkerGroupSpecs[0].Replicas, first.Name)
	}

	more := s.Groups[0]
	more.Name = "more"
	s.Groups = append(s.Groups, more)
	stored = apply(s)
	if c, err := ClassifyAgainstCluster(rc, stored.Spec.RayClusterSpec); err != nil || c != ConfigAppended {
		t.Fatalf("appended group: %v (%v), want %v", c, err, ConfigAppended)
	}
	rc = observed(stored.Generation, func(rc *rayv1.RayCluster) bool { return len(rc.Spec.WorkerGroupSpecs) == 2 })
	if rc.Name != first.Name {
		t.Errorf("appended group: RayCluster %s, want %s updated in place", rc.Name, first.Name)
	}

	s.Head.CPU = "2"
	stored = apply(s)
	if c, err := ClassifyAgainstCluster(rc, stored.Spec.RayClusterSpec); err != nil || c != ConfigNewCluster {
		t.Fatalf("head cpu: %v (%v), want %v", c, err, ConfigNewCluster)
	}
	observed(stored.Generation, func(rc *rayv1.RayCluster) bool { return rc.Name != first.Name })
}
