package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// The change matrix: every attribute a resource's page lists as applied in place (providerdoc
// writes the list from the schema's plan modifiers and the resource's ModifyPlan replacements, and
// `make docs-check` keeps it current) is changed alone from a running state and back, each by its
// own step: the plan is an update of that resource alone, the apply converges, and the refresh
// after it (which reads GKE and the cluster) plans nothing.

// inPlaceChange is one attribute, changed: the HCL that sets it to another value than the matrix's
// base configuration has, and back: the HCL that sets it back, where leaving it unset again would
// keep the changed value (an optional attribute that GKE's answer fills when unset).
type inPlaceChange struct {
	attribute, changed, back string
}

// changeMatrices are the resources' matrices, by page name.
var changeMatrices = map[string][]inPlaceChange{
	"cluster": {
		{"auto_provisioning", "auto_provisioning = {\n    max_cpu       = 64\n    max_memory_gb = 256\n    tpu_limits    = [{ generation = \"v6e\", max_chips = 64 }]\n  }", ""},
		{"deletion_protection", "deletion_protection = true", ""},
		{"maintenance_policy", "maintenance_policy = {\n    " + weekendWindow + "\n  }", ""},
		{"min_master_version", `min_master_version = "1.34"`, ""},
		{"ray_operator", "ray_operator = { logging = true, monitoring = true }", ""},
		{"release_channel", `release_channel = "RAPID"`, ""},
		{"resource_labels", `resource_labels = { cost = "research" }`, ""},
		{"system_pool", `system_pool = { machine_type = "e2-standard-8", node_count = 2 }`, ""},
		{"timeouts", `timeouts = { update = "45m" }`, ""},
		{"wait_for_kuberay", "wait_for_kuberay = false", ""},
		{"workload_identity", "workload_identity = false", ""},
		// GKE enables the slice controller only in the Rapid channel from 1.35.2-gke.1842000: its
		// step brings both, and back turns the add-on alone off. Last, for the control plane
		// stays at 1.36, which the base's REGULAR channel does not offer.
		{"slice_controller", "release_channel = \"RAPID\"\n  min_master_version = \"1.36\"\n  slice_controller = true", "release_channel = \"RAPID\"\n  min_master_version = \"1.36\""},
	},
	"compute_class": {
		{"node_pool_auto_creation", "node_pool_auto_creation = false", ""},
		{"priorities", "priorities = [\n    { generation = \"v6e\", topology = \"2x4\", chips_per_host = 4, capacity = \"spot\" },\n  ]", ""},
		{"when_unsatisfiable", `when_unsatisfiable = "ScaleUpAnyway"`, ""},
	},
	"slice": {
		{"auto_repair", "auto_repair = false", "auto_repair = true"},
		{"auto_upgrade", "auto_upgrade = false", "auto_upgrade = true"},
		{"autoscaling", "autoscaling = true", "autoscaling = false"},
		{"disk_size_gb", "disk_size_gb = 120", "disk_size_gb = 100"},
		{"disk_type", `disk_type = "pd-ssd"`, `disk_type = "pd-balanced"`},
		{"host_wait_timeout", `host_wait_timeout = "15m"`, ""},
		{"labels", `labels = { team = "ml" }`, ""},
		{"node_version", `node_version = "latest"`, ""},
		{"python_version", `python_version = "3.11"`, ""},
		{"ray_version", `ray_version = "2.55.1"`, ""},
		{"replace_unhealthy", "replace_unhealthy = true", ""},
		{"resource_labels", `resource_labels = { cost = "research" }`, ""},
		{"timeouts", `timeouts = { update = "45m" }`, ""},
		{"wait_for_hosts", "wait_for_hosts = false", ""},
	},
	// On RayCluster tpu of TestAccRayCluster_changeMatrix: group tpu on the two-host slice a, group
	// one on the single-host slice one; b (two hosts) and two (one host) are free.
	"ray_cluster": {
		{"head", `head = { service_type = "NodePort" }`, ""},
		{"history_server", historyServerHCL, ""},
		// Unset again, image is the default of ray_version and python_version again.
		{"image", `image = "us-docker.pkg.dev/raytpu-acc/ray/ray:2.55.0-tpu"`, ""},
		{"python_version", `python_version = "3.11"`, ""},
		{"ray_version", `ray_version = "2.55.1"`, ""},
		{"timeouts", `timeouts = { update = "45m" }`, ""},
		// The multi-host group's slice moved to another of its shape.
		{"worker_groups", workerGroups(sliceGroup("tpu", "b", ""), sliceGroup("one", "one", "")), ""},
		// The multi-host group grown by a slice (MEGASCALE_NUM_SLICES changes), and shrunk back.
		{"worker_groups", workerGroups(sliceGroup("tpu", "a, b", ""), sliceGroup("one", "one", "")), ""},
		// The single-host group grown by a slice, and shrunk back.
		{"worker_groups", workerGroups(sliceGroup("tpu", "a", ""), sliceGroup("one", "one, two", "")), ""},
		// A spare slice added, and removed.
		{"worker_groups", workerGroups(sliceGroup("tpu", "a", "b"), sliceGroup("one", "one", "")), ""},
		// A group appended, and removed.
		{"worker_groups", workerGroups(sliceGroup("tpu", "a", ""), sliceGroup("one", "one", ""), sliceGroup("extra", "two", "")), ""},
	},
	"ray_history_server": {
		{"bucket", `bucket = "runs-b"`, ""},
		{"cpu", `cpu = "250m"`, ""},
		{"google_service_account", `google_service_account = "ray-history-b@` + testProject + `.iam.gserviceaccount.com"`, ""},
		{"image", `image = "quay.io/kuberay/historyserver:v1.6.0"`, ""},
		{"memory", `memory = "1Gi"`, ""},
		{"memory_limit", `memory_limit = "16Gi"`, ""},
		{"timeouts", `timeouts = { update = "45m" }`, ""},
	},
	"ray_operator": {
		{"disable_on_destroy", "disable_on_destroy = false", ""},
		{"logging", "logging = true", ""},
		{"monitoring", "monitoring = true", ""},
		{"timeouts", `timeouts = { update = "45m" }`, ""},
		{"wait_for_kuberay", "wait_for_kuberay = false", ""},
	},
	// Each on the RayCluster that serves: ray_cluster_name stays. The changes of the worker groups,
	// head and history server, which KubeRay may meet with a second RayCluster, are
	// rayServiceChanges.
	"ray_service": {
		{"old_cluster_deletion_delay", "old_cluster_deletion_delay = 6", ""},
		{"serve_config_v2", fmt.Sprintf("serve_config_v2 = %q", testServeConfig("llm", "embed")), ""},
		{"timeouts", `timeouts = { update = "45m" }`, ""},
		{"upgrade_strategy", `upgrade_strategy = "Recreate"`, ""},
	},
}

