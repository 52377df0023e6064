package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/ray"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// What raytpu_ray_cluster and raytpu_ray_service validate and plan alike, for the RayCluster they
// are made of.

// validateRayConfig checks what the configuration alone decides: each worker group is either
// slices or a shape, the shape is a valid slice, the slices belong to cluster_id, names are
// unique, and what the Ray version table says about the image and single-host slices.
func validateRayConfig(ctx context.Context, m rayConfigModel, diags *diag.Diagnostics) {
	names, exact, known := rayNamesFor(m.RayVersion)
	if known && !exact {
		diags.AddAttributeWarning(path.Root("ray_version"), "Ray Version Outside The Table",
			fmt.Sprintf("ray_version %q is not in raytpu's table of Ray's TPU names (known releases from %s); raytpu assumes what Ray %s "+
				"does: slice_placement_group(%s). Check Ray's release notes.", m.RayVersion.ValueString(), strings.Join(ray.Known(), ", "),
				names.From, strings.Join(names.PlacementGroupArgs, ", ")))
	}
	if m.Image.IsNull() {
		diags.Append(tpuImageWarning(m.RayVersion, m.PythonVersion, "Set image, or python_version to one of those.")...)
	}
	if !m.Head.IsNull() && !m.Head.IsUnknown() {
		var h rayHeadModel
		if !m.Head.As(ctx, &h, basetypes.ObjectAsOptions{}).HasError() {
			validatePod(ctx, h.rayPodModel, path.Root("head"), false, diags)
			validateHeadService(ctx, h, diags)
		}
	}
	validateHistoryServer(ctx, m, diags)
	if m.WorkerGroups.IsNull() || m.WorkerGroups.IsUnknown() {
		return
	}
	var groups []rayWorkerGroupModel
	diags.Append(m.WorkerGroups.ElementsAs(ctx, &groups, false)...)
	if diags.HasError() {
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
				diags.AddAttributeError(p.AtName("name"), "Duplicate Worker Group",
					fmt.Sprintf("worker_groups[%d].name %q is also the name of worker_groups[%d]: group names must be unique.", i, g.Name.ValueString(), j))
			}
			seenGroup[g.Name.ValueString()] = i
		}
		validateGroupKind(g, p, diags)
		validatePod(ctx, g.rayPodModel, p, true, diags)
		for _, list := range []struct {
			attr string
			ids  types.List
		}{{"slices", g.Slices}, {"spare_slices", g.SpareSlices}} {
			if list.ids.IsNull() || list.ids.IsUnknown() {
				continue
			}
			var ids []types.String
			diags.Append(list.ids.ElementsAs(ctx, &ids, false)...)
			for k, id := range ids {
				if id.IsUnknown() || id.IsNull() {
					continue
				}
				sp := p.AtName(list.attr).AtListIndex(k)
				pool, err := gke.ParseNodePoolID(id.ValueString())
				if err != nil {
					diags.AddAttributeError(sp, "Invalid Slice ID", err.Error()+", the id attribute of raytpu_slice.")
					continue
				}
				if j, dup := seenSlice[pool.String()]; dup {
					diags.AddAttributeError(sp, "Slice Listed Twice",
						fmt.Sprintf("slice %s is already in worker_groups[%d]: a slice runs one replica of one group, and is either one "+
							"of its slices or one of its spare_slices.", pool, j))
				}
				seenSlice[pool.String()] = i
				if clusterKnown && pool.Cluster != cluster {
					diags.AddAttributeError(sp, "Slice Belongs To Another Cluster",
						fmt.Sprintf("slice %s is a node pool of cluster %s, not of cluster_id %s: a RayCluster runs on its own cluster's slices.",
							pool, pool.Cluster, cluster))
				}
			}
		}
		if s, ok := groupShape(g, p, diags); ok {
			if s.MultiHost && s.Generation.MultiHostPlacement == tpu.PlacementWorkloadPolicy {
				// Such a slice is placed by a Compute Engine workload policy (a raytpu_slice
				// makes one), which node auto-provisioning does not create (INFERRED: GKE
				// publishes no auto-provisioning support for it; the emulator's rules/nap.go skips it).
				diags.AddAttributeError(p.AtName("topology"), "Slice Not Auto-provisioned",
					fmt.Sprintf("%s %s is a multi-host slice placed by a Compute Engine workload policy, which node auto-provisioning "+
						"does not create, so the group's Pods would wait for ever. Create it as a raytpu_slice and list it in slices, or "+
						"use a single-host topology.", s.Generation.Name, s.Topology))
			} else if known {
				warnRayShape(s, names, p, diags)
			}
		}
	}
}

