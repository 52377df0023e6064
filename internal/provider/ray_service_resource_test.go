package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rayServiceAddress = "raytpu_ray_service.llm"

// testServeConfig is a Serve config of the named applications, each with one deployment whose
// replica takes one host's four chips.
func testServeConfig(apps ...string) string {
	var b strings.Builder
	b.WriteString("applications:\n")
	for _, app := range apps {
		fmt.Fprintf(&b, "  - name: %[1]s\n    import_path: serve_%[1]s:app\n    route_prefix: /%[1]s\n    deployments:\n"+
			"      - name: Server\n        num_replicas: 1\n        ray_actor_options:\n          resources: {TPU: 4}\n", app)
	}
	return b.String()
}

// testAccRayServiceConfig is a cluster with two v6e 4x4 slices and a RayService named llm whose one
// worker group has both, serving serveConfig.
func testAccRayServiceConfig(cluster, serveConfig, more string) string {
	return testAccRayServiceOn(cluster, v6eSlice("a", "4x4", "")+v6eSlice("b", "4x4", ""), "a, b", serveConfig, more)
}

// testAccRayServiceOn is a cluster with the slices, and a RayService named llm whose one worker
// group "tpu" has those of the keys groupSlices names ("a, b"), serving serveConfig.
func testAccRayServiceOn(cluster, slices, groupSlices, serveConfig, more string) string {
	return testAccSliceConfig(cluster, slices+fmt.Sprintf(`
resource "raytpu_ray_service" "llm" {
  cluster_id = raytpu_cluster.test.id
  name       = "llm"
  head = {
    ray_start_params = { "dashboard-host" = "0.0.0.0" }
  }
  worker_groups   = [{ name = "tpu", slices = [%s] }]
  serve_config_v2 = %q
  %s
}
`, sliceIDs(groupSlices), serveConfig, more))
}

func TestAccRayService_servesOnSlicesUpdatesInPlaceImportDrift(t *testing.T) {
	t.Parallel()
	cluster := "acc-serve"
	clusterID := fmt.Sprintf("projects/%s/locations/%s/clusters/%s", testProject, testLocation, cluster)
	config := testAccRayServiceConfig(cluster, testServeConfig("llm"), "")
	updated := testAccRayServiceConfig(cluster, testServeConfig("llm", "embed"), "")
	sameRayCluster := statecheck.CompareValue(compare.ValuesSame())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayServiceAddress, "id", knownvalue.StringExact(clusterID+"/rayServices/default/llm")),
					at(rayServiceAddress, "status", knownvalue.StringExact("Running")),
					at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
					at(rayServiceAddress, "in_sync", knownvalue.Bool(true)),
					at(rayServiceAddress, "applications", knownvalue.MapExact(map[string]knownvalue.Check{"llm": knownvalue.StringExact("RUNNING")})),
					at(rayServiceAddress, "serve_service", knownvalue.StringExact("llm-serve-svc")),
					at(rayServiceAddress, "serve_address", knownvalue.StringExact("http://llm-serve-svc.default.svc.cluster.local:8000")),
					at(rayServiceAddress, "head_service", knownvalue.StringExact("llm-head-svc")),
					at(rayServiceAddress, "ray_cluster_name", knownvalue.StringRegexp(regexp.MustCompile(`^llm-[a-z0-9]{5}$`))),
					at(rayServiceAddress, "worker_group_settings", knownvalue.MapExact(map[string]knownvalue.Check{
						"tpu": knownvalue.ObjectPartial(map[string]knownvalue.Check{
							"num_slices": knownvalue.Int64Exact(2), "hosts_per_slice": knownvalue.Int64Exact(4),
							"megascale": knownvalue.MapPartial(map[string]knownvalue.Check{
								"MEGASCALE_COORDINATOR_ADDRESS": knownvalue.StringRegexp(regexp.MustCompile(`^tpu-0-0\.llm-[a-z0-9]{5}-headless$`)),
							}),
						}),
					})),
					sameRayCluster.AddStateValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
				},
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf(rayServiceAddress, "tpu", 4, "slice-a", "slice-b"),
					oneRayServiceCluster(t, cluster),
				),
			},
			{
				// A Serve config change alone goes to the same RayCluster.
				Config: updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name"), knownvalue.StringRegexp(regexp.MustCompile(`^llm-`))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayServiceAddress, "applications", knownvalue.MapExact(map[string]knownvalue.Check{
						"llm": knownvalue.StringExact("RUNNING"), "embed": knownvalue.StringExact("RUNNING"),
					})),
					at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
					sameRayCluster.AddStateValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
				},
				Check: oneRayServiceCluster(t, cluster),
			},
			{
				// What the RayCluster is made of changes on the slices the RayCluster that serves holds:
				// KubeRay's upgrade would wait for ever, so the plan refuses it and says what works.
				Config:   testAccRayServiceConfig(cluster, testServeConfig("llm", "embed"), `ray_version = "2.55.1"`),
				PlanOnly: true,
				// Terraform wraps the message where it likes.
				ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(`Upgrade Needs Free Slices.*changing ray_version and image makes KubeRay bring up a `+
					`second RayCluster beside RayCluster llm-.*asks for slice-a, slice-b.*change only serve_config_v2.*give worker group "tpu" `+
					`free slices.*upgrade_strategy = "Recreate"`, " ", `\s+`)),
			},
			{
				// Asked for, the RayService is replaced instead, with downtime.
				Config:             testAccRayServiceConfig(cluster, testServeConfig("llm", "embed"), `ray_version = "2.55.1"`+"\n  upgrade_strategy = \"Recreate\""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionReplace),
				}},
			},
			{
				ResourceName:            rayServiceAddress,
				ImportState:             true,
				ImportStateId:           clusterID + "/default/llm",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Changed outside Terraform: the plan applies it again, to the same RayCluster.
				PreConfig: func() { patchRayServiceOutOfBand(t, cluster, "llm") },
				Config:    updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayServiceAddress, "in_sync", knownvalue.Bool(true)),
					at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
					sameRayCluster.AddStateValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
				},
				Check: oneRayServiceCluster(t, cluster),
			},
			{
				// Deleted outside Terraform: removed from state, then created again.
				PreConfig: func() { deleteRayServiceOutOfBand(t, cluster, "llm") },
				Config:    updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at(rayServiceAddress, "healthy", knownvalue.Bool(true))},
				Check:             placementOnSlicesOf(rayServiceAddress, "tpu", 4, "slice-a", "slice-b"),
			},
			{
				// The head Service off ClusterIP: an upgrade cannot move it (KubeRay keeps the headless
				// Service), so the plan says so and what works.
				Config:      nodePortHead(updated),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Head Service Type Not Changeable By An Upgrade.*"ClusterIP".*"NodePort".*headless.*upgrade_strategy\s+=\s+"Recreate"`),
			},
			{
				// Replaced instead, the RayService gets a Service of the new type.
				Config: nodePortHead(testAccRayServiceConfig(cluster, testServeConfig("llm", "embed"), `upgrade_strategy = "Recreate"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionReplace),
				}},
				ConfigStateChecks: []statecheck.StateCheck{at(rayServiceAddress, "healthy", knownvalue.Bool(true))},
				Check: resource.ComposeTestCheckFunc(headService(t, cluster, "llm-head-svc", "NodePort", "", nil),
					placementOnSlicesOf(rayServiceAddress, "tpu", 4, "slice-a", "slice-b")),
			},
		},
	})
}