// historyServerHCL is a history_server attribute archiving to bucket ray-runs as historyWriter.
const historyServerHCL = `history_server = { bucket = "ray-runs", google_service_account = "` + historyWriter + `" }`

// serviceChange is a change of a RayService's worker groups, head or history server, a row of the
// table "Changes: who applies each" of docs/resources/ray_service.md: the HCL that makes it from
// the matrix's base configuration and the HCL that takes it back ("" for the base), and whether
// each brings up a second RayCluster (on free slices: an update whose ray_cluster_name is unknown
// until applied) rather than changing the one that serves (ray_cluster_name stays).
type serviceChange struct {
	change, changed, back      string
	newCluster, backNewCluster bool
}

// rayServiceChanges run after the RayService's changeMatrices, on RayService llm of
// TestAccRayService_changeMatrix: group tpu on the two-host slice a, group one on the single-host
// slice one; b and c (two hosts) and two (one host) are free. A second RayCluster comes up on free
// slices only, so a change that needs one moves every group to others, and its way back to a and
// one is a second RayCluster again.
var rayServiceChanges = []serviceChange{
	{"a multi-host group's slices moved to others of the same number and shape",
		workerGroups(sliceGroup("tpu", "b", ""), sliceGroup("one", "one", "")), "", false, false},
	{"a single-host group's slices grown, and shrunk back",
		workerGroups(sliceGroup("tpu", "a", ""), sliceGroup("one", "one, two", "")), "", false, false},
	{"spare_slices added, and removed",
		workerGroups(sliceGroup("tpu", "a", "b"), sliceGroup("one", "one", "")), "", false, false},
	{"a multi-host group's slices grown (MEGASCALE_NUM_SLICES changes), and shrunk back",
		workerGroups(sliceGroup("tpu", "b, c", ""), sliceGroup("one", "two", "")), "", true, true},
	{"head.service_type",
		serviceLoadBalancerHead + "\n  " + workerGroups(sliceGroup("tpu", "b", ""), sliceGroup("one", "two", "")), "", true, true},
	{"history_server added, and removed",
		historyServerHCL + "\n  " + workerGroups(sliceGroup("tpu", "b", ""), sliceGroup("one", "two", "")), "", true, true},
	// Last: the group's removal needs the other groups on free slices, and leaves them there.
	{"a group appended, and removed",
		workerGroups(sliceGroup("tpu", "a", ""), sliceGroup("one", "one", ""), sliceGroup("extra", "b", "")),
		workerGroups(sliceGroup("tpu", "c", ""), sliceGroup("one", "two", "")), false, true},
}

// serviceHead is the head of the RayService matrix's base: a NodePort Service, as KubeRay v1.5
// cannot move a RayService's head Service off ClusterIP: it makes a ClusterIP head Service
// headless (common/service.go, BuildServiceForHeadPod), and on an upgrade gives the Service of the
// new type the old one's clusterIP, None, which the API server refuses for any other type
// (rayservice_controller.go, reconcileServices). serviceLoadBalancerHead is its service_type
// changed.
const (
	serviceHead             = `head = { ray_start_params = { "dashboard-host" = "0.0.0.0" }, service_type = "NodePort" }`
	serviceLoadBalancerHead = `head = { ray_start_params = { "dashboard-host" = "0.0.0.0" }, service_type = "LoadBalancer", load_balancer_source_ranges = ["203.0.113.0/24"] }`
)

