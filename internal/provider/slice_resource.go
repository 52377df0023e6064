package provider

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*sliceResource)(nil)
	_ resource.ResourceWithImportState    = (*sliceResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sliceResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sliceResource)(nil)
)

// NewSliceResource returns raytpu_slice: one TPU slice as one GKE node pool.
func NewSliceResource() resource.Resource {
	return sliceResourceWithIdentity{&sliceResource{}}
}

type sliceResource struct {
	resourceBase
}

// sliceTimeouts are the defaults of the timeouts block, which the resource page lists.
var sliceTimeouts = OperationTimeouts{Create: 2 * time.Hour, Update: 30 * time.Minute, Delete: time.Hour}

func (r *sliceResource) DefaultTimeouts() OperationTimeouts { return sliceTimeouts }

func (r *sliceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slice"
}

func (r *sliceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state sliceResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, _ := gke.ParseNodePoolID(state.ID.ValueString())
	what := fmt.Sprintf("reading raytpu_slice (%s)", id)
	client := r.client(ctx, what, &resp.Diagnostics)
	if client == nil {
		return
	}
	pool, err := client.GetNodePool(ctx, id)
	if gke.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Error Reading Slice", fmt.Sprintf("%s: %s", what, gke.WithAdvice(err)))
		return
	}
	// The pool comes from its cluster's node pool list, shared with the other slices of this run
	// (gke.SharedReadTTL). How to reach the cluster's API server is kept in private state, so that
	// a refresh reads nothing else of GKE; it is looked up again when it no longer works
	// (credentials or IP rotated) or is missing.
	access, kept, diags := privateAccess(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	lookUp := func() bool {
		cluster, err := client.GetCluster(ctx, id.Cluster)
		if err != nil || accessOf(cluster) == access {
			return false
		}
		access = accessOf(cluster)
		resp.Diagnostics.Append(keepAccess(ctx, resp.Private, access)...)
		return true
	}
	if !kept {
		lookUp()
	}
	hosts, err := sliceHosts(ctx, client, access, pool)
	if err != nil && kept && kube.CannotObserve(err) && lookUp() {
		hosts, err = sliceHosts(ctx, client, access, pool)
	}
	if err != nil {
		resp.Diagnostics.AddWarning("Slice Hosts Unknown", fmt.Sprintf("listing the hosts of raytpu_slice (%s): %s", id, err))
	}
	resp.Diagnostics.Append(readPool(ctx, &state, pool, hosts)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *sliceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state sliceResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, sliceTimeouts.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, err := gke.ParseNodePoolID(state.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice: %s", err))
		return
	}
	client := r.client(ctx, fmt.Sprintf("deleting raytpu_slice (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, err))
		return
	}
	defer unlock()
	if err := deleteNodePool(ctx, client, id); err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
		return
	}
	resp.Diagnostics.Append(deleteOwnWorkloadPolicy(ctx, client, id, state.PlacementPolicyName.ValueString())...)
}

func (r *sliceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := gke.ParseNodePoolImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, sliceAdoptedAttributes(id))
}

// sliceHosts lists the hosts of pool, as it runs (nil, nil while GKE has not created it yet).
func sliceHosts(ctx context.Context, client *gke.Client, access clusterAccess, pool *containerpb.NodePool) ([]kube.Host, error) {
	switch pool.GetStatus() {
	case containerpb.NodePool_RUNNING, containerpb.NodePool_RUNNING_WITH_ERROR, containerpb.NodePool_RECONCILING:
	default:
		return []kube.Host{}, nil
	}
	k, err := kubeClient(client, access)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return k.SliceHosts(ctx, pool.GetName())
}

// readPool copies pool, as GKE just reported it, into m, with its hosts as listed: nil when they
// could not be listed, which leaves hosts, ready_hosts and healthy unknown (null) rather than
// reporting a healthy slice as broken.
func readPool(ctx context.Context, m *sliceResourceModel, pool *containerpb.NodePool, hosts []kube.Host) diag.Diagnostics {
	diags := flattenNodePool(ctx, pool, m)
	if diags.HasError() {
		return diags
	}
	m.Status = types.StringValue(pool.GetStatus().String())
	if hosts == nil {
		m.Hosts, m.ReadyHosts, m.Healthy = types.ListNull(types.StringType), types.Int64Null(), types.BoolNull()
		m.FailedHosts = types.ListNull(types.StringType)
		return diags
	}
	names := make([]string, len(hosts))
	lost := []string{}
	for i, h := range hosts {
		names[i] = h.Name
		if h.Lost {
			lost = append(lost, h.Name)
		}
	}
	list, d := types.ListValueFrom(ctx, types.StringType, names)
	diags.Append(d...)
	m.Hosts = list
	m.FailedHosts, d = types.ListValueFrom(ctx, types.StringType, lost)
	diags.Append(d...)
	m.ReadyHosts = types.Int64Value(int64(readyHosts(hosts)))
	m.Healthy = types.BoolValue(poolHealthy(pool, hosts, int(m.NumHosts.ValueInt64())))
	return diags
}
