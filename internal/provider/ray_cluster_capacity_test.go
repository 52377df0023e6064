package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// testAccCapacityConfig is a queued and a flex-start slice, and a RayCluster on the slice the
// caller names (none when empty). more is written beside them.
func testAccCapacityConfig(cluster, slice, more string) string {
	rayCluster := ""
	if slice != "" {
		rayCluster = fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id    = raytpu_cluster.test.id
  name          = "tpu"
  worker_groups = [{ name = "g", slices = [raytpu_slice.%s.id] }]
}
`, slice)
	}
	return testAccSliceConfig(cluster, `
resource "raytpu_slice" "queued" {
  cluster             = raytpu_cluster.test.id
  name                = "queued"
  generation          = "v6e"
  topology            = "4x4"
  queued_provisioning = true
}
resource "raytpu_slice" "flex" {
  cluster        = raytpu_cluster.test.id
  name           = "flex"
  generation     = "v6e"
  topology       = "2x4"
  chips_per_host = 4
  flex_start     = true
}
`+more+rayCluster)
}

// A queued slice gets its nodes only for a ProvisioningRequest, and a flex-start slice when its
// capacity comes, maybe hours later: a worker group on either is refused at plan time once the
// slice exists, and before anything is applied when it is created in the same apply, saying what
// to do instead; nothing is left to be tainted.
func TestAccRayCluster_queuedAndFlexStartSlicesRefused(t *testing.T) {
	t.Parallel()
	cluster := "acc-ray-capacity"
	queued := `(?s)Queued Slice In A Worker Group.*worker group "g": slice queued uses queued provisioning.*ProvisioningRequest`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccCapacityConfig(cluster, "", "")},
			{Config: testAccCapacityConfig(cluster, "queued", ""), PlanOnly: true, ExpectError: regexp.MustCompile(queued)},
			{
				Config:      testAccCapacityConfig(cluster, "flex", ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Flex-Start Slice In A Worker Group.*worker group "g": slice flex is flex-start capacity`),
			},
			{
				// A queued slice made in the same apply: refused before the RayCluster is applied.
				Config: testAccCapacityConfig(cluster, "later", `
resource "raytpu_slice" "later" {
  cluster             = raytpu_cluster.test.id
  name                = "later"
  generation          = "v6e"
  topology            = "2x4"
  queued_provisioning = true
}
`),
				ExpectError: regexp.MustCompile(`(?s)Queued Slice In A Worker Group.*slice later uses queued provisioning`),
			},
			{
				PreConfig: func() {
					_, err := testKubeClient(t, cluster).GetRayCluster(context.Background(), "default", "tpu")
					if !errors.Is(err, kube.ErrRayClusterNotFound) {
						t.Fatalf("the refused RayCluster was applied: %v", err)
					}
				},
				Config: testAccCapacityConfig(cluster, "", ""),
			},
		},
	})
}