// workerGroups is a worker_groups attribute of the groups.
func workerGroups(groups ...string) string {
	return "worker_groups = [\n    " + strings.Join(groups, ",\n    ") + ",\n  ]"
}

// sliceGroup is a worker group on the slices of keys (v6eSlice's, "a, b") and the spares of
// spares ("" for none).
func sliceGroup(name, keys, spares string) string {
	group := fmt.Sprintf("{ name = %q, slices = [%s]", name, sliceIDs(keys))
	if spares != "" {
		group += fmt.Sprintf(", spare_slices = [%s]", sliceIDs(spares))
	}
	return group + " }"
}

// sliceIDs are the ids of the slices of keys ("a, b").
func sliceIDs(keys string) string {
	var ids []string
	for _, key := range strings.Split(keys, ", ") {
		ids = append(ids, "raytpu_slice."+key+".id")
	}
	return strings.Join(ids, ", ")
}

var inPlaceLine = regexp.MustCompile(`(?m)^A change of these attributes is applied in place: (.*)\.$`)

// inPlaceAttributes are the attributes docs/resources/<page>.md lists as applied in place.
func inPlaceAttributes(t *testing.T, page string) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "resources", page+".md"))
	if err != nil {
		t.Fatal(err)
	}
	m := inPlaceLine.FindSubmatch(text)
	if m == nil {
		return nil
	}
	var out []string
	for _, a := range strings.Split(string(m[1]), ", ") {
		out = append(out, strings.Trim(a, "`"))
	}
	return out
}

// Every in-place attribute of every resource has its step: a new one without it fails here.
func TestChangeMatrixCoversEveryInPlaceAttribute(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "resources", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range pages {
		page := strings.TrimSuffix(filepath.Base(file), ".md")
		want := inPlaceAttributes(t, page)
		matrix, ok := changeMatrices[page]
		if !ok {
			if len(want) > 0 {
				t.Errorf("raytpu_%s changes %v in place, and has no change matrix", page, want)
			}
			continue
		}
		var have []string
		for _, c := range matrix {
			have = append(have, c.attribute)
		}
		for _, a := range want {
			if !slices.Contains(have, a) {
				t.Errorf("raytpu_%s: in-place attribute %s has no step in the change matrix", page, a)
			}
		}
		for _, a := range have {
			if !slices.Contains(want, a) {
				t.Errorf("raytpu_%s: the change matrix changes %s, which its page does not list as applied in place", page, a)
			}
		}
	}
}

// changeMatrixSteps change each attribute of matrix alone in config (which takes the attribute's
// HCL, empty for the base) and back, on address.
func changeMatrixSteps(address string, matrix []inPlaceChange, config func(attribute string) string) []resource.TestStep {
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate)}}
	steps := []resource.TestStep{{Config: config("")}}
	for _, c := range matrix {
		steps = append(steps,
			resource.TestStep{Config: config(c.changed), ConfigPlanChecks: update},
			resource.TestStep{Config: config(c.back), ConfigPlanChecks: update},
		)
	}
	return steps
}

func TestAccCluster_changeMatrix(t *testing.T) {
	t.Parallel()
	const name = "acc-matrix"
	config := func(attribute string) string {
		if !strings.HasPrefix(attribute, "deletion_protection") {
			attribute = "deletion_protection = false\n  " + attribute
		}
		return testAccProviderConfig() + `
resource "raytpu_cluster" "test" {
  name = "` + name + `"
  ` + attribute + `
}
`
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    changeMatrixSteps("raytpu_cluster.test", changeMatrices["cluster"], config),
	})
}

// The slice's matrix runs on a cluster of no release channel, made outside Terraform: on a channel
// GKE keeps nodes upgraded and repaired, so auto_repair and auto_upgrade do not change there.
func TestAccSlice_changeMatrix(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-slice-matrix", "")
	c := testGKEClient(t)
	if err := mutateCluster(context.Background(), c, id, func(ctx context.Context) (*containerpb.Operation, error) {
		// Deprecated in the API, and still what clusters made before release channels are on.
		unchanneled := containerpb.ReleaseChannel_UNSPECIFIED //nolint:staticcheck // see above
		return c.UpdateCluster(ctx, id, &containerpb.ClusterUpdate{DesiredReleaseChannel: &containerpb.ReleaseChannel{Channel: unchanneled}})
	}); err != nil {
		t.Fatalf("leaving the release channel: %v", err)
	}
	config := func(attribute string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = %q
  name       = "matrix"
  generation = "v6e"
  topology   = "2x2"
  %s
}
`, id, attribute)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    changeMatrixSteps("raytpu_slice.test", changeMatrices["slice"], config),
	})
}

func TestAccComputeClass_changeMatrix(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-class-matrix", "")
	config := func(attribute string) string { return testAccComputeClassConfig(id.String(), attribute) }
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    changeMatrixSteps("raytpu_compute_class.test", changeMatrices["compute_class"], config),
	})
}
