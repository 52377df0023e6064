package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// dynamicSlicingRequirements is the GKE page that lists the slice controller's requirements.
const dynamicSlicingRequirements = "GKE's dynamic slicing requirements, https://docs.cloud.google.com/kubernetes-engine/docs/how-to/create-dynamic-slices"

// checkSliceController checks slice_controller = true against what GKE requires of the cluster
// (dynamicSlicingRequirements): the Rapid release channel and a control plane at
// tpu.SliceControllerMinVersion or later. It looks again only when the add-on is turned on or the
// channel or min_master_version changes; the version is the one the cluster will run, where the
// plan can know it.
func (r *clusterResource) checkSliceController(ctx context.Context, plan clusterResourceModel, state *clusterResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if plan.SliceController.IsUnknown() || !plan.SliceController.ValueBool() {
		return diags
	}
	if state != nil && state.SliceController.ValueBool() && plan.ReleaseChannel.Equal(state.ReleaseChannel) &&
		plan.MinMasterVersion.Equal(state.MinMasterVersion) {
		return diags
	}
	attr := path.Root("slice_controller")
	if channel := plan.ReleaseChannel; !channel.IsUnknown() && channel.ValueString() != "RAPID" {
		diags.AddAttributeError(attr, "Slice Controller Needs the Rapid Channel",
			fmt.Sprintf("slice_controller = true needs the cluster in the Rapid release channel (%s), and release_channel is %q. "+
				"Set release_channel = \"RAPID\", or slice_controller = false.", dynamicSlicingRequirements, channel.ValueString()))
	}
	version, from := r.plannedMasterVersion(ctx, plan, state, &diags)
	if version == "" {
		return diags
	}
	v, err := tpu.ParseVersion(version)
	if err != nil || !v.CanMeet(tpu.SliceControllerMinVersion) {
		diags.AddAttributeError(attr, "GKE Version Too Old for the Slice Controller",
			fmt.Sprintf("slice_controller = true needs GKE %s or later (%s), and %s %s. Set min_master_version = %q (or a later "+
				"version the Rapid channel offers), or slice_controller = false.",
				tpu.SliceControllerMinVersion, dynamicSlicingRequirements, from, version, tpu.SliceControllerMinVersion.String()))
	}
	return diags
}

// plannedMasterVersion is the control plane version the plan leads to, and what it comes from
// for an error: the control plane's own when it stays (it meets min_master_version, or there is
// none), else min_master_version resolved in the release channel, or the channel's default for a
// new cluster without one. Where GKE's offer cannot be read it is min_master_version as written,
// or "" (not known: GKE decides at apply).
func (r *clusterResource) plannedMasterVersion(ctx context.Context, plan clusterResourceModel, state *clusterResourceModel, diags *diag.Diagnostics) (version, from string) {
	if plan.MinMasterVersion.IsUnknown() {
		return "", ""
	}
	written := plan.MinMasterVersion.ValueString()
	if state != nil && state.MasterVersion.ValueString() != "" {
		current := state.MasterVersion.ValueString()
		minimum, err := tpu.ParseVersion(written)
		if written == "" || (err == nil && meetsMinimum(current, minimum)) {
			return current, "the control plane runs"
		}
	}
	if written != "" {
		if _, err := tpu.ParseVersion(written); err != nil {
			return "", "" // checkMinMasterVersion says why
		}
	}
	if plan.Project.IsUnknown() || plan.Location.IsUnknown() || plan.ReleaseChannel.IsUnknown() {
		return written, "min_master_version is"
	}
	where := "planning raytpu_cluster (" + plan.clusterID().String() + ")"
	client := r.planClient(ctx, where, diags)
	if client == nil {
		return written, "min_master_version is"
	}
	if written != "" {
		resolved, err := r.resolveMasterVersion(ctx, client, plan)
		if err != nil || resolved == "" {
			return written, "min_master_version is" // checkMinMasterVersion reports an unoffered version
		}
		return resolved, fmt.Sprintf("min_master_version %q resolves in the %s channel to", written, plan.ReleaseChannel.ValueString())
	}
	sc, err := client.GetServerConfig(ctx, plan.Project.ValueString(), plan.Location.ValueString())
	if err != nil {
		tflog.Debug(ctx, "GKE versions not readable at plan time", map[string]any{"error": gke.Advised(err).Error()})
		return "", ""
	}
	channel := expandReleaseChannel(plan.ReleaseChannel).GetChannel()
	for _, c := range sc.GetChannels() {
		if c.GetChannel() == channel && c.GetDefaultVersion() != "" {
			return c.GetDefaultVersion(), fmt.Sprintf("without min_master_version the cluster gets the %s channel's default,", channel)
		}
	}
	return "", ""
}
