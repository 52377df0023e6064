package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var (
	_ resource.ResourceWithConfigure      = (*computeClassResource)(nil)
	_ resource.ResourceWithImportState    = (*computeClassResource)(nil)
	_ resource.ResourceWithValidateConfig = (*computeClassResource)(nil)
)

// NewComputeClassResource returns raytpu_compute_class: a GKE custom ComputeClass of TPU slices.
func NewComputeClassResource() resource.Resource { return &computeClassResource{} }

type computeClassResource struct {
	resourceBase
}

// computeClassMinVersion is the first GKE version with custom ComputeClasses ("Custom
// ComputeClasses are available to use in GKE Autopilot mode and GKE Standard mode in version
// 1.30.3-gke.1451000 and later", GKE "About custom compute classes").
var computeClassMinVersion = tpu.MustParseVersion("1.30.3-gke.1451000")

func (r *computeClassResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_compute_class"
}

func (r *computeClassResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan computeClassModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = types.StringValue(computeClassID(plan.ClusterID.ValueString(), plan.Name.ValueString()))
	r.apply(ctx, &plan, "creating", &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *computeClassResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan computeClassModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &plan, "updating", &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// apply checks the cluster's version and applies the class.
func (r *computeClassResource) apply(ctx context.Context, plan *computeClassModel, verb string, diags *diag.Diagnostics) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	action := verb + " raytpu_compute_class (" + plan.ID.ValueString() + ")"
	client, k, gone := r.kubeOf(ctx, plan.ClusterID.ValueString(), action, diags)
	if gone {
		diags.AddAttributeError(pathClusterID, "Cluster Not Found", fmt.Sprintf("%s: cluster %s does not exist.", action, plan.ClusterID.ValueString()))
	}
	if k == nil {
		return
	}
	defer k.Close()
	id, err := gke.ParseClusterID(plan.ClusterID.ValueString())
	if err != nil {
		diags.AddAttributeError(pathClusterID, "Invalid Cluster ID", err.Error())
		return
	}
	cluster, err := client.GetCluster(ctx, id)
	if err != nil {
		diags.AddError("Error Reading Cluster", fmt.Sprintf("%s: %s", action, err))
		return
	}
	if v, err := tpu.ParseVersion(cluster.GetCurrentMasterVersion()); err == nil && v.Less(computeClassMinVersion) {
		diags.AddAttributeError(pathClusterID, "Cluster Too Old For ComputeClasses", fmt.Sprintf("%s: the cluster runs GKE %s; custom "+
			"ComputeClasses need %s or later (GKE, \"About custom compute classes\"). Upgrade the control plane first.", action, v, computeClassMinVersion))
		return
	}
	cc, d := expandComputeClass(ctx, plan)
	if diags.Append(d...); diags.HasError() {
		return
	}
	if err := k.ApplyComputeClass(ctx, cc); err != nil {
		diags.AddError("Error Applying ComputeClass", fmt.Sprintf("%s: %s", action, err))
		return
	}
	plan.NodeSelector = computeClassSelector(plan.Name.ValueString())
}

func (r *computeClassResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state computeClassModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	action := "reading raytpu_compute_class (" + state.ID.ValueString() + ")"
	_, k := r.readKube(ctx, state.ClusterID.ValueString(), action, resp)
	if k == nil {
		return
	}
	defer k.Close()
	cc, err := k.GetComputeClass(ctx, state.Name.ValueString())
	switch {
	case errors.Is(err, kube.ErrComputeClassNotFound):
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Error Reading ComputeClass", fmt.Sprintf("%s: %s", action, err))
		return
	}
	// What the cluster has is the truth: a change made outside Terraform shows in the next plan.
	resp.Diagnostics.Append(flattenComputeClass(ctx, cc, &state)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *computeClassResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state computeClassModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	action := "deleting raytpu_compute_class (" + state.ID.ValueString() + ")"
	_, k, gone := r.kubeOf(ctx, state.ClusterID.ValueString(), action, &resp.Diagnostics)
	if gone || k == nil {
		return
	}
	defer k.Close()
	if err := k.DeleteComputeClass(ctx, state.Name.ValueString()); err != nil {
		resp.Diagnostics.AddError("Error Deleting ComputeClass", fmt.Sprintf("%s: %s", action, err))
	}
}

// ImportState takes {cluster_id}/computeClasses/{name} (the id) or {cluster_id}/{name}.
func (r *computeClassResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	rest, name, ok := cutLast(req.ID, "/")
	rest = strings.TrimSuffix(rest, "/"+computeClassesKind)
	cluster, err := gke.ParseClusterID(rest)
	if !ok || err != nil || !computeClassNamePattern.MatchString(name) {
		invalidImportID(resp, fmt.Errorf("import id %q is not {cluster_id}/%s/{name} or {cluster_id}/{name}, with cluster_id "+
			"projects/{project}/locations/{location}/clusters/{cluster}", req.ID, computeClassesKind))
		return
	}
	importAttributes(ctx, resp, map[string]any{"id": computeClassID(cluster.String(), name), "cluster_id": cluster.String(), "name": name})
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

const computeClassesKind = "computeClasses"

func computeClassID(cluster, name string) string {
	return cluster + "/" + computeClassesKind + "/" + name
}

func computeClassSelector(name string) types.Map {
	return types.MapValueMust(types.StringType, map[string]attr.Value{kube.ComputeClassLabel: types.StringValue(name)})
}
