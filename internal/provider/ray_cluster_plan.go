package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/ray"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// ValidateConfig checks what the configuration alone decides: each worker group is either slices
// or a shape, the shape is a valid slice, the slices belong to cluster_id, names are unique, and
// what the Ray version table says about the image and single-host slices.
func (r *rayClusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m rayClusterModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	names, exact, known := rayNamesFor(m.RayVersion)
	if known && !exact {
		resp.Diagnostics.AddAttributeWarning(path.Root("ray_version"), "Ray Version Outside The Table",
			fmt.Sprintf("ray_version %q is not in raytpu's table of Ray's TPU names (known releases from %s); raytpu assumes what Ray %s "+
				"does: slice_placement_group(%s). Check Ray's release notes.", m.RayVersion.ValueString(), strings.Join(ray.Known(), ", "),
				names.From, strings.Join(names.PlacementGroupArgs, ", ")))
	}
	if m.Image.IsNull() {
		resp.Diagnostics.Append(tpuImageWarning(m.RayVersion, m.PythonVersion, "Set image, or python_version to one of those.")...)
	}
	if !m.Head.IsNull() && !m.Head.IsUnknown() {
		var h rayHeadModel
		if !m.Head.As(ctx, &h, basetypes.ObjectAsOptions{}).HasError() {
			validatePod(ctx, h.rayPodModel, path.Root("head"), false, &resp.Diagnostics)
			validateHeadService(ctx, h, &resp.Diagnostics)
		}
	}
	if m.WorkerGroups.IsNull() || m.WorkerGroups.IsUnknown() {
		return
	}
	var groups []rayWorkerGroupModel
	resp.Diagnostics.Append(m.WorkerGroups.ElementsAs(ctx, &groups, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cluster, clusterKnown := gke.ClusterID{}, false
	if !m.ClusterID.IsNull() && !m.ClusterID.IsUnknown() {
		c, err := gke.ParseClusterID(m.ClusterID.ValueString())
		cluster, clusterKnown = c, err == nil
	}
	seenGroup := map[string]int{}
	seenSlice := map[string]int{}
	for i, g := range groups {
		p := path.Root("worker_groups").AtListIndex(i)
		if !g.Name.IsUnknown() && !g.Name.IsNull() {
			if j, dup := seenGroup[g.Name.ValueString()]; dup {
				resp.Diagnostics.AddAttributeError(p.AtName("name"), "Duplicate Worker Group",
					fmt.Sprintf("worker_groups[%d].name %q is also the name of worker_groups[%d]: group names must be unique.", i, g.Name.ValueString(), j))
			}
			seenGroup[g.Name.ValueString()] = i
		}
		validateGroupKind(g, p, &resp.Diagnostics)
		validatePod(ctx, g.rayPodModel, p, true, &resp.Diagnostics)
		if !g.Slices.IsNull() && !g.Slices.IsUnknown() {
			var ids []types.String
			resp.Diagnostics.Append(g.Slices.ElementsAs(ctx, &ids, false)...)
			for k, id := range ids {
				if id.IsUnknown() || id.IsNull() {
					continue
				}
				sp := p.AtName("slices").AtListIndex(k)
				pool, err := gke.ParseNodePoolID(id.ValueString())
				if err != nil {
					resp.Diagnostics.AddAttributeError(sp, "Invalid Slice ID", err.Error()+", the id attribute of raytpu_slice.")
					continue
				}
				if j, dup := seenSlice[pool.String()]; dup {
					resp.Diagnostics.AddAttributeError(sp, "Slice In Two Worker Groups",
						fmt.Sprintf("slice %s is already in worker_groups[%d]: a slice runs one replica of one group.", pool, j))
				}
				seenSlice[pool.String()] = i
				if clusterKnown && pool.Cluster != cluster {
					resp.Diagnostics.AddAttributeError(sp, "Slice Belongs To Another Cluster",
						fmt.Sprintf("slice %s is a node pool of cluster %s, not of cluster_id %s: a RayCluster runs on its own cluster's slices.",
							pool, pool.Cluster, cluster))
				}
			}
		}
		if s, ok := groupShape(g, p, &resp.Diagnostics); ok {
			if s.MultiHost && s.Generation.MultiHostPlacement == tpu.PlacementWorkloadPolicy {
				// Such a slice is placed by a Compute Engine workload policy (a raytpu_slice
				// makes one), which node auto-provisioning does not create (INFERRED: GKE
				// publishes no auto-provisioning support for it; the emulator's rules/nap.go skips it).
				resp.Diagnostics.AddAttributeError(p.AtName("topology"), "Slice Not Auto-provisioned",
					fmt.Sprintf("%s %s is a multi-host slice placed by a Compute Engine workload policy, which node auto-provisioning "+
						"does not create, so the group's Pods would wait for ever. Create it as a raytpu_slice and list it in slices, or "+
						"use a single-host topology.", s.Generation.Name, s.Topology))
			} else if known {
				warnRayShape(s, names, p, &resp.Diagnostics)
			}
		}
	}
}

// validateGroupKind requires slices or generation and topology, and the shape-only settings only
// with a shape.
func validateGroupKind(g rayWorkerGroupModel, p path.Path, diags *diag.Diagnostics) {
	hasSlices := !g.Slices.IsNull()
	hasShape := !g.Generation.IsNull() || !g.Topology.IsNull()
	switch {
	case hasSlices && hasShape:
		diags.AddAttributeError(p, "Conflicting Worker Group Source",
			"a worker group takes either slices (existing raytpu_slice ids) or generation and topology (an auto-provisioned shape), not both.")
	case !hasSlices && !hasShape:
		diags.AddAttributeError(p, "Missing Worker Group Source",
			"a worker group needs slices (raytpu_slice ids) or generation and topology (for example generation = \"v6e\", topology = \"2x4\").")
	case hasShape && (g.Generation.IsNull() || g.Topology.IsNull()):
		diags.AddAttributeError(p, "Incomplete Worker Group Shape", "an auto-provisioned worker group needs both generation and topology.")
	case hasSlices && (!g.Replicas.IsNull() || !g.ChipsPerHost.IsNull()):
		diags.AddAttributeError(p, "Setting Not For Slices",
			"replicas and chips_per_host apply to auto-provisioned groups only: a slices group has one replica per slice and the slices' chips per host.")
	}
}

// groupShape derives the slice of an auto-provisioned group when its settings are known.
func groupShape(g rayWorkerGroupModel, p path.Path, diags *diag.Diagnostics) (*tpu.Slice, bool) {
	if g.Generation.IsNull() || g.Topology.IsNull() || g.Generation.IsUnknown() || g.Topology.IsUnknown() || g.ChipsPerHost.IsUnknown() {
		return nil, false
	}
	s, err := tpu.NewSlice(g.Generation.ValueString(), g.Topology.ValueString(), int(g.ChipsPerHost.ValueInt64()))
	if err != nil {
		diags.AddAttributeError(p, "Invalid Worker Group Shape", fmt.Sprintf("generation %q topology %q: %s.",
			g.Generation.ValueString(), g.Topology.ValueString(), err))
		return nil, false
	}
	return s, true
}

// warnRayShape warns when Ray's slice_placement_group cannot reserve the slice.
func warnRayShape(s *tpu.Slice, names ray.Names, p path.Path, diags *diag.Diagnostics) {
	if !s.RayTopologySupported() {
		diags.AddAttributeWarning(p, "Topology Unknown To Ray", fmt.Sprintf("%s %s provisions on GKE, but ray.util.tpu.slice_placement_group "+
			"rejects it (not in Ray's VALID_TPU_TOPOLOGY): reserve its hosts with resources instead.", s.Generation.Name, s.Topology))
	}
	if !s.MultiHost && !names.SingleHostSlices {
		diags.AddAttributeWarning(p, "Single-Host Slice Not Reservable", fmt.Sprintf("%s %s is a single-host slice; slice_placement_group of Ray %s "+
			"cannot reserve it (single-host TPU nodes lack the unique slice label). Schedule on it with resources={\"TPU\": %d}.",
			s.Generation.Name, s.Topology, names.From, s.ChipsPerHost()))
	}
}

// ModifyPlan fills what the plan can know (image, Ray names, addresses), plans a new apply when
// the RayCluster was changed outside Terraform, and, when the slices are known, checks their
// shapes against GKE so that a multislice group mixing shapes fails at plan time.
func (r *rayClusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var plan rayClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.Image.IsUnknown() && !plan.RayVersion.IsUnknown() && !plan.PythonVersion.IsUnknown() {
		var config types.String
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("image"), &config)...)
		if config.IsNull() {
			plan.Image = types.StringValue(tpu.RayImage(plan.RayVersion.ValueString(), plan.PythonVersion.ValueString()))
		}
	}
	plan.Ray = rayNamesObject(plan.RayVersion)
	if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
		svc, dash, client := rayAddresses(plan.Namespace.ValueString(), plan.Name.ValueString())
		plan.HeadService, plan.DashboardAddress, plan.ClientAddress = types.StringValue(svc), types.StringValue(dash), types.StringValue(client)
	}
	var state rayClusterModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		plannedRestarts(ctx, state, plan).warn(&resp.Diagnostics)
		if !state.InSync.IsNull() && !state.InSync.ValueBool() {
			// Not what the configuration and the slices ask for (inSync): plan an apply that brings
			// the RayCluster, its Pods and its slices' claims in line.
			planReapply(&plan)
		}
	} else {
		plan.InSync = types.BoolValue(true)
	}
	if client := r.planClient(ctx, "planning raytpu_ray_cluster", &resp.Diagnostics); client != nil && !plan.WorkerGroups.IsUnknown() {
		var groups []rayWorkerGroupModel
		resp.Diagnostics.Append(plan.WorkerGroups.ElementsAs(ctx, &groups, false)...)
		var shaped []shapedGroup
		replaced := false
		for i, g := range groups {
			p := path.Root("worker_groups").AtListIndex(i)
			if ids, ok := knownStrings(ctx, g.Slices); ok {
				// The shapes and claims of the pools there are; one that is not there yet is checked at apply.
				s, slices := sliceGroupShape(ctx, client, g.Name.ValueString(), ids, p, true, &resp.Diagnostics)
				if !req.State.Raw.IsNull() && slicesReplaced(state, g.Name.ValueString(), len(ids), s, slices) {
					replaced = true
				}
				if s != nil {
					shaped = append(shaped, shapedGroup{index: i, name: g.Name.ValueString(), slice: s, pools: poolNames(slices)})
					if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
						claim := kube.SliceClaim{Namespace: plan.Namespace.ValueString(), Cluster: plan.Name.ValueString(), Group: g.Name.ValueString()}
						checkClaims(claim, slices, p, &resp.Diagnostics)
					}
				}
			} else if s, ok := groupShape(g, p, &diag.Diagnostics{}); ok { // an invalid shape is ValidateConfig's to report
				shaped = append(shaped, shapedGroup{index: i, name: g.Name.ValueString(), slice: s})
			}
		}
		checkShapesApart(shaped, &resp.Diagnostics)
		if replaced {
			// A slice replaced keeps its id, so without this the plan would be empty, and at apply
			// Terraform would skip the update planned while the id was unknown.
			planReapply(&plan)
		}
		if id, err := gke.ParseClusterID(plan.ClusterID.ValueString()); err == nil && !plan.ClusterID.IsUnknown() {
			checkNAPLimits(ctx, client, id, newNAPDemands(ctx, groups, state), &resp.Diagnostics)
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// rayNamesFor looks the Ray version up; known is false while it is unknown or unparsable.
func rayNamesFor(v types.String) (names ray.Names, exact, known bool) {
	if v.IsUnknown() {
		return ray.Names{}, false, false
	}
	parsed, err := ray.ParseVersion(valueOr(v, defaultRayVersion))
	if err != nil {
		return ray.Names{}, false, false
	}
	names, exact = ray.Lookup(parsed)
	return names, exact, true
}

func rayNamesObject(v types.String) types.Object {
	names, exact, known := rayNamesFor(v)
	if !known {
		return types.ObjectUnknown(rayNamesAttrTypes)
	}
	args := make([]attr.Value, len(names.PlacementGroupArgs))
	for i, a := range names.PlacementGroupArgs {
		args[i] = types.StringValue(a)
	}
	return types.ObjectValueMust(rayNamesAttrTypes, map[string]attr.Value{
		"table_version": types.StringValue(names.From.String()), "exact": types.BoolValue(exact),
		"slice_placement_group_args": types.ListValueMust(types.StringType, args),
		"chips_per_vm":               types.BoolValue(names.ChipsPerVM), "single_host_slices": types.BoolValue(names.SingleHostSlices),
		"source": types.StringValue(names.Source),
	})
}

// rayAddresses are KubeRay's head service name (utils.GenerateHeadServiceName: <cluster>-head-svc)
// and the dashboard (8265) and client (10001) addresses behind it (KubeRay's default ports).
func rayAddresses(namespace, name string) (svc, dashboard, client string) {
	svc = name + "-head-svc"
	host := fmt.Sprintf("%s.%s.svc.cluster.local", svc, namespace)
	return svc, host + ":8265", "ray://" + host + ":10001"
}

// knownStrings reads a list of strings when it and every element are known.
func knownStrings(ctx context.Context, l types.List) ([]string, bool) {
	if l.IsNull() || l.IsUnknown() {
		return nil, false
	}
	var vals []types.String
	if l.ElementsAs(ctx, &vals, false).HasError() {
		return nil, false
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		if v.IsUnknown() || v.IsNull() {
			return nil, false
		}
		out[i] = v.ValueString()
	}
	return out, true
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// quantityValidator accepts a Kubernetes resource quantity such as 500m, 2 or 8Gi.
type quantityValidator struct{}

func (quantityValidator) Description(context.Context) string {
	return "must be a Kubernetes quantity such as 500m, 2 or 8Gi"
}
func (v quantityValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (quantityValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := k8sresource.ParseQuantity(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Quantity",
			fmt.Sprintf("%q is not a Kubernetes quantity: use a number with an optional suffix, such as 500m, 2 or 8Gi.", req.ConfigValue.ValueString()))
	}
}

// planReapply plans an apply that brings the RayCluster, its Pods and its slices' claims in line
// with the configuration and the slices: what it reports is known after.
func planReapply(plan *rayClusterModel) {
	plan.InSync = types.BoolValue(true)
	plan.Status, plan.Healthy = types.StringUnknown(), types.BoolUnknown()
	plan.Placement = types.MapUnknown(placementType.ElemType)
	plan.GroupSettings = types.MapUnknown(types.ObjectType{AttrTypes: groupSettingsAttrTypes})
}

// slicesReplaced reports whether the slices of group are not those the state's RayCluster was
// applied to, though their ids are the same: a pool of want ids is gone, is of another shape than
// the state's worker_group_settings say, or lacks the claim raytpu gave its predecessor. A group
// the state does not have is a change of configuration already.
func slicesReplaced(state rayClusterModel, group string, want int, shape *tpu.Slice, slices []groupSlice) bool {
	if state.GroupSettings.IsNull() || state.GroupSettings.IsUnknown() {
		return false
	}
	prior, ok := state.GroupSettings.Elements()[group].(types.Object)
	if !ok || prior.IsNull() || prior.IsUnknown() {
		return false
	}
	if shape == nil || len(slices) != want {
		return true
	}
	attrs := prior.Attributes()
	intOf := func(name string) int64 {
		v, _ := attrs[name].(types.Int64)
		return v.ValueInt64()
	}
	topology, _ := attrs["topology"].(types.String)
	if intOf("hosts_per_slice") != int64(shape.Hosts) || intOf("chips_per_host") != int64(shape.ChipsPerHost()) ||
		topology.ValueString() != shape.Topology.String() {
		return true
	}
	claim := kube.SliceClaim{Namespace: state.Namespace.ValueString(), Cluster: state.Name.ValueString(), Group: group}
	for _, s := range slices {
		if held, ok := kube.ClaimOf(s.labels); !ok || held != claim {
			return true
		}
	}
	return false
}
