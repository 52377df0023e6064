package provider

import (
	"context"
	"fmt"
	"slices"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

func (r *sliceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config sliceResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	s, diags := resolveShape(config.configShape())
	resp.Diagnostics.Append(diags...)
	if s == nil {
		return
	}
	if !s.RayTopologySupported() {
		resp.Diagnostics.AddAttributeWarning(path.Root("topology"), "Topology Not Supported by Ray's Slice Placement Group",
			fmt.Sprintf("GKE provisions %s %s, but ray.util.tpu.slice_placement_group does not accept it, so Ray jobs must "+
				"reserve its hosts another way. Shapes Ray accepts are listed in the provider's TPU reference.", s.Generation.Name, s.Topology))
	}
	if needsPolicy := s.Placement == tpu.PlacementWorkloadPolicy; !needsPolicy && !config.PlacementPolicyName.IsNull() {
		why := fmt.Sprintf("%s %s is placed as %s", s.Generation.Name, s.Topology, s.Placement)
		if !s.MultiHost {
			// A workload policy carries a topology, which GKE refuses on one host (xpk#825).
			why = fmt.Sprintf("%s %s is one host, and GKE refuses the topology a workload policy carries on a single-host "+
				"pool (\"TPU topology can't be specified with single-host TPU slice pool\")", s.Generation.Name, s.Topology)
		}
		resp.Diagnostics.AddAttributeError(path.Root("placement_policy_name"), "Placement Policy Not Applicable",
			fmt.Sprintf("placement_policy_name applies only to multi-host tpu7x slices; %s. Remove it.", why))
	}
	resp.Diagnostics.Append(validateCapacity(ctx, config, s)...)
	resp.Diagnostics.Append(tpuImageWarning(config.RayVersion, config.PythonVersion,
		"ray.image and kuberay_worker_group name an image that does not exist: set python_version to one of those, or use an image of your own.")...)
	if v := config.NodeVersion; !v.IsNull() && !v.IsUnknown() {
		choices, _ := config.capacityChoices(ctx)
		resp.Diagnostics.Append(checkNodeVersion(v.ValueString(), s, slices.ContainsFunc(choices, capacityChoice.flexible))...)
	}
}

// checkNodeVersion refuses a node version that cannot meet the generation's minimum, or, with
// flex-start capacity (which queued provisioning uses for TPUs), the minimum of flex-start TPUs.
func checkNodeVersion(version string, s *tpu.Slice, flexible bool) diag.Diagnostics {
	var diags diag.Diagnostics
	v, err := tpu.ParseVersion(version)
	if err != nil {
		diags.AddAttributeError(path.Root("node_version"), "Invalid GKE Version", err.Error()+".")
		return diags
	}
	if flexible && !v.CanMeet(tpu.FlexStartMinVersion) {
		diags.AddAttributeError(path.Root("node_version"), "GKE Version Too Old for Flex-Start",
			fmt.Sprintf("node version %s is below %s, the first GKE version that runs TPUs on flex-start capacity, which "+
				"this slice may use (flex_start, queued_provisioning or a flex-start fallback entry). Use %s or later.",
				v, tpu.FlexStartMinVersion, tpu.FlexStartMinVersion))
	}
	if !v.CanMeet(s.Generation.MinGKEVersion) {
		diags.AddAttributeError(path.Root("node_version"), "GKE Version Too Old for TPU Generation",
			fmt.Sprintf("node version %s is below %s, the first GKE version that runs %s. Use %s or later (a newer cluster "+
				"version, or set node_version explicitly).", v, s.Generation.MinGKEVersion, s.Generation.DisplayName, s.Generation.MinGKEVersion))
	}
	return diags
}

// resolveNodeVersion is the exact version to request for the slice on cluster (see node_version),
// checked against the generation's minimum. The versions on offer are read only when node_version
// names one.
func (r *sliceResource) resolveNodeVersion(ctx context.Context, client *gke.Client, id gke.ClusterID, cluster *containerpb.Cluster,
	written types.String, s *tpu.Slice, flexible bool) (string, diag.Diagnostics) {
	var diags diag.Diagnostics
	var offered []string
	if v := written.ValueString(); v != "" && v != "-" {
		sc, err := client.GetServerConfig(ctx, id.Project, id.Location)
		if err != nil {
			diags.AddAttributeError(path.Root("node_version"), "GKE Versions Unknown",
				fmt.Sprintf("reading the GKE versions offered in %s: %s", id.Location, gke.WithAdvice(err)))
			return "", diags
		}
		offered = sc.GetValidNodeVersions()
	}
	version, err := gke.ResolveNodeVersion(written.ValueString(), cluster.GetCurrentMasterVersion(), offered)
	if err != nil {
		diags.AddAttributeError(path.Root("node_version"), "Unsupported GKE Version", fmt.Sprintf("%s (cluster %s).", err, id))
		return "", diags
	}
	diags.Append(checkNodeVersion(version, s, flexible)...)
	return version, diags
}

// checkOffered refuses, before the cluster exists, a node_version that no offered node version of
// the location matches.
func (r *sliceResource) checkOffered(ctx context.Context, client *gke.Client, id gke.ClusterID, written string) diag.Diagnostics {
	var diags diag.Diagnostics
	sc, err := client.GetServerConfig(ctx, id.Project, id.Location)
	if err != nil {
		if !reportUnreachable(&diags, fmt.Sprintf("reading the GKE versions offered in %s", id.Location), err) {
			tflog.Debug(ctx, "GKE versions not readable at plan time", map[string]any{"location": id.Location, "error": err.Error()})
		}
		return diags
	}
	if _, err := gke.ResolveMasterVersion(written, sc.GetValidNodeVersions(), "for nodes in "+id.Location); err != nil {
		diags.AddAttributeError(path.Root("node_version"), "Unsupported GKE Version", fmt.Sprintf("%s.", err))
	}
	return diags
}

// shapeReplacement replaces a slice whose shape changes (ModifyPlan).
var shapeReplacement = PlanReplacement{
	Attributes: []path.Path{path.Root("topology"), path.Root("generation"), path.Root("accelerator_type"), path.Root("chips_per_host")},
	When:       "when the shape changes: its generation, topology or machine type; the same shape written another way (an alias, or `accelerator_type`) does not",
}

func (r *sliceResource) PlanReplacements() []PlanReplacement {
	return []PlanReplacement{shapeReplacement, capacityReplacement, runDurationRemoval, unhealthyReplacement}
}

// ModifyPlan makes every derived output known in the plan, replaces the slice when its shape
// changes (not when the same shape is written another way), checks a version known only from the
// cluster, and, with replace_unhealthy, replaces a slice that failed (see replacementCause).
func (r *sliceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var plan, config sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *sliceResourceModel
	if !req.State.Raw.IsNull() {
		state = &sliceResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	s, _ := resolveShape(config.configShape())
	if s == nil {
		// Unknown until apply: the outputs are too.
		plan.setDerivedUnknown()
		if config.AcceleratorType.IsNull() {
			plan.AcceleratorType = types.StringUnknown()
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if state != nil {
		before, _ := resolveShape(state.shape())
		if before == nil || before.Generation != s.Generation || before.Topology != s.Topology || before.MachineType != s.MachineType {
			resp.RequiresReplace = append(resp.RequiresReplace, shapeReplacement.Attributes...)
		}
	}
	if config.Generation.IsNull() {
		plan.Generation = types.StringValue(s.Generation.Name)
	}
	if config.Topology.IsNull() {
		plan.Topology = types.StringValue(s.Topology.String())
	}
	if config.ChipsPerHost.IsNull() {
		plan.ChipsPerHost = types.Int64Value(int64(s.ChipsPerHost()))
	}
	if config.AcceleratorType.IsNull() {
		plan.AcceleratorType = types.StringValue(s.AcceleratorType())
	}
	resp.Diagnostics.Append(plan.deriveOutputs(ctx, s)...)
	planPlacementPolicy(&plan, config, s)
	planCapacity(ctx, config, &plan, state, resp)
	if state == nil || !plan.NodeVersion.Equal(state.NodeVersion) || !plan.AutoRepair.Equal(state.AutoRepair) ||
		!plan.AutoUpgrade.Equal(state.AutoUpgrade) || !plan.Fallback.Equal(state.Fallback) || !plan.Zone.Equal(state.Zone) {
		r.planFromCluster(ctx, &plan, state, s, resp)
	}
	r.planReservations(ctx, &plan, state, s, resp)
	planReplaceUnhealthy(&plan, state, resp)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planFromCluster fills zone and current_node_version from the cluster when it already exists, so
// that they are known, and checked, in the plan, with the rules that depend on the cluster. For a
// slice that exists (state), a node_version that now resolves to another version than the slice
// runs is an update of its nodes in place; one that resolves to the same, such as 1.34 for
// 1.34.0-gke.2201000, changes nothing.
func (r *sliceResource) planFromCluster(ctx context.Context, plan, state *sliceResourceModel, s *tpu.Slice, resp *resource.ModifyPlanResponse) {
	if r.data == nil || plan.Cluster.IsUnknown() {
		return
	}
	id, err := gke.ParseClusterID(plan.Cluster.ValueString())
	if err != nil {
		return
	}
	if plan.Zone.IsUnknown() {
		zone, ok := id.Zone()
		if !ok {
			resp.Diagnostics.Append(missingZone(id, s))
			return
		}
		plan.Zone = types.StringValue(zone)
	}
	choices, _ := plan.capacityChoices(ctx)
	if plan.capacityKnown(ctx) {
		resp.Diagnostics.Append(zoneRegionCheck(choices, id)...)
	}
	flexible := slices.ContainsFunc(choices, capacityChoice.flexible)
	if plan.NodeVersion.IsUnknown() {
		return
	}
	client := r.planClient(ctx, fmt.Sprintf("planning raytpu_slice on %s", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	cluster, err := client.GetCluster(ctx, id)
	switch {
	case gke.IsNotFound(err):
		// The cluster is created in the same apply: apply resolves the version.
		tflog.Debug(ctx, "cluster not there yet at plan time", map[string]any{"cluster": id.String()})
		if v := plan.NodeVersion.ValueString(); v != "" && v != "-" {
			resp.Diagnostics.Append(r.checkOffered(ctx, client, id, v)...)
		}
		return
	case reportUnreachable(&resp.Diagnostics, fmt.Sprintf("planning raytpu_slice on %s", id), err):
		return
	case err != nil:
		resp.Diagnostics.AddAttributeError(path.Root("cluster"), "Error Reading Cluster",
			fmt.Sprintf("planning raytpu_slice on %s: %s", id, gke.WithAdvice(err)))
		return
	}
	resp.Diagnostics.Append(checkManagement(*plan, channelName(cluster), choices[0].flexible())...)
	if state != nil && plan.NodeVersion.Equal(state.NodeVersion) {
		return
	}
	version, diags := r.resolveNodeVersion(ctx, client, id, cluster, plan.NodeVersion, s, flexible)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	plan.CurrentNodeVersion = types.StringValue(version)
}

// missingZone is the error of a slice without zone on a regional cluster, whose location names no
// zone to put it in.
func missingZone(id gke.ClusterID, s *tpu.Slice) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(path.Root("zone"), "Missing Zone",
		fmt.Sprintf("%s is a regional cluster: set zone to one of the zones of %s that offers %s.", id, id.Location, s.Generation.DisplayName))
}

// planPlacementPolicy plans the workload policy of a multi-host tpu7x slice whose configuration
// names none: the one raytpu makes for it, named after its node pool (unknown until the cluster
// and the name are known).
func planPlacementPolicy(plan *sliceResourceModel, config sliceResourceModel, s *tpu.Slice) {
	switch {
	case !config.PlacementPolicyName.IsNull():
	case s.Placement != tpu.PlacementWorkloadPolicy:
		plan.PlacementPolicyName = types.StringNull()
	case plan.PlacementPolicyName.IsUnknown() && !plan.Cluster.IsUnknown() && !plan.Name.IsUnknown():
		if cluster, err := gke.ParseClusterID(plan.Cluster.ValueString()); err == nil {
			plan.PlacementPolicyName = types.StringValue(workloadPolicyName(gke.NodePoolID{Cluster: cluster, Name: plan.Name.ValueString()}))
		}
	}
}

// channelName is the release channel a cluster is enrolled in, "" for none.
func channelName(cluster *containerpb.Cluster) string {
	switch c := cluster.GetReleaseChannel().GetChannel(); c {
	case containerpb.ReleaseChannel_UNSPECIFIED: //nolint:staticcheck // GKE reports it for clusters without a channel
		return ""
	default:
		return c.String()
	}
}