// rayPlanState is what the plan of an update compares with: the state's configuration and the
// worker_group_settings its RayCluster was applied with. With secondCluster, the update brings up a
// second RayCluster beside the state's (a RayService's upgrade), whose node pools all count anew.
type rayPlanState struct {
	config        rayConfigModel
	settings      types.Map
	secondCluster bool
}

// planRayConfig fills what the plan can know of a RayCluster (planRayOutputs) and checks its
// slices (checkRaySlices).
func (b *resourceBase) planRayConfig(ctx context.Context, config tfsdk.Config, plan *rayConfigModel, out *rayOutputsModel,
	prior *rayPlanState, k rayKind, diags *diag.Diagnostics) sliceChange {
	planRayOutputs(ctx, config, plan, out, diags)
	return b.checkRaySlices(ctx, *plan, prior, k, diags)
}

// imageDefaulted reports whether planRayOutputs gave plan the default image in place of the one
// Terraform proposed (the state's, once image is removed from the configuration). Terraform saw
// no change then, so the framework left every computed attribute as the state has it: the caller
// plans them as for any change of what the RayCluster is made of.
func imageDefaulted(ctx context.Context, proposed tfsdk.Plan, plan rayConfigModel) bool {
	var image types.String
	if proposed.GetAttribute(ctx, path.Root("image"), &image).HasError() {
		return false
	}
	return !image.IsUnknown() && !image.Equal(plan.Image)
}

// planRayOutputs fills what the plan can know of a RayCluster: the image, Ray's names, the head's
// addresses.
func planRayOutputs(ctx context.Context, config tfsdk.Config, plan *rayConfigModel, out *rayOutputsModel, diags *diag.Diagnostics) {
	// An image left out is the default always, not only when the plan has it unknown: Terraform
	// proposes the prior image for an Optional+Computed attribute whose configuration went null, so
	// removing image alone would otherwise plan nothing and keep the old image.
	var image types.String
	diags.Append(config.GetAttribute(ctx, path.Root("image"), &image)...)
	if image.IsNull() {
		if plan.RayVersion.IsUnknown() || plan.PythonVersion.IsUnknown() {
			plan.Image = types.StringUnknown()
		} else {
			plan.Image = types.StringValue(tpu.RayImage(plan.RayVersion.ValueString(), plan.PythonVersion.ValueString()))
		}
	}
	out.Ray = rayNamesObject(plan.RayVersion)
	planHistoryServer(ctx, plan, diags)
	if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
		svc, dash, client := rayAddresses(plan.Namespace.ValueString(), plan.Name.ValueString())
		out.HeadService, out.DashboardAddress, out.ClientAddress = types.StringValue(svc), types.StringValue(dash), types.StringValue(client)
	}
}

