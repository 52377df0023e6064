package provider

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

func (m clusterResourceModel) clusterID() gke.ClusterID {
	return gke.ClusterID{Project: m.Project.ValueString(), Location: m.Location.ValueString(), Name: m.Name.ValueString()}
}

// setUnknownComputedToNull keeps unknown values out of state when it is written before the
// cluster can be read.
func (m *clusterResourceModel) setUnknownComputedToNull() {
	for _, s := range []*types.String{&m.Endpoint, &m.CACertificate, &m.MasterVersion, &m.Status, &m.SelfLink, &m.Network, &m.Subnetwork, &m.ReleaseChannel} {
		if s.IsUnknown() {
			*s = types.StringNull()
		}
	}
	if m.KubeRay.IsUnknown() || m.KubeRay.IsNull() {
		m.KubeRay = types.ObjectNull(kubeRayAttrTypes)
	}
	if m.SystemPool.IsUnknown() {
		m.SystemPool = types.ObjectNull(systemPoolAttrTypes)
	}
	if m.RayOperator.IsUnknown() {
		m.RayOperator = types.ObjectNull(rayOperatorAttrTypes)
	}
	if m.WorkloadIdentity.IsUnknown() {
		m.WorkloadIdentity = types.BoolNull()
	}
	if m.SliceController.IsUnknown() {
		m.SliceController = types.BoolNull()
	}
	if m.ResourceLabels.IsUnknown() {
		m.ResourceLabels = types.MapNull(types.StringType)
	}
	m.AutoProvisioning = autoProvisioningLocationsKnown(m.AutoProvisioning)
}

func expandReleaseChannel(v types.String) *containerpb.ReleaseChannel {
	channel := containerpb.ReleaseChannel_Channel_value[v.ValueString()]
	return &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_Channel(channel)}
}

func expandAddons(ctx context.Context, m clusterResourceModel) (*containerpb.AddonsConfig, diag.Diagnostics) {
	var ray rayOperatorSettings
	diags := m.RayOperator.As(ctx, &ray, basetypes.ObjectAsOptions{})
	return &containerpb.AddonsConfig{
		RayOperatorConfig:     expandRayOperator(true, ray),
		SliceControllerConfig: &containerpb.SliceControllerConfig{Enabled: m.SliceController.ValueBool()},
	}, diags
}

func expandCluster(ctx context.Context, m clusterResourceModel) (*containerpb.Cluster, diag.Diagnostics) {
	addons, diags := expandAddons(ctx, m)
	var pool systemPoolModel
	diags.Append(m.SystemPool.As(ctx, &pool, basetypes.ObjectAsOptions{})...)
	labels := map[string]string{}
	diags.Append(m.ResourceLabels.ElementsAs(ctx, &labels, false)...)
	cluster := &containerpb.Cluster{
		Name:                  m.Name.ValueString(),
		Description:           m.Description.ValueString(),
		InitialClusterVersion: m.MinMasterVersion.ValueString(),
		Network:               m.Network.ValueString(),
		Subnetwork:            m.Subnetwork.ValueString(),
		ResourceLabels:        labels,
		ReleaseChannel:        expandReleaseChannel(m.ReleaseChannel),
		AddonsConfig:          addons,
		NodePools: []*containerpb.NodePool{{
			Name:             systemPoolName,
			InitialNodeCount: int32(pool.NodeCount.ValueInt64()),
			Config:           &containerpb.NodeConfig{MachineType: pool.MachineType.ValueString()},
		}},
	}
	if m.WorkloadIdentity.ValueBool() {
		cluster.WorkloadIdentityConfig = expandWorkloadIdentity(m)
	}
	policy, d := expandMaintenancePolicy(ctx, m.MaintenancePolicy)
	diags.Append(d...)
	cluster.MaintenancePolicy = policy
	if !m.AutoProvisioning.IsNull() {
		autoscaling, d := expandAutoProvisioning(ctx, m.AutoProvisioning)
		diags.Append(d...)
		cluster.Autoscaling = autoscaling
	}
	return cluster, diags
}

// expandWorkloadIdentity is the project's workload pool, or an empty pool to turn it off.
func expandWorkloadIdentity(m clusterResourceModel) *containerpb.WorkloadIdentityConfig {
	if !m.WorkloadIdentity.ValueBool() {
		return &containerpb.WorkloadIdentityConfig{}
	}
	return &containerpb.WorkloadIdentityConfig{WorkloadPool: m.Project.ValueString() + ".svc.id.goog"}
}

// flattenCluster copies what GKE reports into m. Settings GKE does not report back (deletion
// protection, waits, timeouts, min_master_version) keep their configured values; the system pool
// is readSystemPool's.
func flattenCluster(ctx context.Context, c *containerpb.Cluster, m *clusterResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Name = types.StringValue(c.GetName())
	if c.GetDescription() != "" {
		m.Description = types.StringValue(c.GetDescription())
	}
	m.Network = keepSpelling(m.Network, c.GetNetwork(), c.GetNetworkConfig().GetNetwork())
	m.Subnetwork = keepSpelling(m.Subnetwork, c.GetSubnetwork(), c.GetNetworkConfig().GetSubnetwork())
	m.Endpoint = types.StringValue(c.GetEndpoint())
	m.CACertificate = types.StringValue(c.GetMasterAuth().GetClusterCaCertificate())
	m.MasterVersion = types.StringValue(c.GetCurrentMasterVersion())
	m.Status = types.StringValue(c.GetStatus().String())
	m.SelfLink = types.StringValue(c.GetSelfLink())
	if channel := c.GetReleaseChannel().GetChannel(); channel != containerpb.ReleaseChannel_UNSPECIFIED { //nolint:staticcheck // GKE reports it for clusters without a channel
		m.ReleaseChannel = types.StringValue(channel.String())
	}
	m.ResourceLabels = mapOrNull(ctx, userLabels(c.GetResourceLabels()), m.ResourceLabels, &diags)
	m.WorkloadIdentity = types.BoolValue(c.GetWorkloadIdentityConfig().GetWorkloadPool() != "")
	ray := c.GetAddonsConfig().GetRayOperatorConfig()
	if ray.GetEnabled() {
		settings, d := types.ObjectValueFrom(ctx, rayOperatorAttrTypes, flattenRayOperator(ray))
		diags.Append(d...)
		m.RayOperator = settings
	} else {
		// Without settings in state, the plan sets ray_operator again, which enables the add-on.
		m.RayOperator = types.ObjectNull(rayOperatorAttrTypes)
		diags.AddWarning("Ray Operator Add-on Disabled",
			fmt.Sprintf("The Ray Operator add-on of %s was disabled outside Terraform; the next apply enables it again.", c.GetName()))
	}
	m.SliceController = types.BoolValue(c.GetAddonsConfig().GetSliceControllerConfig().GetEnabled())
	policy, d := flattenMaintenancePolicy(ctx, c.GetMaintenancePolicy(), m.MaintenancePolicy)
	diags.Append(d...)
	m.MaintenancePolicy = policy
	autoProvisioning, d := flattenAutoProvisioning(ctx, c.GetAutoscaling(), m.AutoProvisioning)
	diags.Append(d...)
	m.AutoProvisioning = autoProvisioning
	return diags
}
