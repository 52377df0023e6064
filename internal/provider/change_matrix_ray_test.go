package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The change matrices of the Ray resources. Each step of a RayCluster's or a RayService's matrix
// also checks that it runs as its configuration says: healthy and in sync, one replica per slice of
// each group, every replica whole on one slice of its group (or one of its spares), and every
// slice claimed by the group that lists it and by no other, the slices no group lists released.

// withBase is a resource's body: each of the base attributes ("name = value") that change does not
// set, then change.
func withBase(base []string, change string) string {
	var b strings.Builder
	for _, attribute := range base {
		name, _, _ := strings.Cut(attribute, " ")
		if !regexp.MustCompile(`(?m)^\s*` + name + `\s*=`).MatchString(change) {
			b.WriteString("  " + attribute + "\n")
		}
	}
	b.WriteString("  " + change + "\n")
	return b.String()
}

// rayMatrixConfig is a matrix's configuration on the cluster named cluster: the slices, and the
// Ray resource at address (whose name is its Kubernetes name) of the base attributes and a change.
func rayMatrixConfig(cluster, slices, address string, base []string) func(change string) string {
	typ, name, _ := strings.Cut(address, ".")
	return func(change string) string {
		return testAccSliceConfig(cluster, slices+fmt.Sprintf(`
resource %q %q {
  cluster_id = raytpu_cluster.test.id
  name       = %q
%s}
`, typ, name, name, withBase(base, change)))
	}
}

// runsAsConfigured are the checks of every step of a RayCluster's or a RayService's matrix on
// the resource at address, on the cluster named cluster.
func runsAsConfigured(cluster, address string, steps []resource.TestStep) {
	for i := range steps {
		if steps[i].PlanOnly {
			continue
		}
		steps[i].ConfigStateChecks = append(steps[i].ConfigStateChecks,
			at(address, "healthy", knownvalue.Bool(true)), at(address, "in_sync", knownvalue.Bool(true)))
		checks := []resource.TestCheckFunc{placedAsConfigured(address), claimedAsConfigured(cluster, address)}
		if steps[i].Check != nil {
			checks = append(checks, steps[i].Check)
		}
		steps[i].Check = resource.ComposeTestCheckFunc(checks...)
	}
}

func TestAccRayCluster_changeMatrix(t *testing.T) {
	t.Parallel()
	const cluster = "acc-ray-matrix"
	slices := v6eSlices("2x4", "chips_per_host = 4", "a", "b") + v6eSlices("2x2", "", "one", "two")
	base := []string{workerGroups(sliceGroup("tpu", "a", ""), sliceGroup("one", "one", ""))}
	config := rayMatrixConfig(cluster, slices, rayClusterAddress, base)
	steps := changeMatrixSteps(rayClusterAddress, changeMatrices["ray_cluster"], config)
	// The base has no head: its defaults set first, then in other texts, and back.
	const head = `head = { cpu = "1", memory = "2Gi" }`
	steps = append(steps, resource.TestStep{Config: config(head)})
	steps = append(steps, quantityTextSteps(rayClusterAddress, config, `head = { cpu = "1000m", memory = "2048Mi" }`, head)...)
	steps = append(steps, resource.TestStep{Config: config("")})
	runsAsConfigured(cluster, rayClusterAddress, steps)
	accTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}

