package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*rayClusterResource)(nil)
	_ resource.ResourceWithImportState    = (*rayClusterResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*rayClusterResource)(nil)
	_ resource.ResourceWithValidateConfig = (*rayClusterResource)(nil)
)

// NewRayClusterResource returns raytpu_ray_cluster: a KubeRay RayCluster over whole TPU slices.
func NewRayClusterResource() resource.Resource {
	return rayClusterResourceWithIdentity{&rayClusterResource{}}
}

type rayClusterResource struct {
	resourceBase
}

// rayClusterTimeouts are the defaults of the timeouts block, which the resource page lists.
var rayClusterTimeouts = OperationTimeouts{Create: 30 * time.Minute, Update: 30 * time.Minute, Delete: 10 * time.Minute}

func (r *rayClusterResource) DefaultTimeouts() OperationTimeouts { return rayClusterTimeouts }

var pathClusterID = path.Root("cluster_id")

func (r *rayClusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ray_cluster"
}

func (r *rayClusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rayClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, rayClusterTimeouts.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	plan.ID = types.StringValue(rayClusterKind.id(plan.ClusterID.ValueString(), plan.Namespace.ValueString(), plan.Name.ValueString()))
	if !r.apply(ctx, &plan, nil, "creating", &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayClusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state rayClusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	action := "reading raytpu_ray_cluster (" + state.ID.ValueString() + ")"
	client, k := r.readKube(ctx, state.ClusterID.ValueString(), action, resp)
	if k == nil {
		return
	}
	defer k.Close()
	rc, err := k.GetRayCluster(ctx, state.Namespace.ValueString(), state.Name.ValueString())
	switch {
	case errors.Is(err, kube.ErrRayClusterNotFound), errors.Is(err, kube.ErrKubeRayNotServed):
		// Deleted outside Terraform (or KubeRay with it): the next plan creates it again.
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Error Reading RayCluster", fmt.Sprintf("%s: %s", action, err))
		return
	}
	if state.WorkerGroups.IsNull() {
		// Just imported: the configuration comes from the annotation raytpu writes.
		if !importRayConfig(ctx, rc.Annotations, rayClusterKind, &state.rayConfigModel, &state.rayOutputsModel, action, &resp.Diagnostics) {
			return
		}
		svc, dash, cl := rayAddresses(state.Namespace.ValueString(), state.Name.ValueString())
		state.HeadService, state.DashboardAddress, state.ClientAddress = types.StringValue(svc), types.StringValue(dash), types.StringValue(cl)
	}
	var resolving diag.Diagnostics
	spec, groups := resolveRayConfig(ctx, client, state.rayConfigModel, state.Name.ValueString(), &resolving)
	if !resolving.HasError() {
		state.GroupSettings = groupSettings(groups, state.Name.ValueString(), state.RayVersion.ValueString())
	}
	ok, why := inSync(ctx, k, rc, spec, groups, resolving)
	if !ok {
		resp.Diagnostics.AddWarning("RayCluster Not As Configured", fmt.Sprintf("%s: %s. The next apply brings the RayCluster and its "+
			"Pods in line with the configuration and the slices.", action, why))
	}
	state.InSync = types.BoolValue(ok)
	r.observe(ctx, k, nil, &state, rc, action, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *rayClusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if req.Plan.Raw.IsFullyKnown() && quantityTextEdit(ctx, req.Plan, req.State) {
		// The same quantities in other texts, planned with the state's outputs: nothing to apply
		// (common_quantity_edit.go).
		resp.State.Raw = req.Plan.Raw
		return
	}
	var plan, state rayClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, rayClusterTimeouts.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	if !r.apply(ctx, &plan, &state, "updating", &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayClusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state rayClusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, rayClusterTimeouts.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	action := "deleting raytpu_ray_cluster (" + state.ID.ValueString() + ")"
	client, k, gone := r.kubeOf(ctx, state.ClusterID.ValueString(), action, &resp.Diagnostics)
	if gone || k == nil {
		return
	}
	defer k.Close()
	err := k.DeleteRayCluster(ctx, state.Namespace.ValueString(), state.Name.ValueString())
	if err != nil && !errors.Is(err, kube.ErrKubeRayNotServed) {
		resp.Diagnostics.AddError("Error Deleting RayCluster", fmt.Sprintf("%s: %s. Its Pods hold TPU hosts until they end; "+
			"check them with kubectl get pods -l ray.io/cluster=%s -n %s.", action, err, state.Name.ValueString(), state.Namespace.ValueString()))
		return
	}
	releaseClaims(ctx, client, state.rayConfigModel, rayClusterKind, action, &resp.Diagnostics)
	releaseHistoryAccounts(ctx, k, state.rayConfigModel, rayClusterKind, false, action, &resp.Diagnostics)
}

// ImportState takes {cluster_id}/rayClusters/{namespace}/{name}, {cluster_id}/{namespace}/{name},
// {project}/{location}/{cluster}/{namespace}/{name} or, with the provider's project,
// {location}/{cluster}/{namespace}/{name}; Read restores the configuration from the RayCluster's
// raytpu annotation.
func (r *rayClusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, namespace, name, err := rayClusterKind.parseImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, map[string]any{
		"id": rayClusterKind.id(cluster.String(), namespace, name), "cluster_id": cluster.String(), "namespace": namespace, "name": name,
	})
}
