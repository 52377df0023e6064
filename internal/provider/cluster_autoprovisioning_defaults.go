package provider

import (
	"context"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/protobuf/proto"
)

// What auto_provisioning says of the node pools node auto-provisioning creates (containerpb
// AutoprovisioningNodePoolDefaults: service_account, oauth_scopes), and how an update leaves the
// rest of the cluster's autoscaling configuration as it is.

// expandAutoProvisioningDefaults is the service account and scopes of auto-provisioned pools that
// m sets, nil when it sets neither.
func expandAutoProvisioningDefaults(ctx context.Context, m autoProvisioningModel, diags *diag.Diagnostics) *containerpb.AutoprovisioningNodePoolDefaults {
	account := !m.ServiceAccount.IsNull() && !m.ServiceAccount.IsUnknown()
	scopes := !m.OAuthScopes.IsNull() && !m.OAuthScopes.IsUnknown()
	if !account && !scopes {
		return nil
	}
	d := &containerpb.AutoprovisioningNodePoolDefaults{}
	if account {
		d.ServiceAccount = m.ServiceAccount.ValueString()
	}
	if scopes {
		diags.Append(m.OAuthScopes.ElementsAs(ctx, &d.OauthScopes, false)...)
	}
	return d
}

// flattenAutoProvisioningScopes is the scopes GKE reports, or prior's when they mean the same
// (keepScopes: in any order, with the monitoring scope GKE adds), so that GKE's addition shows no
// diff.
func flattenAutoProvisioningScopes(ctx context.Context, reported []string, prior types.Object, diags *diag.Diagnostics) types.List {
	if len(reported) == 0 {
		return types.ListNull(types.StringType)
	}
	written := types.ListNull(types.StringType)
	if !prior.IsNull() && !prior.IsUnknown() {
		if l, ok := prior.Attributes()["oauth_scopes"].(types.List); ok {
			written = l
		}
	}
	return keepScopes(ctx, written, reported, diags)
}

// mergeAutoProvisioning is the cluster's autoscaling configuration current with what
// auto_provisioning manages set as desired says: whether node auto-provisioning is on, the cpu,
// memory and TPU limits, the locations when written, and the pools' service account and scopes
// when written. The rest stays as it is, since UpdateCluster's desiredClusterAutoscaling replaces
// the whole configuration: the autoscaling profile, GPU limits, the pools' other defaults
// (management, upgrade settings, disks). Turning node auto-provisioning off drops the limits,
// locations and pool defaults with it: GKE answers "Resource limits are supported only with node
// autoprovisioning." otherwise.
func mergeAutoProvisioning(current, desired *containerpb.ClusterAutoscaling) *containerpb.ClusterAutoscaling {
	out := &containerpb.ClusterAutoscaling{}
	if current != nil {
		out = cloneAutoscaling(current)
	}
	out.EnableNodeAutoprovisioning = desired.GetEnableNodeAutoprovisioning()
	if !out.EnableNodeAutoprovisioning {
		out.ResourceLimits, out.AutoprovisioningLocations, out.AutoprovisioningNodePoolDefaults = nil, nil, nil
		return out
	}
	limits := append([]*containerpb.ResourceLimit(nil), desired.GetResourceLimits()...)
	for _, l := range current.GetResourceLimits() {
		if t := l.GetResourceType(); t != resourceCPU && t != resourceMemory && generationOfAccelerator(t) == nil {
			limits = append(limits, l)
		}
	}
	out.ResourceLimits = limits
	if locations := desired.GetAutoprovisioningLocations(); len(locations) > 0 {
		out.AutoprovisioningLocations = locations
	}
	if d := desired.GetAutoprovisioningNodePoolDefaults(); d != nil {
		if out.AutoprovisioningNodePoolDefaults == nil {
			out.AutoprovisioningNodePoolDefaults = &containerpb.AutoprovisioningNodePoolDefaults{}
		}
		if d.GetServiceAccount() != "" {
			out.AutoprovisioningNodePoolDefaults.ServiceAccount = d.GetServiceAccount()
		}
		if len(d.GetOauthScopes()) > 0 {
			out.AutoprovisioningNodePoolDefaults.OauthScopes = d.GetOauthScopes()
		}
	}
	return out
}

func cloneAutoscaling(a *containerpb.ClusterAutoscaling) *containerpb.ClusterAutoscaling {
	out, _ := proto.Clone(a).(*containerpb.ClusterAutoscaling)
	return out
}