// nodePortHead is config with its RayService's head on a NodePort Service.
func nodePortHead(config string) string {
	return strings.Replace(config, `ray_start_params = { "dashboard-host" = "0.0.0.0" }`,
		`ray_start_params = { "dashboard-host" = "0.0.0.0" }`+"\n    service_type     = \"NodePort\"", 1)
}

// An upgrade on spare slices: KubeRay brings up a second RayCluster on them, which serves once
// every application runs there; the first one is then gone and its slices released.
func TestAccRayService_upgradeOnSpareSlices(t *testing.T) {
	t.Parallel()
	cluster := "acc-serve-upgrade"
	slices := ""
	for _, key := range []string{"a", "b", "c", "d"} {
		slices += v6eSlice(key, "2x4", "chips_per_host = 4")
	}
	otherRayCluster := statecheck.CompareValue(compare.ValuesDiffer())
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The replaced RayCluster goes 5 s after the upgrade, not KubeRay's 60.
				Config:            testAccRayServiceOn(cluster, slices, "a, b", testServeConfig("llm"), "old_cluster_deletion_delay = 5"),
				ConfigStateChecks: []statecheck.StateCheck{otherRayCluster.AddStateValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name"))},
				Check:             placementOnSlicesOf(rayServiceAddress, "tpu", 2, "slice-a", "slice-b"),
			},
			{
				Config: testAccRayServiceOn(cluster, slices, "c, d", testServeConfig("llm"), "ray_version = \"2.55.1\"\nold_cluster_deletion_delay = 5"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at(rayServiceAddress, "status", knownvalue.StringExact("Running")),
					at(rayServiceAddress, "healthy", knownvalue.Bool(true)),
					at(rayServiceAddress, "old_cluster_deletion_delay", knownvalue.Int64Exact(5)),
					at(rayServiceAddress, "applications", knownvalue.MapExact(map[string]knownvalue.Check{"llm": knownvalue.StringExact("RUNNING")})),
					otherRayCluster.AddStateValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name")),
				},
				Check: resource.ComposeTestCheckFunc(
					placementOnSlicesOf(rayServiceAddress, "tpu", 2, "slice-c", "slice-d"),
					oneRayServiceCluster(t, cluster),
					sliceClaimedBy(cluster, "slice-a", "", ""), sliceClaimedBy(cluster, "slice-b", "", ""),
					// The upgrade's RayCluster selects the next generation's claims only.
					sliceClaimedBy(cluster, "slice-c", "rayservice.llm.1", "tpu"),
				),
			},
		},
	})
}