// The RayService's matrix: the in-place attributes' changes, then rayServiceChanges, each step's
// plan saying whether the RayCluster that serves stays (ray_cluster_name known) or a second one
// comes up (unknown until applied), and each leaving one RayCluster.
func TestAccRayService_changeMatrix(t *testing.T) {
	t.Parallel()
	const cluster = "acc-serve-matrix"
	slices := v6eSlices("2x4", "chips_per_host = 4", "a", "b", "c") + v6eSlices("2x2", "", "one", "two")
	base := []string{
		serviceHead,
		workerGroups(sliceGroup("tpu", "a", ""), sliceGroup("one", "one", "")),
		fmt.Sprintf("serve_config_v2 = %q", testServeConfig("llm")),
		// The RayCluster an upgrade replaced goes 5 s after it, not KubeRay's 60.
		"old_cluster_deletion_delay = 5",
	}
	config := rayMatrixConfig(cluster, slices, rayServiceAddress, base)
	step := func(what, change string, newCluster bool) resource.TestStep {
		name := plancheck.ExpectKnownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name"), knownvalue.StringRegexp(regexp.MustCompile(`^llm-`)))
		if newCluster {
			name = plancheck.ExpectUnknownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name"))
		}
		return resource.TestStep{
			PreConfig: func() { t.Logf("changing %s", what) },
			Config:    config(change),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(rayServiceAddress, plancheck.ResourceActionUpdate), name,
			}},
			Check: oneRayServiceCluster(t, cluster),
		}
	}
	steps := []resource.TestStep{
		{Config: config(""), Check: oneRayServiceCluster(t, cluster)},
		{
			// A change KubeRay meets with a second RayCluster, on the slices the one that serves
			// holds: it would wait for ever, so the plan refuses it.
			Config:      config(serviceLoadBalancerHead),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`Upgrade Needs Free Slices`),
		},
		{
			// A NodePort head moved to an internal load balancer: KubeRay's upgrade keeps the Services'
			// annotations, so it would make an external one; refused whatever the slices.
			Config:      config(strings.Replace(serviceHead, `"NodePort"`, `"InternalLoadBalancer"`, 1)),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Head Service Type Not Changeable By An Upgrade.*external\s+load\s+balancer\s+instead\s+of\s+an\s+internal`),
		},
	}
	for _, c := range changeMatrices["ray_service"] {
		steps = append(steps, step(c.attribute, c.changed, false), step(c.attribute+" back", c.back, false))
	}
	steps = append(steps, quantityTextSteps(rayServiceAddress, config, strings.Replace(serviceHead, "}", `}, cpu = "1000m", memory = "2048Mi"`, 1), "",
		plancheck.ExpectKnownValue(rayServiceAddress, tfjsonpath.New("ray_cluster_name"), knownvalue.StringRegexp(regexp.MustCompile(`^llm-`))))...)
	for _, c := range rayServiceChanges {
		steps = append(steps, step(c.change, c.changed, c.newCluster), step(c.change+": back", c.back, c.backNewCluster))
	}
	runsAsConfigured(cluster, rayServiceAddress, steps)
	accTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}

func TestAccRayHistoryServer_changeMatrix(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-history-matrix", "")
	base := []string{`bucket = "runs-a"`, `google_service_account = "ray-history@` + testProject + `.iam.gserviceaccount.com"`}
	config := func(change string) string {
		return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_ray_history_server" "test" {
  cluster_id = %q
%s}
`, id.String(), withBase(base, change))
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             historyServerGone(t, id.Name),
		Steps:                    changeMatrixSteps("raytpu_ray_history_server.test", changeMatrices["ray_history_server"], config),
	})
}

func TestAccRayOperator_changeMatrix(t *testing.T) {
	t.Parallel()
	id := createClusterOutOfBand(t, "acc-operator-matrix", "")
	config := func(attribute string) string { return testAccRayOperatorConfig(id.String(), "  "+attribute) }
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             rayAddonEnabled(id, false),
		Steps:                    changeMatrixSteps("raytpu_ray_operator.test", changeMatrices["ray_operator"], config),
	})
}

// quantityTextSteps edit the head's quantities to other texts of the same quantities (edited, from
// the default "1" and "2Gi"), and back: Terraform plans an update of the texts, which keeps what the
// state reports of the running RayCluster (more checks it), and the apply asks nothing of it.
func quantityTextSteps(address string, config func(string) string, edited, back string, more ...plancheck.PlanCheck) []resource.TestStep {
	checks := append([]plancheck.PlanCheck{
		plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
		plancheck.ExpectKnownValue(address, tfjsonpath.New("healthy"), knownvalue.Bool(true)),
		plancheck.ExpectKnownValue(address, tfjsonpath.New("placement"), knownvalue.NotNull()),
	}, more...)
	return []resource.TestStep{
		{Config: config(edited), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks}},
		{Config: config(back), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks}},
	}
}

// slicePools are the node pools of the state's raytpu_slice resources, by id.
func slicePools(s *terraform.State) map[string]string {
	pools := map[string]string{}
	for _, r := range s.RootModule().Resources {
		if r.Type == "raytpu_slice" {
			pools[r.Primary.ID] = r.Primary.Attributes["name"]
		}
	}
	return pools
}

