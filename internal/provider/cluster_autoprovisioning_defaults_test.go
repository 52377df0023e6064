package provider

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// TestAccClusterAutoProvisioning_poolDefaultsAndForeignSettings gives auto-provisioned pools a
// service account and scopes of their own, and changes the limits after settings were made
// outside Terraform (an autoscaling profile, a GPU limit, the scope GKE adds): those stay.
func TestAccClusterAutoProvisioning_poolDefaultsAndForeignSettings(t *testing.T) {
	t.Parallel()
	const name = "acc-nap-defaults"
	const serviceAccount = "nap-nodes@" + testProject + ".iam.gserviceaccount.com"
	const cloudPlatform = "https://www.googleapis.com/auth/cloud-platform"
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: name}
	config := func(maxCPU int) string {
		return testAccClusterConfig(name, fmt.Sprintf(`auto_provisioning = {
    max_cpu         = %d
    max_memory_gb   = 256
    tpu_limits      = [{ generation = "v6e", max_chips = 64 }]
    service_account = %q
    oauth_scopes    = [%q]
  }`, maxCPU, serviceAccount, cloudPlatform))
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(64),
				Check: resource.ComposeTestCheckFunc(
					gkeAutoscaling(name, "cpu=0-64 memory=0-256 tpu-v6e-slice=64"),
					autoscalingIs(id, func(a *containerpb.ClusterAutoscaling) error {
						d := a.GetAutoprovisioningNodePoolDefaults()
						if d.GetServiceAccount() != serviceAccount || !slices.Equal(d.GetOauthScopes(), []string{cloudPlatform}) {
							return fmt.Errorf("auto-provisioned pools' defaults %v, want %s with %s", d, serviceAccount, cloudPlatform)
						}
						return nil
					}),
				),
			},
			{
				// Set outside Terraform: a profile and a GPU limit, which auto_provisioning does not
				// manage, and the scope GKE adds itself. None of it is a diff.
				PreConfig: func() {
					c := testGKEClient(t)
					cluster, err := c.GetCluster(context.Background(), id, gke.Fresh)
					if err != nil {
						t.Fatal(err)
					}
					a, _ := proto.Clone(cluster.GetAutoscaling()).(*containerpb.ClusterAutoscaling)
					a.AutoscalingProfile = containerpb.ClusterAutoscaling_OPTIMIZE_UTILIZATION
					a.ResourceLimits = append(a.ResourceLimits, &containerpb.ResourceLimit{ResourceType: "nvidia-l4", Maximum: 8})
					a.AutoprovisioningNodePoolDefaults.OauthScopes = append(a.AutoprovisioningNodePoolDefaults.OauthScopes, "https://www.googleapis.com/auth/monitoring.write")
					setAutoscalingOutOfBand(t, name, a)
				},
				Config: config(64),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				// A new limit changes only what auto_provisioning holds.
				Config: config(96),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					at("raytpu_cluster.test", "auto_provisioning", knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"max_cpu": knownvalue.Int64Exact(96), "service_account": knownvalue.StringExact(serviceAccount),
						"oauth_scopes": knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(cloudPlatform)}),
					})),
				},
				Check: resource.ComposeTestCheckFunc(
					gkeAutoscaling(name, "cpu=0-96 memory=0-256 nvidia-l4=8 tpu-v6e-slice=64"),
					autoscalingIs(id, func(a *containerpb.ClusterAutoscaling) error {
						if a.GetAutoscalingProfile() != containerpb.ClusterAutoscaling_OPTIMIZE_UTILIZATION {
							return fmt.Errorf("autoscaling profile %s, want the OPTIMIZE_UTILIZATION set outside Terraform", a.GetAutoscalingProfile())
						}
						if d := a.GetAutoprovisioningNodePoolDefaults(); d.GetServiceAccount() != serviceAccount {
							return fmt.Errorf("auto-provisioned pools' service account %q, want %s", d.GetServiceAccount(), serviceAccount)
						}
						return nil
					}),
				),
			},
		},
	})
}

// autoscalingIs checks the cluster's autoscaling configuration as GKE reports it.
func autoscalingIs(id gke.ClusterID, check func(*containerpb.ClusterAutoscaling) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cluster, err := clusterOutOfBand(id)
		if err != nil {
			return err
		}
		return check(cluster.GetAutoscaling())
	}
}

// The scopes written for auto-provisioned pools stay as written when GKE adds its monitoring scope,
// in either spelling (the emulator's rules/additions.go adds .../auth/monitoring), and give way
// to another list.
func TestFlattenAutoProvisioningScopes(t *testing.T) {
	ctx := context.Background()
	const logging, storage = "https://www.googleapis.com/auth/logging.write", "https://www.googleapis.com/auth/devstorage.read_only"
	written := types.ListValueMust(types.StringType, []attr.Value{types.StringValue(storage), types.StringValue(logging)})
	attrs := map[string]attr.Value{}
	for k, ty := range autoProvisioningAttrTypes {
		attrs[k] = nullOf(t, ty)
	}
	attrs["oauth_scopes"] = written
	prior := types.ObjectValueMust(autoProvisioningAttrTypes, attrs)
	for _, c := range []struct {
		reported []string
		keep     bool
	}{
		{[]string{logging, storage}, true},
		{[]string{storage, logging, "https://www.googleapis.com/auth/monitoring"}, true},
		{[]string{storage, logging, "https://www.googleapis.com/auth/monitoring.write"}, true},
		{[]string{storage, "https://www.googleapis.com/auth/monitoring"}, false},
	} {
		var diags diag.Diagnostics
		got := flattenAutoProvisioningScopes(ctx, c.reported, prior, &diags)
		if diags.HasError() {
			t.Fatal(diags)
		}
		if got.Equal(written) != c.keep {
			t.Errorf("reported %v: got %s, want the written list kept: %v", c.reported, got, c.keep)
		}
	}
	if got := flattenAutoProvisioningScopes(ctx, nil, prior, &diag.Diagnostics{}); !got.IsNull() {
		t.Errorf("no scopes reported: got %s, want null", got)
	}
}

func nullOf(t *testing.T, ty attr.Type) attr.Value {
	t.Helper()
	v, err := ty.ValueFromTerraform(context.Background(), tftypes.NewValue(ty.TerraformType(context.Background()), nil))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