// checkRaySlices checks the slices of plan as GKE holds them, once the provider is configured: their
// shapes (a multislice group mixing them fails at plan time), the claims of other RayClusters and
// RayServices on them, and the node auto-provisioning limits that auto-provisioned groups need.
// prior is the state of an update, nil for a create. It reports the most a group's slices were
// replaced under their ids (slicesReplaced).
func (b *resourceBase) checkRaySlices(ctx context.Context, plan rayConfigModel, prior *rayPlanState, k rayKind, diags *diag.Diagnostics) (replaced sliceChange) {
	client := b.planClient(ctx, "planning raytpu_"+k.typeName(), diags)
	if client == nil || plan.WorkerGroups.IsUnknown() {
		return slicesSame
	}
	var groups []rayWorkerGroupModel
	diags.Append(plan.WorkerGroups.ElementsAs(ctx, &groups, false)...)
	var (
		shaped []shapedGroup
		before rayConfigModel
	)
	if prior != nil && !prior.secondCluster {
		before = prior.config
	}
	priorSlices, priorSpares := groupSlices(ctx, before), groupSpares(ctx, before)
	for i, g := range groups {
		p := path.Root("worker_groups").AtListIndex(i)
		if ids, ok := knownStrings(ctx, g.Slices); ok {
			// The shapes and claims of the pools there are; one that is not there yet is checked at apply.
			s, pools := sliceGroupShape(ctx, client, g.Name.ValueString(), ids, p.AtName("slices"), true, diags)
			var spares []groupSlice
			if spareIDs, ok := knownStrings(ctx, g.SpareSlices); ok {
				spares = spareGroupSlices(ctx, client, g.Name.ValueString(), spareIDs, s, p, true, diags)
			}
			if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
				claim := kube.SliceClaim{Namespace: plan.Namespace.ValueString(), Cluster: k.claimer(plan.Name.ValueString()), Group: g.Name.ValueString()}
				b.checkPlannedApart(claim, ids, p.AtName("slices"), diags)
				if spareIDs, ok := knownStrings(ctx, g.SpareSlices); ok {
					b.checkPlannedApart(claim, spareIDs, p.AtName("spare_slices"), diags)
				}
			}
			if prior != nil && slices.Equal(priorSlices[g.Name.ValueString()], ids) {
				claim := kube.SliceClaim{Namespace: prior.config.Namespace.ValueString(), Cluster: k.claimer(prior.config.Name.ValueString()),
					Group: g.Name.ValueString()}
				replaced = max(replaced, slicesReplaced(prior.settings, claim, len(ids), s, pools))
				for _, spare := range spares {
					// A spare replaced under its id (after a failed host) is claimed again; one the
					// state does not have is a change of configuration already.
					if !slices.Contains(priorSpares[g.Name.ValueString()], spare.id.String()) {
						continue
					}
					if held, ok := kube.ClaimOf(spare.labels); !ok || !sameGroupClaim(held, claim) {
						replaced = max(replaced, slicesUnclaimed)
					}
				}
			}
			if s != nil {
				shaped = append(shaped, shapedGroup{index: i, name: g.Name.ValueString(), slice: s, pools: poolNames(append(pools, spares...))})
				if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
					claim := kube.SliceClaim{Namespace: plan.Namespace.ValueString(), Cluster: k.claimer(plan.Name.ValueString()), Group: g.Name.ValueString()}
					checkClaims(claim, pools, p.AtName("slices"), diags)
					checkClaims(claim, spares, p.AtName("spare_slices"), diags)
				}
			}
		} else if s, ok := groupShape(g, p, &diag.Diagnostics{}); ok { // an invalid shape is ValidateConfig's to report
			shaped = append(shaped, shapedGroup{index: i, name: g.Name.ValueString(), slice: s})
		}
	}
	checkShapesApart(shaped, diags)
	if id, err := gke.ParseClusterID(plan.ClusterID.ValueString()); err == nil && !plan.ClusterID.IsUnknown() {
		checkNAPLimits(ctx, client, id, newNAPDemands(ctx, groups, before), diags)
	}
	return replaced
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
	case !g.SpareSlices.IsNull() && !hasSlices:
		diags.AddAttributeError(p.AtName("spare_slices"), "Spare Slices Without Slices",
			"spare_slices hold free slices for the replicas of slices: list the slices the group runs on in slices. An "+
				"auto-provisioned group (generation and topology) has no spares: node auto-provisioning creates a node pool when one is needed.")
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
	return types.ObjectValueMust(rayNamesAttrTypes, map[string]attr.Value{
		"table_version": types.StringValue(names.From.String()), "exact": types.BoolValue(exact),
		"slice_placement_group_args": stringListValue(names.PlacementGroupArgs),
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

// planReapply plans an apply that brings the RayCluster, its Pods and its slices' claims in line
// with the configuration and the slices: what it reports is known after.
func planReapply(plan *rayOutputsModel) {
	plan.InSync = types.BoolValue(true)
	plan.Status, plan.Healthy = types.StringUnknown(), types.BoolUnknown()
	plan.Placement = types.MapUnknown(placementType.ElemType)
	plan.GroupSlices = types.MapUnknown(types.ObjectType{AttrTypes: groupSlicesAttrTypes})
	plan.GroupSettings = types.MapUnknown(types.ObjectType{AttrTypes: groupSettingsAttrTypes})
}

// sliceChange is how the slices of a group differ from those the state's RayCluster was applied to,
// though their ids are the same.
type sliceChange int

const (
	slicesSame sliceChange = iota
	// slicesUnclaimed: a pool lacks the claim raytpu gave its predecessor (recreated in the same
	// shape); applying again claims it.
	slicesUnclaimed
	// slicesReshaped: a pool of the ids is gone or of another shape than the state's
	// worker_group_settings say: the RayCluster's spec changes with it.
	slicesReshaped
)

// slicesReplaced says how the slices of the claim's group differ from those the state's RayCluster
// was applied to (settings, its worker_group_settings), want ids of them. A group the state does
// not have is a change of configuration already.
func slicesReplaced(settings types.Map, claim kube.SliceClaim, want int, shape *tpu.Slice, slices []groupSlice) sliceChange {
	if settings.IsNull() || settings.IsUnknown() {
		return slicesSame
	}
	prior, ok := settings.Elements()[claim.Group].(types.Object)
	if !ok || prior.IsNull() || prior.IsUnknown() {
		return slicesSame
	}
	if shape == nil || len(slices) != want {
		return slicesReshaped
	}
	attrs := prior.Attributes()
	intOf := func(name string) int64 {
		v, _ := attrs[name].(types.Int64)
		return v.ValueInt64()
	}
	topology, _ := attrs["topology"].(types.String)
	if intOf("hosts_per_slice") != int64(shape.Hosts) || intOf("chips_per_host") != int64(shape.ChipsPerHost()) ||
		topology.ValueString() != shape.Topology.String() {
		return slicesReshaped
	}
	for _, s := range slices {
		if held, ok := kube.ClaimOf(s.labels); !ok || !sameGroupClaim(held, claim) {
			return slicesUnclaimed
		}
	}
	return slicesSame
}

// groupSlices are the slice ids of each worker group of m whose slices are known.
func groupSlices(ctx context.Context, m rayConfigModel) map[string][]string {
	return groupIDs(ctx, m, func(g rayWorkerGroupModel) types.List { return g.Slices })
}

// groupSpares are the spare slice ids of each worker group of m whose spares are known.
func groupSpares(ctx context.Context, m rayConfigModel) map[string][]string {
	return groupIDs(ctx, m, func(g rayWorkerGroupModel) types.List { return g.SpareSlices })
}

func groupIDs(ctx context.Context, m rayConfigModel, list func(rayWorkerGroupModel) types.List) map[string][]string {
	out := map[string][]string{}
	var groups []rayWorkerGroupModel
	if m.WorkerGroups.IsNull() || m.WorkerGroups.IsUnknown() || m.WorkerGroups.ElementsAs(ctx, &groups, false).HasError() {
		return out
	}
	for _, g := range groups {
		if ids, ok := knownStrings(ctx, list(g)); ok {
			out[g.Name.ValueString()] = ids
		}
	}
	return out
}

// sameGroupClaim reports whether held is a claim of want's group, of whichever generation of a
// RayService: the plan does not know which generation the RayService selects now, and its Read
// judges that (resolvedInSync).
func sameGroupClaim(held, want kube.SliceClaim) bool {
	return held.SameRayCluster(want) && held.Group == want.Group
}
