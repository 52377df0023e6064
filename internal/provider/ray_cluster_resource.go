package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
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
	plan.ID = types.StringValue(rayClusterID(plan.ClusterID.ValueString(), plan.Namespace.ValueString(), plan.Name.ValueString()))
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
	client := r.client(ctx, action, &resp.Diagnostics)
	if client == nil {
		return
	}
	k, gone := r.kubeFor(ctx, client, state.ClusterID.ValueString(), false, action, &resp.Diagnostics)
	if gone {
		resp.State.RemoveResource(ctx)
		return
	}
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
		var cfg rayConfig
		if err := json.Unmarshal([]byte(rc.Annotations[rayConfigAnnotation]), &cfg); err != nil {
			resp.Diagnostics.AddError("RayCluster Not Managed By raytpu", fmt.Sprintf("%s: the RayCluster has no valid %s annotation, so "+
				"raytpu cannot tell the configuration it was made from. Import only RayClusters that raytpu_ray_cluster created.", action, rayConfigAnnotation))
			return
		}
		resp.Diagnostics.Append(applyRayConfig(ctx, cfg, &state)...)
		state.Ray = rayNamesObject(state.RayVersion)
		svc, dash, cl := rayAddresses(state.Namespace.ValueString(), state.Name.ValueString())
		state.HeadService, state.DashboardAddress, state.ClientAddress = types.StringValue(svc), types.StringValue(dash), types.StringValue(cl)
	}
	var resolving diag.Diagnostics
	spec, groups := resolveRayCluster(ctx, client, state, &resolving)
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
	client := r.client(ctx, action, &resp.Diagnostics)
	if client == nil {
		return
	}
	k, gone := r.kubeFor(ctx, client, state.ClusterID.ValueString(), false, action, &resp.Diagnostics)
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
	// Its Pods are gone: the slices are free for another worker group.
	if err := releaseSlices(ctx, client, state.Namespace.ValueString(), state.Name.ValueString(), modelSlices(ctx, state)); err != nil {
		resp.Diagnostics.AddWarning("Slices Still Claimed", fmt.Sprintf("%s: the RayCluster is deleted, but %s. Until the labels %s, %s and %s "+
			"are removed from those node pools, no other worker group can use them.", action, err,
			kube.ClaimNamespaceLabel, kube.ClaimClusterLabel, kube.ClaimGroupLabel))
	}
}

// ImportState takes {cluster_id}/rayClusters/{namespace}/{name}, {cluster_id}/{namespace}/{name},
// {project}/{location}/{cluster}/{namespace}/{name} or, with the provider's project,
// {location}/{cluster}/{namespace}/{name}; Read restores the configuration from the RayCluster's
// raytpu annotation.
func (r *rayClusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, namespace, name, err := parseRayClusterImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, map[string]any{
		"id": rayClusterID(cluster.String(), namespace, name), "cluster_id": cluster.String(), "namespace": namespace, "name": name,
	})
}

// kubeFor returns a client for the cluster's API server, with KubeRay serving. gone is true when
// the cluster does not exist. With wait it waits a while for KubeRay's CRDs (GKE reports the
// add-on enabled before they serve); otherwise it does not check them.
func (r *rayClusterResource) kubeFor(ctx context.Context, client *gke.Client, clusterID string, wait bool, action string, diags *diag.Diagnostics) (k *kube.Client, gone bool) {
	k, cluster, gone := clusterKube(ctx, client, clusterID, action, diags)
	if k == nil || !wait {
		return k, gone
	}
	if !cluster.GetAddonsConfig().GetRayOperatorConfig().GetEnabled() {
		k.Close()
		diags.AddAttributeError(pathClusterID, "KubeRay Not Ready", fmt.Sprintf("%s: cluster %s does not have the Ray Operator add-on, so "+
			"its API server serves no RayClusters. Create the cluster with raytpu_cluster, or enable the add-on with raytpu_ray_operator.", action, clusterID))
		return nil, false
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := k.WaitForKubeRay(wctx, kubePollInterval); err != nil {
		k.Close()
		diags.AddAttributeError(pathClusterID, "KubeRay Not Ready", fmt.Sprintf("%s: %s. The Ray Operator add-on of %s installs the "+
			"KubeRay CRDs shortly after it is enabled; apply again once raytpu_cluster or raytpu_ray_operator reports kuberay.ready.", action, err, clusterID))
		return nil, false
	}
	return k, false
}
