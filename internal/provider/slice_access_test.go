package provider

import (
	"context"
	"fmt"
	"testing"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"google.golang.org/api/option"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// createPrivateClusterOutOfBand creates a cluster without a public endpoint, as a platform team
// would with google_container_cluster; dnsExternal opens its DNS-based endpoint to user traffic.
func createPrivateClusterOutOfBand(t *testing.T, name string, dnsExternal bool) gke.ClusterID {
	t.Helper()
	ctx := context.Background()
	c := testGKEClient(t)
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	op, err := c.CreateCluster(ctx, id, &containerpb.Cluster{
		Name:      name,
		NodePools: []*containerpb.NodePool{{Name: "default", InitialNodeCount: 1}},
		ControlPlaneEndpointsConfig: &containerpb.ControlPlaneEndpointsConfig{
			IpEndpointsConfig: &containerpb.ControlPlaneEndpointsConfig_IPEndpointsConfig{EnablePublicEndpoint: proto.Bool(false)},
			DnsEndpointConfig: &containerpb.ControlPlaneEndpointsConfig_DNSEndpointConfig{AllowExternalTraffic: proto.Bool(dnsExternal)},
		},
	})
	if err == nil {
		err = c.WaitForOperation(ctx, id, op)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", id, err)
	}
	t.Cleanup(func() {
		if op, err := c.DeleteCluster(ctx, id); err == nil {
			_ = c.WaitForOperation(ctx, id, op)
		}
	})
	return id
}

// privateSlice is a slice on cluster id, with settings.
func privateSlice(id gke.ClusterID, settings string) string {
	return testAccProviderConfig() + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster           = %q
  name              = "private"
  generation        = "v6e"
  topology          = "2x4"
  chips_per_host    = 4
  %s
}
`, id, settings)
}

// unreachableHostWait ends the wait for hosts that cannot be seen: their API server gets 20
// seconds to answer, and no machine, however slow, makes a private endpoint answer.
const unreachableHostWait = `host_wait_timeout = "20s"`

// TestAccSlice_privateClusters creates slices on clusters whose IP endpoint is private: reached
// through GKE's DNS-based endpoint when that accepts external traffic, and otherwise created with
// their hosts unknown, never tainted for what cannot be seen from here.
func TestAccSlice_privateClusters(t *testing.T) {
	t.Parallel()
	t.Run("dns endpoint", func(t *testing.T) {
		t.Parallel()
		id := createPrivateClusterOutOfBand(t, "acc-private-dns", true)
		accTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: privateSlice(id, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
					at("raytpu_slice.test", "hosts", knownvalue.ListSizeExact(2)),
				},
			}},
		})
	})
	t.Run("private endpoint only", func(t *testing.T) {
		t.Parallel()
		id := createPrivateClusterOutOfBand(t, "acc-private", false)
		accTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: privateSlice(id, unreachableHostWait),
					ConfigStateChecks: []statecheck.StateCheck{
						at("raytpu_slice.test", "status", knownvalue.StringExact("RUNNING")),
						at("raytpu_slice.test", "hosts", knownvalue.Null()),
						at("raytpu_slice.test", "ready_hosts", knownvalue.Null()),
						at("raytpu_slice.test", "healthy", knownvalue.Null()),
					},
				},
				{
					// Not tainted: the next plan keeps the slice.
					Config:           privateSlice(id, unreachableHostWait),
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				},
			},
		})
	})
}

// TestAccSlice_clusterCredentialsRotated: a slice keeps how to reach its cluster in private state;
// after GKE's credential rotation (a new IP and CA) the next refresh finds the new ones and still
// sees the hosts, instead of reporting them unknown from then on.
func TestAccSlice_clusterCredentialsRotated(t *testing.T) {
	t.Parallel()
	const cluster = "acc-rotate"
	config := testAccSliceConfig(cluster, `
resource "raytpu_slice" "test" {
  cluster    = raytpu_cluster.test.id
  name       = "rotated"
  generation = "v6e"
  topology   = "2x2"
}
`)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					ctx := context.Background()
					api, err := container.NewClusterManagerRESTClient(ctx, option.WithEndpoint(testEmulator.Endpoint()), option.WithTokenSource(testTokenSource()))
					if err != nil {
						t.Fatal(err)
					}
					defer api.Close()
					id := gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster}
					op, err := api.StartIPRotation(ctx, &containerpb.StartIPRotationRequest{Name: id.String(), RotateCredentials: true})
					if err == nil {
						err = testGKEClient(t).WaitForOperation(ctx, id, op)
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_slice.test", "hosts", knownvalue.ListSizeExact(1)),
					at("raytpu_slice.test", "healthy", knownvalue.Bool(true)),
				},
			},
		},
	})
}
