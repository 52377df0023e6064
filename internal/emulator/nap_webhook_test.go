package emulator

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

func limits(enabled bool, ls ...*containerpb.ResourceLimit) *containerpb.ClusterAutoscaling {
	return &containerpb.ClusterAutoscaling{EnableNodeAutoprovisioning: enabled, ResourceLimits: ls}
}

func limit(typ string, minimum, maximum int64) *containerpb.ResourceLimit {
	return &containerpb.ResourceLimit{ResourceType: typ, Minimum: minimum, Maximum: maximum}
}

func TestValidateClusterAutoscaling(t *testing.T) {
	cpu, mem := limit("cpu", 1, 100), limit("memory", 1, 1000)
	for _, tc := range []struct {
		a    *containerpb.ClusterAutoscaling
		want string
	}{
		{nil, ""},
		{limits(false), ""},
		{limits(true, cpu, mem), ""},
		{limits(true, cpu, mem, limit("tpu-v6e-slice", 0, 64), limit("tpu7x", 0, 16), limit("nvidia-l4", 0, 8)), ""},
		{limits(false, cpu), "Resource limits are supported only with node autoprovisioning."},
		{limits(true), "Resource limits for cpu, memory must be specified when enabling node autoprovisioning."},
		{limits(true, cpu, limit("tpu-v6e-slice", 0, 8)), "Resource limits for memory must be specified when enabling node autoprovisioning."},
		{limits(true, cpu, mem, limit("accelerator", 0, 4)), "Invalid resource: accelerator."},
		{limits(true, cpu, mem, limit("v6e", 0, 4)), "Invalid resource: v6e."},
		{limits(true, cpu, mem, limit("tpu-v6e-slice", 0, 0)), "Resource_limit.maximum must be greater than 0."},
		{limits(true, cpu, mem, limit("tpu-v6e-slice", 9, 8)), "minimum 9 must be between 0 and maximum 8"},
		{limits(true, cpu, mem, cpu), "given more than once"},
	} {
		err := validateClusterAutoscaling(tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: refused: %s", tc.a, err.Message)
		case tc.want != "" && (err == nil || !strings.Contains(err.Message, tc.want)):
			t.Errorf("%v: want %q, got %v", tc.a, tc.want, err)
		}
	}
}

// The cluster API takes and reports the NAP settings, and refuses wrong ones in a create and in
// an update, before any operation starts.
func TestClusterAutoscalingThroughTheAPI(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "nap-bad", InitialNodeCount: 1, Autoscaling: limits(true, limit("tpu-v6e-slice", 0, 8)), //nolint:staticcheck // deprecated in the API, still sent by clients
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource limits for cpu, memory must be specified when enabling node autoprovisioning.")
	_, err = c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{
		DesiredClusterAutoscaling: limits(false, limit("cpu", 0, 8)),
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Resource limits are supported only with node autoprovisioning.")

	want := limits(true, limit("cpu", 1, 1000), limit("memory", 1, 4000), limit("tpu-v5-lite-podslice", 0, 32))
	want.AutoprovisioningLocations = []string{testZone}
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: cluster, Update: &containerpb.ClusterUpdate{DesiredClusterAutoscaling: want}}))
	t.Cleanup(func() {
		mustSucceed(t, c)(c.UpdateCluster(context.Background(), &containerpb.UpdateClusterRequest{Name: cluster,
			Update: &containerpb.ClusterUpdate{DesiredClusterAutoscaling: &containerpb.ClusterAutoscaling{}}}))
	})
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	got := cl.GetAutoscaling()
	if !got.GetEnableNodeAutoprovisioning() || len(got.ResourceLimits) != 3 || got.ResourceLimits[2].ResourceType != "tpu-v5-lite-podslice" ||
		got.ResourceLimits[2].Maximum != 32 || len(got.AutoprovisioningLocations) != 1 {
		t.Fatalf("cluster autoscaling reported as %v", got)
	}
}

