package rules

import (
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
)

func TestValidateClusterAutoscaling(t *testing.T) {
	cpu, mem := rulestest.Limit("cpu", 1, 100), rulestest.Limit("memory", 1, 1000)
	for _, tc := range []struct {
		a    *containerpb.ClusterAutoscaling
		want string
	}{
		{nil, ""},
		{rulestest.Autoscaling(false), ""},
		{rulestest.Autoscaling(true, cpu, mem), ""},
		{rulestest.Autoscaling(true, cpu, mem, rulestest.Limit("tpu-v6e-slice", 0, 64), rulestest.Limit("tpu7x", 0, 16), rulestest.Limit("nvidia-l4", 0, 8)), ""},
		{rulestest.Autoscaling(false, cpu), "Resource limits are supported only with node autoprovisioning."},
		{rulestest.Autoscaling(true), "Resource limits for cpu, memory must be specified when enabling node autoprovisioning."},
		{rulestest.Autoscaling(true, cpu, rulestest.Limit("tpu-v6e-slice", 0, 8)), "Resource limits for memory must be specified when enabling node autoprovisioning."},
		{rulestest.Autoscaling(true, cpu, mem, rulestest.Limit("accelerator", 0, 4)), "Invalid resource: accelerator."},
		{rulestest.Autoscaling(true, cpu, mem, rulestest.Limit("v6e", 0, 4)), "Invalid resource: v6e."},
		{rulestest.Autoscaling(true, cpu, mem, rulestest.Limit("tpu-v6e-slice", 0, 0)), "Resource_limit.maximum must be greater than 0."},
		{rulestest.Autoscaling(true, cpu, mem, rulestest.Limit("tpu-v6e-slice", 9, 8)), "minimum 9 must be between 0 and maximum 8"},
		{rulestest.Autoscaling(true, cpu, mem, cpu), "given more than once"},
	} {
		err := ValidateClusterAutoscaling(tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: refused: %s", tc.a, err.Message)
		case tc.want != "" && (err == nil || !strings.Contains(err.Message, tc.want)):
			t.Errorf("%v: want %q, got %v", tc.a, tc.want, err)
		}
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
		s, why := NAPShapeFor(tc.accelerator, tc.topology, tc.chips)
		if tc.refused != "" {
			if !strings.Contains(why, tc.refused) {
				t.Errorf("%s %s %d chips: want refusal %q, got %q", tc.accelerator, tc.topology, tc.chips, tc.refused, why)
			}
			continue
		}
		if why != "" || s.Machine.Name != tc.machine || s.Slice.Hosts != tc.hosts {
			t.Errorf("%s %s %d chips: got %v %d hosts (%s), want %s %d hosts", tc.accelerator, tc.topology, tc.chips, s.Machine, s.Slice.Hosts, why, tc.machine, tc.hosts)
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
	if !regexp.MustCompile(`^nap-ct6e-standa-4t-[a-z0-9]{8}$`).MatchString(name) || ValidateName("name", name) != nil {
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
		if _, ok := NAPMinVersion(tc.gen, tc.version); ok != tc.ok {
			t.Errorf("NAP of %s on %s: %v, want %v", tc.gen, tc.version, ok, tc.ok)
		}
	}
}

// The cluster autoscaler's check of a new node group against the limits: every resource a limit
// would be passed for, sorted, and a resource without a limit counts as passed.
func TestNAPExceeded(t *testing.T) {
	host := NAPUsage("ct6e-standard-4t", "tpu-v6e-slice", 4, 2)
	if host["cpu"] != 360 || host["memory"] != 2*720*1024 || host["tpu-v6e-slice"] != 8 {
		t.Fatalf("two ct6e-standard-4t hosts count %v", host)
	}
	used := NAPUsage("e2-standard-4", "", 0, 1)
	for _, tc := range []struct {
		limits map[string]int64
		want   string
	}{
		{map[string]int64{"cpu": 1000, "memory": 4000, "tpu-v6e-slice": 8}, ""},
		{map[string]int64{"cpu": 64, "memory": 256, "tpu-v6e-slice": 48}, "cpu,memory"},
		{map[string]int64{"cpu": 1000, "memory": 256, "tpu-v6e-slice": 48}, "memory"},
		{map[string]int64{"cpu": 1000, "memory": 4000}, "tpu-v6e-slice"},
	} {
		if got := strings.Join(NAPExceeded(tc.limits, used, host), ","); got != tc.want {
			t.Errorf("limits %v: exceeded %q, want %q", tc.limits, got, tc.want)
		}
	}
}
