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
}

// matrixToCome are the pages whose in-place attributes have no matrix yet: the Ray resources',
// whose attributes are changed alone by their own acceptance tests (ray_service_day_two_test.go,
// ray_cluster_rollout_test.go, ray_history_server_resource_test.go, ray_operator_resource_test.go).
var matrixToCome = []string{"ray_cluster", "ray_history_server", "ray_operator", "ray_service"}

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
			if len(want) > 0 && !slices.Contains(matrixToCome, page) {
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
