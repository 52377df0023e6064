package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*rayServiceResource)(nil)
	_ resource.ResourceWithImportState    = (*rayServiceResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*rayServiceResource)(nil)
	_ resource.ResourceWithValidateConfig = (*rayServiceResource)(nil)
)

// NewRayServiceResource returns raytpu_ray_service: a KubeRay RayService (Ray Serve) over whole TPU
// slices.
func NewRayServiceResource() resource.Resource {
	return rayServiceResourceWithIdentity{&rayServiceResource{}}
}

type rayServiceResource struct {
	resourceBase
}

// rayServiceTimeouts are the defaults of the timeouts block, which the resource page lists.
var rayServiceTimeouts = OperationTimeouts{Create: 30 * time.Minute, Update: 30 * time.Minute, Delete: 10 * time.Minute}

func (r *rayServiceResource) DefaultTimeouts() OperationTimeouts { return rayServiceTimeouts }

func (r *rayServiceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ray_service"
}

func (r *rayServiceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rayServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, rayServiceTimeouts.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	plan.ID = types.StringValue(rayServiceKind.id(plan.ClusterID.ValueString(), plan.Namespace.ValueString(), plan.Name.ValueString()))
	if !r.apply(ctx, &plan, nil, "creating", &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(setClaimedSlices(ctx, resp.Private, modelSlices(ctx, plan.rayConfigModel))...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayServiceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state rayServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	action := "reading raytpu_ray_service (" + state.ID.ValueString() + ")"
	client, k := r.readKube(ctx, state.ClusterID.ValueString(), action, resp)
	if k == nil {
		return
	}
	defer k.Close()
	rs, err := k.GetRayService(ctx, state.Namespace.ValueString(), state.Name.ValueString())
	switch {
	case errors.Is(err, kube.ErrRayServiceNotFound), errors.Is(err, kube.ErrKubeRayNotServed):
		// Deleted outside Terraform (or KubeRay with it): the next plan creates it again.
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Error Reading RayService", fmt.Sprintf("%s: %s", action, err))
		return
	}
	if state.WorkerGroups.IsNull() {
		// Just imported: the configuration comes from the annotation raytpu writes, the Serve
		// config from the RayService's spec.
		if !importRayConfig(ctx, rs.Annotations, rayServiceKind, &state.rayConfigModel, &state.rayOutputsModel, action, &resp.Diagnostics) {
			return
		}
		state.ServeConfigV2 = types.StringValue(rs.Spec.ServeConfigV2)
		state.DeletionDelay = types.Int64Value(defaultDeletionDelay)
		if d := rs.Spec.RayClusterDeletionDelaySeconds; d != nil {
			state.DeletionDelay = types.Int64Value(int64(*d))
		}
		state.setAddresses()
	}
	r.readInto(ctx, client, k, rs, &state, action, &resp.Diagnostics)
	if left := stillClaimed(ctx, client, state.rayConfigModel, claimedSlices(ctx, req.Private)); left != "" && state.InSync.ValueBool() {
		state.InSync = types.BoolValue(false)
		resp.Diagnostics.AddWarning("RayService Not As Configured", fmt.Sprintf("%s: slice %s, which no worker group lists any more, is "+
			"still claimed for the RayService. The next apply releases it.", action, left))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *rayServiceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if req.Plan.Raw.IsFullyKnown() && quantityTextEdit(ctx, req.Plan, req.State) {
		// The same quantities in other texts, planned with the state's outputs: nothing to apply
		// (common_quantity_edit.go).
		resp.State.Raw = req.Plan.Raw
		return
	}
	var plan, state rayServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, rayServiceTimeouts.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	// Every slice claimed for the RayService stays in the record until it is released, whatever
	// happens to this apply (ray_service_claimed.go).
	claimed := union(claimedSlices(ctx, req.Private), modelSlices(ctx, state.rayConfigModel))
	applied := r.apply(ctx, &plan, &state, "updating", &resp.Diagnostics)
	claimed = union(claimed, modelSlices(ctx, plan.rayConfigModel))
	if applied && !resp.Diagnostics.HasError() {
		claimed = r.releaseLeftSlices(ctx, &plan, claimed, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(setClaimedSlices(ctx, resp.Private, claimed)...)
	if !applied {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayServiceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state rayServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, rayServiceTimeouts.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	action := "deleting raytpu_ray_service (" + state.ID.ValueString() + ")"
	client, k, gone := r.kubeOf(ctx, state.ClusterID.ValueString(), action, &resp.Diagnostics)
	if gone || k == nil {
		return
	}
	defer k.Close()
	namespace, name := state.Namespace.ValueString(), state.Name.ValueString()
	err := k.DeleteRayService(ctx, namespace, name)
	if err != nil && !errors.Is(err, kube.ErrKubeRayNotServed) {
		resp.Diagnostics.AddError("Error Deleting RayService", fmt.Sprintf("%s: %s. Its RayClusters' Pods hold TPU hosts until they end; "+
			"check them with kubectl get rayclusters,pods -l ray.io/originated-from-cr-name=%s -n %s.", action, err, name, namespace))
		return
	}
	releaseClaims(ctx, client, state.rayConfigModel, rayServiceKind, action, &resp.Diagnostics)
	if left := without(claimedSlices(ctx, req.Private), modelSlices(ctx, state.rayConfigModel)); len(left) > 0 {
		if err := releaseSlices(ctx, client, namespace, kube.RayServiceClaimer(name), left); err != nil {
			resp.Diagnostics.AddWarning("Slices Still Claimed", fmt.Sprintf("%s: the RayService is deleted, but %s. Until their raytpu.dev/ray-* "+
				"labels go, no other worker group can use them.", action, err))
		}
	}
	releaseHistoryAccounts(ctx, k, state.rayConfigModel, rayServiceKind, false, action, &resp.Diagnostics)
}

// ImportState takes the forms of raytpu_ray_cluster's import ids, with rayServices:
// {cluster_id}/rayServices/{namespace}/{name}, {cluster_id}/{namespace}/{name},
// {project}/{location}/{cluster}/{namespace}/{name} or, with the provider's project,
// {location}/{cluster}/{namespace}/{name}; Read restores the configuration from the RayService's
// raytpu annotation and its Serve config.
func (r *rayServiceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, namespace, name, err := rayServiceKind.parseImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, map[string]any{
		"id": rayServiceKind.id(cluster.String(), namespace, name), "cluster_id": cluster.String(), "namespace": namespace, "name": name,
		// raytpu's own setting, which the RayService does not keep: its default.
		"upgrade_strategy": upgradeNewCluster,
	})
}

// setAddresses fills the names and in-cluster addresses of KubeRay's Services of the RayService:
// <name>-head-svc and <name>-serve-svc, whatever RayCluster they point at (ray-operator v1.5.0
// controllers/ray/utils/util.go, GenerateHeadServiceName and GenerateServeServiceName), the serve
// port 8000 (utils.DefaultServingPort).
func (m *rayServiceModel) setAddresses() {
	if m.Name.IsUnknown() || m.Namespace.IsUnknown() {
		return
	}
	namespace, name := m.Namespace.ValueString(), m.Name.ValueString()
	svc, dash, client := rayAddresses(namespace, name)
	m.HeadService, m.DashboardAddress, m.ClientAddress = types.StringValue(svc), types.StringValue(dash), types.StringValue(client)
	serve := name + "-serve-svc"
	m.ServeService = types.StringValue(serve)
	m.ServeAddress = types.StringValue(fmt.Sprintf("http://%s.%s.svc.cluster.local:8000", serve, namespace))
}