// listAttribute is the list at key of flat state attributes.
func listAttribute(a map[string]string, key string) []string {
	n, _ := strconv.Atoi(a[key+".#"])
	out := make([]string, n)
	for i := range out {
		out[i] = a[fmt.Sprintf("%s.%d", key, i)]
	}
	return out
}

// groupPools are the node pools of the slices (and spares) of each slices group of attributes a,
// by group name.
func groupPools(s *terraform.State, a map[string]string) (slices, spares map[string][]string) {
	pools := slicePools(s)
	slices, spares = map[string][]string{}, map[string][]string{}
	n, _ := strconv.Atoi(a["worker_groups.#"])
	for g := 0; g < n; g++ {
		name := a[fmt.Sprintf("worker_groups.%d.name", g)]
		for _, id := range listAttribute(a, fmt.Sprintf("worker_groups.%d.slices", g)) {
			slices[name] = append(slices[name], pools[id])
		}
		for _, id := range listAttribute(a, fmt.Sprintf("worker_groups.%d.spare_slices", g)) {
			spares[name] = append(spares[name], pools[id])
		}
	}
	return slices, spares
}

// placedAsConfigured checks the placement of the resource at address: each slices group runs one
// replica per slice of slices (its num_slices), each on a slice of its slices or spare_slices of its own, every host
// of it running, in host order, and no node holds two workers.
func placedAsConfigured(address string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a := s.RootModule().Resources[address].Primary.Attributes
		slices, spares := groupPools(s, a)
		nodes := map[string]bool{}
		for group, pools := range slices {
			own := map[string]bool{}
			for _, pool := range append(pools, spares[group]...) {
				own[pool] = true
			}
			hosts := a["worker_group_settings."+group+".hosts_per_slice"]
			base := "placement." + group
			if got, slices := a[base+".#"], a["worker_group_settings."+group+".num_slices"]; got != strconv.Itoa(len(pools)) || slices != got {
				return fmt.Errorf("%s has %s replicas of num_slices %s, want one on each of %v", base, got, slices, pools)
			}
			for r := range pools {
				rb := fmt.Sprintf("%s.%d", base, r)
				pool := a[rb+".0.node_pool"]
				if got := a[rb+".#"]; got != hosts || !own[pool] {
					return fmt.Errorf("%s: %s hosts on pool %s; want %s on one of %v", rb, got, pool, hosts, append(pools, spares[group]...))
				}
				own[pool] = false
				n, _ := strconv.Atoi(hosts)
				for h := 0; h < n; h++ {
					hb := fmt.Sprintf("%s.%d", rb, h)
					node := a[hb+".node"]
					if a[hb+".node_pool"] != pool || a[hb+".running"] != "true" || a[hb+".host_index"] != strconv.Itoa(h) || nodes[node] {
						return fmt.Errorf("%s: pod %s on node %s of pool %s (running %s, host index %s, node taken %v); want pool %s, host %d running",
							hb, a[hb+".pod"], node, a[hb+".node_pool"], a[hb+".running"], a[hb+".host_index"], nodes[node], pool, h)
					}
					nodes[node] = true
				}
			}
		}
		return nil
	}
}

// claimedAsConfigured checks the claims of the state's slices on the cluster named cluster: each
// node of a slice that a group of the resource at address lists (as a slice or a spare) is claimed
// for that group, and each node of the others is not claimed.
func claimedAsConfigured(cluster, address string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a := s.RootModule().Resources[address].Primary.Attributes
		slices, spares := groupPools(s, a)
		want := map[string]string{}
		for _, pool := range slicePools(s) {
			want[pool] = ""
		}
		for _, byGroup := range []map[string][]string{slices, spares} {
			for group, pools := range byGroup {
				for _, pool := range pools {
					want[pool] = group
				}
			}
		}
		k, err := testClientsetE(cluster)
		if err != nil {
			return err
		}
		nodes, err := k.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool"})
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			group, isSlice := want[n.Labels["cloud.google.com/gke-nodepool"]]
			if !isSlice {
				continue
			}
			owner, got := n.Labels["raytpu.dev/ray-cluster"], n.Labels["raytpu.dev/ray-group"]
			if got != group || (owner == "") != (group == "") {
				return fmt.Errorf("node %s of %s: claim %q/%q, want group %q", n.Name, n.Labels["cloud.google.com/gke-nodepool"], owner, got, group)
			}
		}
		return nil
	}
}
