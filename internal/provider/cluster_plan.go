package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// ModifyPlan fills project and location from the provider and checks a new min_master_version
// (see checkMinMasterVersion) and slice_controller's requirements (checkSliceController). The id of a cluster being created or replaced stays unknown, as
// the google provider's does: what references it waits for the cluster (an ephemeral
// raytpu_cluster_credentials is not opened before it exists), and the slices and RayClusters on a
// replaced cluster, which GKE deletes with it, are replaced in the same apply.
func (r *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return
	}
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var plan clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	fillDefault := func(v *types.String, fallback, attribute string) {
		if !v.IsUnknown() {
			return
		}
		if fallback == "" {
			resp.Diagnostics.AddAttributeError(path.Root(attribute), "Missing "+attribute,
				fmt.Sprintf("Set %s on the resource, or on the provider (or through the environment, see the provider docs).", attribute))
			return
		}
		*v = types.StringValue(fallback)
	}
	fillDefault(&plan.Project, r.data.project, "project")
	fillDefault(&plan.Location, r.data.location, "location")
	var state *clusterResourceModel
	if !req.State.Raw.IsNull() {
		state = &clusterResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		plan.KubeRay = planKubeRayWait(state.KubeRay, plan.WaitForKubeRay)
	}
	if v := plan.MinMasterVersion; !v.IsNull() && !v.IsUnknown() &&
		(state == nil || !v.Equal(state.MinMasterVersion) || !plan.ReleaseChannel.Equal(state.ReleaseChannel)) {
		resp.Diagnostics.Append(r.checkMinMasterVersion(ctx, plan, state)...)
	}
	resp.Diagnostics.Append(r.checkSliceController(ctx, plan, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// checkMinMasterVersion checks min_master_version against the Ray add-on's minimum and, unless
// the cluster's control plane already meets it, against the versions the location offers in the
// cluster's release channel (when they can be read). It is a minimum: a control plane GKE has
// upgraded past it is fine, and a version the channel no longer offers is then no concern.
func (r *clusterResource) checkMinMasterVersion(ctx context.Context, plan clusterResourceModel, state *clusterResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	attr := path.Root("min_master_version")
	want, err := tpu.ParseVersion(plan.MinMasterVersion.ValueString())
	if err != nil {
		diags.AddAttributeError(attr, "Invalid GKE Version", err.Error()+".")
		return diags
	}
	if !want.CanMeet(tpu.RayOperatorMinVersion) {
		diags.AddAttributeError(attr, "GKE Version Too Old for Ray",
			fmt.Sprintf("min_master_version %s is below %s, the first GKE version with the Ray Operator add-on. Use %s or later.",
				want, tpu.RayOperatorMinVersion, tpu.RayOperatorMinVersion))
		return diags
	}
	if state != nil && meetsMinimum(state.MasterVersion.ValueString(), want) {
		return diags
	}
	if plan.Project.IsUnknown() || plan.Location.IsUnknown() || plan.ReleaseChannel.IsUnknown() {
		return diags
	}
	client := r.planClient(ctx, "planning raytpu_cluster ("+plan.clusterID().String()+")", &diags)
	if client == nil {
		return diags
	}
	if _, err := r.resolveMasterVersion(ctx, client, plan); err != nil {
		var verr *gke.VersionError
		switch {
		case errors.As(err, &verr):
			diags.AddAttributeError(attr, "Unsupported GKE Version", err.Error()+".")
		case reportUnreachable(&diags, "planning raytpu_cluster ("+plan.clusterID().String()+")", err):
		default:
			tflog.Debug(ctx, "GKE versions not readable at plan time", map[string]any{"error": err.Error()})
		}
	}
	return diags
}

// meetsMinimum reports whether the exact control plane version current is at or above minimum: at or
// above the lowest version of a partial one (1.34 is met by 1.34.0-gke.1 and by 1.35.1-gke.5),
// never for latest, which names whatever is newest.
func meetsMinimum(current string, minimum tpu.Version) bool {
	c, err := tpu.ParseVersion(current)
	return err == nil && c.IsExact() && !minimum.IsLatest() && !c.Less(minimum)
}

// resolveMasterVersion is the exact control plane version to request for min_master_version:
// the newest version of the cluster's release channel in its location that matches it.
func (r *clusterResource) resolveMasterVersion(ctx context.Context, client *gke.Client, m clusterResourceModel) (string, error) {
	sc, err := client.GetServerConfig(ctx, m.Project.ValueString(), m.Location.ValueString())
	if err != nil {
		return "", fmt.Errorf("reading the GKE versions offered in %s: %w", m.Location.ValueString(), gke.Advised(err))
	}
	channel := expandReleaseChannel(m.ReleaseChannel).GetChannel()
	return gke.ResolveMasterVersion(m.MinMasterVersion.ValueString(), gke.MasterVersionsOffered(sc, channel),
		fmt.Sprintf("in the %s release channel of %s", channel, m.Location.ValueString()))
}