func TestNAPShapes(t *testing.T) {
	for _, tc := range []struct {
		accelerator, topology string
		chips                 int
		machine               string
		hosts                 int
		refused               string
	}{
		// v6e 2x4 is two 4-chip VMs or one 8-chip VM: the Pod's request decides (tpu-provisioner).
		{"tpu-v6e-slice", "2x4", 4, "ct6e-standard-4t", 2, ""},
		{"tpu-v6e-slice", "2x4", 8, "ct6e-standard-8t", 1, ""},
		{"tpu-v6e-slice", "4x4", 4, "ct6e-standard-4t", 4, ""},
		{"tpu-v6e-slice", "2x2", 4, "ct6e-standard-4t", 1, ""},
		{"tpu-v5-lite-podslice", "16x16", 4, "ct5lp-hightpu-4t", 64, ""},
		{"tpu-v5p-slice", "2x2x2", 4, "ct5p-hightpu-4t", 2, ""},
		{"tpu-v4-podslice", "2x2x1", 4, "ct4p-hightpu-4t", 1, ""},
		{"tpu7x", "2x2x1", 4, "tpu7x-standard-4t", 1, ""},
		{"tpu7x", "2x2x2", 4, "", 0, "needs a workload policy"},
		{"tpu-v6e-slice", "3x3", 4, "", 0, "cannot form a 3x3 slice"},
		{"tpu-v6e-slice", "2x4", 2, "", 0, "no tpu-v6e-slice machine type has 2 TPU chips per VM"},
		{"tpu-v9-slice", "2x2", 4, "", 0, "no TPU accelerator"},
	} {
		s, why := napShapeFor(tc.accelerator, tc.topology, tc.chips)
		if tc.refused != "" {
			if !strings.Contains(why, tc.refused) {
				t.Errorf("%s %s %d chips: want refusal %q, got %q", tc.accelerator, tc.topology, tc.chips, tc.refused, why)
			}
			continue
		}
		if why != "" || s.machine.Name != tc.machine || s.slice.Hosts != tc.hosts {
			t.Errorf("%s %s %d chips: got %v %d hosts (%s), want %s %d hosts", tc.accelerator, tc.topology, tc.chips, s.machine, s.slice.Hosts, why, tc.machine, tc.hosts)
		}
	}
}

func TestNAPPoolNamesAndVersions(t *testing.T) {
	for mt, want := range map[string]string{
		"ct6e-standard-4t":  "ct6e-standa-4t",
		"ct5lp-hightpu-4t":  "ct5lp-hight-4t",
		"ct4p-hightpu-4t":   "ct4p-hightp-4t",
		"tpu7x-standard-1t": "tpu7x-stand-1t",
		"e2-standard-4":     "e2-standard-4",
	} {
		if got := cropMachineType(mt); got != want {
			t.Errorf("cropMachineType(%s) = %s, want %s", mt, got, want)
		}
	}
	name := napPoolName("ct6e-standard-4t")
	if !regexp.MustCompile(`^nap-ct6e-standa-4t-[a-z0-9]{8}$`).MatchString(name) || rules.ValidateName("name", name) != nil {
		t.Errorf("pool name %q", name)
	}
	for _, tc := range []struct {
		gen, version string
		ok           bool
	}{
		{"v6e", "1.31.1-gke.1146000", true},
		{"v6e", "1.31.1-gke.1145999", false},
		{"v5e", "1.27.6-gke.1", true},
		{"v5e", "1.27.5-gke.900", false},
		{"v5p", "1.28.7-gke.1020000", true},
		{"v5p", "1.28.6-gke.9", false},
		{"v5p", "1.29.1-gke.5", false},
		{"v5p", "1.29.2-gke.1035000", true},
		{"tpu7x", "1.34.0-gke.2201000", true},
	} {
		if _, ok := napMinVersion(tc.gen, tc.version); ok != tc.ok {
			t.Errorf("NAP of %s on %s: %v, want %v", tc.gen, tc.version, ok, tc.ok)
		}
	}
}

func TestNAPSkipsPodsPinnedToNodePools(t *testing.T) {
	inPools := func(keys ...string) *corev1.Affinity {
		var terms []corev1.NodeSelectorTerm
		for _, k := range keys {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{"slice-a"}}}})
		}
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	for _, tc := range []struct {
		name     string
		selector map[string]string
		affinity *corev1.Affinity
		want     bool
	}{
		{"shape only", map[string]string{"cloud.google.com/gke-tpu-topology": "2x4"}, nil, false},
		{"node pool selector", map[string]string{"cloud.google.com/gke-nodepool": "slice-a"}, nil, true},
		{"node pool affinity", nil, inPools("cloud.google.com/gke-nodepool"), true},
		{"one term free of pools", nil, inPools("cloud.google.com/gke-nodepool", "topology.kubernetes.io/zone"), false},
		{"affinity on another label", nil, inPools("topology.kubernetes.io/zone"), false},
	} {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: tc.selector, Affinity: tc.affinity}}
		if got := pinnedToNodePools(p); got != tc.want {
			t.Errorf("%s: pinnedToNodePools = %v, want %v", tc.name, got, tc.want)
		}
	}
}
