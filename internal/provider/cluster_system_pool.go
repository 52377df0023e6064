package provider

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// The system pool changes in place, as GKE changes a node pool: a new machine type migrates its
// nodes (UpdateNodePool machine_type "Initiates an upgrade operation that migrates the nodes in the
// node pool to the specified machine type", containerpb; GKE "Vertically scale your node pools"),
// and a new node count resizes it (SetNodePoolSize; GKE "Resize a node pool"). Neither touches
// the cluster's TPU slices.

type systemPoolModel struct {
	MachineType types.String `tfsdk:"machine_type"`
	NodeCount   types.Int64  `tfsdk:"node_count"`
}

var pathSystemPool = path.Root("system_pool")

// updateSystemPool makes the system pool what plan says, one change at a time.
func updateSystemPool(ctx context.Context, client *gke.Client, id gke.ClusterID, plan, state types.Object) diag.Diagnostics {
	var want, have systemPoolModel
	diags := plan.As(ctx, &want, basetypes.ObjectAsOptions{})
	if !state.IsNull() && !state.IsUnknown() {
		diags.Append(state.As(ctx, &have, basetypes.ObjectAsOptions{})...)
	}
	if diags.HasError() {
		return diags
	}
	pool := gke.NodePoolID{Cluster: id, Name: systemPoolName}
	var mutations []func(context.Context) (*containerpb.Operation, error)
	if !want.MachineType.Equal(have.MachineType) {
		mutations = append(mutations, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: pool.String(), MachineType: want.MachineType.ValueString()})
		})
	}
	if !want.NodeCount.Equal(have.NodeCount) {
		mutations = append(mutations, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.SetNodePoolSize(ctx, pool, int(want.NodeCount.ValueInt64()))
		})
	}
	for _, start := range mutations {
		if err := mutateNodePool(ctx, client, pool, start); err != nil {
			diags.AddAttributeError(pathSystemPool, "Error Updating System Pool",
				fmt.Sprintf("updating the system pool of raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
			return diags
		}
	}
	return diags
}

// readSystemPool sets system_pool from the cluster's system pool: its machine type, and its node
// count as its instance groups report it (see gke.Client.NodePoolSize), since GKE keeps the count
// the pool was created with in initialNodeCount. When the instance groups cannot be read, the
// count GKE reports is kept, and why is logged.
func readSystemPool(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, m *clusterResourceModel) {
	for _, pool := range cluster.GetNodePools() {
		if pool.GetName() != systemPoolName {
			continue
		}
		count, err := client.NodePoolSize(ctx, pool)
		if err != nil {
			tflog.Warn(ctx, "system pool size unknown; using its initial node count", map[string]any{"error": err.Error()})
			count = int(pool.GetInitialNodeCount())
		}
		m.SystemPool = types.ObjectValueMust(systemPoolAttrTypes, map[string]attr.Value{
			"machine_type": types.StringValue(pool.GetConfig().GetMachineType()),
			"node_count":   types.Int64Value(int64(count)),
		})
	}
}