func TestAccRayService_planTimeErrors(t *testing.T) {
	t.Parallel()
	mine := fmt.Sprintf("projects/%s/locations/%s/clusters/mine", testProject, testLocation)
	config := func(name, groups, serveConfig string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_service" "llm" {
  cluster_id      = %q
  name            = %q
  worker_groups   = [%s]
  serve_config_v2 = %q
}
`, mine, name, groups, serveConfig)
	}
	shape := `{ name = "g", generation = "v6e", topology = "4x4" }`
	steps := []struct{ name, groups, serve, want string }{
		{"llm", shape, "applications: []", `(?s)Invalid Serve Config.*it has no applications`},
		{"llm", shape, "applications:\n  - name: llm\n", `(?s)Invalid Serve Config.*applications\[0\] \("llm"\) has no\s+import_path`},
		{"llm", shape, testServeConfig("llm", "llm"), `(?s)Invalid Serve Config.*applications\[0\] and applications\[1\] are both\s+named "llm"`},
		{"llm", shape, "applications:\n  - import_path: a:app\n  - name: b\n    import_path: b:app\n", `(?s)Invalid Serve Config.*applications "default" and "b" share\s+route_prefix "/"`},
		{"llm", shape, "{nope", `(?s)Invalid Serve Config.*not a YAML mapping`},
		// KubeRay names the RayCluster <name>-<5 characters>, which must stay within 40.
		{strings.Repeat("a", 35), shape, testServeConfig("llm"), `(?s)Invalid Attribute Value Match.*at most 34\s+characters`},
		// The worker groups are checked as raytpu_ray_cluster's are.
		{"llm", `{ name = "g" }`, testServeConfig("llm"), `Missing Worker Group Source`},
		{"llm", `{ name = "g", generation = "v6e", topology = "3x3" }`, testServeConfig("llm"), `Invalid Worker Group Shape`},
		{"llm", `{ name = "g", generation = "v6e", topology = "4x4", spare_slices = ["` + mine + `/nodePools/spare"] }`, testServeConfig("llm"),
			`(?s)Spare Slices Without Slices.*list the slices the\s+group runs on in slices`},
		{"llm", `{ name = "g", slices = ["` + mine + `/nodePools/a"], spare_slices = ["` + mine + `/nodePools/a"] }`, testServeConfig("llm"),
			`(?s)Slice Listed Twice.*either one\s+of\s+its\s+slices\s+or\s+one\s+of\s+its\s+spare_slices`},
	}
	var ts []resource.TestStep
	for _, s := range steps {
		ts = append(ts, resource.TestStep{Config: config(s.name, s.groups, s.serve), PlanOnly: true, ExpectError: regexp.MustCompile(s.want)})
	}
	// Two resources of one configuration listing one slice would race at apply.
	ts = append(ts, resource.TestStep{
		Config: config("llm", `{ name = "g", slices = ["`+mine+`/nodePools/a"] }`, testServeConfig("llm")) + fmt.Sprintf(`
resource "raytpu_ray_cluster" "train" {
  cluster_id    = %q
  name          = "train"
  worker_groups = [{ name = "t", slices = ["%s/nodePools/a"] }]
}
`, mine, mine),
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`(?s)Slice Listed By Two Worker Groups.*cannot run on slice a:.*lists it too, in the same\s+configuration`),
	})
	// An upgrade's apply waits out the deletion delay within the update timeout.
	ts = append(ts, resource.TestStep{
		Config: strings.Replace(config("llm", shape, testServeConfig("llm")), "serve_config_v2", `old_cluster_deletion_delay = 600
  timeouts = { update = "2m" }
  serve_config_v2`, 1),
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`(?s)Deletion Delay Outlasts The Update Timeout.*old_cluster_deletion_delay is 600 seconds.*timeouts.update\s+\(2m0s\)`),
	})
	accTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: ts})
}

// oneRayServiceCluster checks that KubeRay made exactly one RayCluster for the RayService llm (of
// testAccRayServiceConfig and testAccRayServiceOn): an update in place brings up no second one.
func oneRayServiceCluster(t *testing.T, cluster string) resource.TestCheckFunc {
	const name, want = "llm", 1
	return func(*terraform.State) error {
		got, err := testKubeClient(t, cluster).RayServiceClusters(context.Background(), "default", name)
		if err != nil {
			return err
		}
		if len(got) != want {
			return fmt.Errorf("RayService %s has RayClusters %v, want %d", name, got, want)
		}
		return nil
	}
}

// patchRayServiceOutOfBand changes the head's Ray start parameters, as kubectl apply would.
func patchRayServiceOutOfBand(t *testing.T, cluster, name string) {
	t.Helper()
	k := testKubeClient(t, cluster)
	rs, err := k.GetRayService(context.Background(), "default", name)
	if err != nil {
		t.Fatal(err)
	}
	rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams["num-cpus"] = "0"
	rs.ObjectMeta = metav1.ObjectMeta{Name: rs.Name, Namespace: rs.Namespace, Annotations: rs.Annotations}
	if _, err := k.ApplyRayService(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
}

func deleteRayServiceOutOfBand(t *testing.T, cluster, name string) {
	t.Helper()
	if err := testKubeClient(t, cluster).DeleteRayService(context.Background(), "default", name); err != nil {
		t.Fatal(err)
	}
}
