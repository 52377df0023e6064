package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// resolvedGroup is a worker group with its shape known, and its slices as GKE holds them.
type resolvedGroup struct {
	kube.RayWorkerGroup
	slice  *tpu.Slice
	slices []groupSlice
}

// resolveRayConfig turns the configuration into the RayCluster to apply, reading the slices from
// GKE; the claims of its groups name claimer (rayKind.claimer).
func resolveRayConfig(ctx context.Context, client *gke.Client, m rayConfigModel, claimer string, diags *diag.Diagnostics) (kube.RayClusterSpec, []resolvedGroup) {
	cfg, d := rayConfigOf(ctx, m)
	diags.Append(d...)
	if diags.HasError() {
		return kube.RayClusterSpec{}, nil
	}
	names, _, _ := rayNamesFor(m.RayVersion)
	var (
		groups []resolvedGroup
		shaped []shapedGroup
	)
	for i, g := range cfg.Groups {
		p := path.Root("worker_groups").AtListIndex(i)
		pod, err := g.settings()
		if err != nil {
			diags.AddAttributeError(p, "Invalid Ray Pod Setting", err.Error()+".")
			continue
		}
		rg := resolvedGroup{RayWorkerGroup: kube.RayWorkerGroup{
			Name: g.Name, CPU: deref(g.CPU), Memory: deref(g.Memory), RayStartParams: g.RayStartParams, Pod: pod,
		}}
		if len(g.Slices) > 0 {
			s, active := sliceGroupShape(ctx, client, g.Name, g.Slices, p.AtName("slices"), false, diags)
			for k, id := range g.SpareSlices {
				if slices.Contains(g.Slices, id) { // the ids were unknown when the plan was checked
					diags.AddAttributeError(p.AtName("spare_slices").AtListIndex(k), "Slice Listed Twice",
						fmt.Sprintf("slice %s is one of the slices of worker group %q: a slice is either one of its slices or one of its spare_slices.", id, g.Name))
				}
			}
			spares := spareGroupSlices(ctx, client, g.Name, g.SpareSlices, s, p, false, diags)
			if s == nil || (len(g.SpareSlices) > 0 && spares == nil) {
				continue
			}
			claim := kube.SliceClaim{Namespace: m.Namespace.ValueString(), Cluster: claimer, Group: g.Name}
			checkClaims(claim, active, p.AtName("slices"), diags)
			checkClaims(claim, spares, p.AtName("spare_slices"), diags)
			// One replica per slice of slices; the spares are claimed alike, so KubeRay's
			// replacement of a failed replica may land on one at once.
			rg.slice, rg.slices, rg.Replicas, rg.Claim = s, append(active, spares...), len(active), &claim
			warnRayShape(s, names, p, diags)
		} else {
			s, err := tpu.NewSlice(deref(g.Generation), deref(g.Topology), int(derefInt(g.ChipsPerHost)))
			if err != nil {
				diags.AddAttributeError(p, "Invalid Worker Group Shape", err.Error()+".")
				continue
			}
			rg.slice, rg.Replicas = s, 1
			if g.Replicas != nil {
				rg.Replicas = int(*g.Replicas)
			}
		}
		rg.NumOfHosts, rg.ChipsPerHost, rg.NodeSelector = rg.slice.Hosts, rg.slice.ChipsPerHost(), rg.slice.NodeSelector()
		if rg.Replicas > 1 && rg.NumOfHosts > 1 {
			// Multislice: the TPU webhook gives single-host Pods no host name, so its coordinator
			// address would name nobody there.
			rg.MegascaleSlices = rg.Replicas
		}
		groups = append(groups, rg)
		shaped = append(shaped, shapedGroup{index: i, name: g.Name, slice: rg.slice, pools: poolNames(rg.slices)})
	}
	checkShapesApart(shaped, diags)
	annotation, _ := json.Marshal(cfg)
	headPod, err := cfg.Head.settings()
	if err != nil {
		diags.AddAttributeError(path.Root("head"), "Invalid Ray Pod Setting", err.Error()+".")
	}
	spec := kube.RayClusterSpec{
		Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(),
		RayVersion: m.RayVersion.ValueString(), Image: m.Image.ValueString(),
		Head: kube.RayHead{CPU: cfg.Head.CPU, Memory: cfg.Head.Memory, ServiceType: kubeServiceType(cfg.Head.ServiceType),
			InternalLoadBalancer: cfg.Head.ServiceType == serviceInternalLB, SourceRanges: cfg.Head.SourceRanges,
			RayStartParams: cfg.Head.RayStartParams, Pod: headPod},
		Annotations: map[string]string{rayConfigAnnotation: string(annotation)},
	}
	if cfg.HeadOmitted {
		spec.Head = kube.RayHead{CPU: defaultHeadCPU, Memory: defaultHeadMemory, ServiceType: "ClusterIP"}
	}
	for _, g := range groups {
		spec.Groups = append(spec.Groups, g.RayWorkerGroup)
	}
	addHistoryServer(ctx, m, &spec)
	return spec, groups
}

// rayConfigAnnotation holds, on the RayCluster, the configuration raytpu applied it from, so
// that an import restores the configuration rather than guessing it from the Pod templates.
const rayConfigAnnotation = "raytpu.dev/config"

// rayConfig is the configuration of a RayCluster as the annotation keeps it; nil pointers are
// attributes that were not set.
type rayConfig struct {
	RayVersion    string           `json:"ray_version"`
	PythonVersion string           `json:"python_version"`
	Image         string           `json:"image"`
	HeadOmitted   bool             `json:"head_omitted,omitempty"`
	Head          rayHeadConfig    `json:"head"`
	Groups        []rayGroupConfig `json:"worker_groups"`
}

type rayHeadConfig struct {
	CPU            string            `json:"cpu"`
	Memory         string            `json:"memory"`
	ServiceType    string            `json:"service_type"`
	SourceRanges   []string          `json:"load_balancer_source_ranges,omitempty"`
	RayStartParams map[string]string `json:"ray_start_params,omitempty"`
	rayPodConfig
}

type rayGroupConfig struct {
	Name           string            `json:"name"`
	Slices         []string          `json:"slices,omitempty"`
	SpareSlices    []string          `json:"spare_slices,omitempty"`
	Generation     *string           `json:"generation,omitempty"`
	Topology       *string           `json:"topology,omitempty"`
	ChipsPerHost   *int64            `json:"chips_per_host,omitempty"`
	Replicas       *int64            `json:"replicas,omitempty"`
	CPU            *string           `json:"cpu,omitempty"`
	Memory         *string           `json:"memory,omitempty"`
	RayStartParams map[string]string `json:"ray_start_params,omitempty"`
	rayPodConfig
}

func rayConfigOf(ctx context.Context, m rayConfigModel) (rayConfig, diag.Diagnostics) {
	var diags diag.Diagnostics
	cfg := rayConfig{RayVersion: m.RayVersion.ValueString(), PythonVersion: m.PythonVersion.ValueString(), Image: m.Image.ValueString()}
	if m.Head.IsNull() {
		cfg.HeadOmitted = true
	} else {
		var h rayHeadModel
		diags.Append(m.Head.As(ctx, &h, basetypes.ObjectAsOptions{})...)
		cfg.Head = rayHeadConfig{CPU: h.CPU.ValueString(), Memory: h.Memory.ValueString(), ServiceType: h.ServiceType.ValueString()}
		diags.Append(h.RayStartParams.ElementsAs(ctx, &cfg.Head.RayStartParams, false)...)
		diags.Append(h.SourceRanges.ElementsAs(ctx, &cfg.Head.SourceRanges, false)...)
		pod, d := podConfigOf(ctx, h.rayPodModel)
		diags.Append(d...)
		cfg.Head.rayPodConfig = pod
	}
	var groups []rayWorkerGroupModel
	diags.Append(m.WorkerGroups.ElementsAs(ctx, &groups, false)...)
	for _, g := range groups {
		gc := rayGroupConfig{
			Name: g.Name.ValueString(), Generation: g.Generation.ValueStringPointer(), Topology: g.Topology.ValueStringPointer(),
			ChipsPerHost: g.ChipsPerHost.ValueInt64Pointer(), Replicas: g.Replicas.ValueInt64Pointer(),
			CPU: g.CPU.ValueStringPointer(), Memory: g.Memory.ValueStringPointer(),
		}
		diags.Append(g.Slices.ElementsAs(ctx, &gc.Slices, false)...)
		diags.Append(g.SpareSlices.ElementsAs(ctx, &gc.SpareSlices, false)...)
		diags.Append(g.RayStartParams.ElementsAs(ctx, &gc.RayStartParams, false)...)
		pod, d := podConfigOf(ctx, g.rayPodModel)
		diags.Append(d...)
		gc.rayPodConfig = pod
		cfg.Groups = append(cfg.Groups, gc)
	}
	return cfg, diags
}

// applyRayConfig writes the configuration kept in the annotation into m (for an import).
func applyRayConfig(ctx context.Context, cfg rayConfig, m *rayConfigModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.RayVersion, m.PythonVersion, m.Image = types.StringValue(cfg.RayVersion), types.StringValue(cfg.PythonVersion), types.StringValue(cfg.Image)
	if cfg.HeadOmitted {
		m.Head = types.ObjectNull(rayHeadAttrTypes)
	} else {
		params, d := stringMap(ctx, cfg.Head.RayStartParams)
		diags.Append(d...)
		pod, d := cfg.Head.model(ctx)
		diags.Append(d...)
		h, d := types.ObjectValueFrom(ctx, rayHeadAttrTypes, rayHeadModel{
			CPU: quantityOf(cfg.Head.CPU), Memory: quantityOf(cfg.Head.Memory),
			ServiceType: types.StringValue(cfg.Head.ServiceType), SourceRanges: stringList(ctx, cfg.Head.SourceRanges, &diags),
			RayStartParams: params, rayPodModel: pod,
		})
		diags.Append(d...)
		m.Head = h
	}
	groups := make([]rayWorkerGroupModel, 0, len(cfg.Groups))
	for _, g := range cfg.Groups {
		params, d := stringMap(ctx, g.RayStartParams)
		diags.Append(d...)
		slices := types.ListNull(types.StringType)
		if g.Slices != nil {
			slices, d = types.ListValueFrom(ctx, types.StringType, g.Slices)
			diags.Append(d...)
		}
		spares := types.ListNull(types.StringType)
		if g.SpareSlices != nil {
			spares, d = types.ListValueFrom(ctx, types.StringType, g.SpareSlices)
			diags.Append(d...)
		}
		pod, d := g.model(ctx)
		diags.Append(d...)
		groups = append(groups, rayWorkerGroupModel{
			Name: types.StringValue(g.Name), Slices: slices, SpareSlices: spares,
			Generation: types.StringPointerValue(g.Generation), Topology: types.StringPointerValue(g.Topology),
			ChipsPerHost: types.Int64PointerValue(g.ChipsPerHost), Replicas: types.Int64PointerValue(g.Replicas),
			CPU: quantityOfPointer(g.CPU), Memory: quantityOfPointer(g.Memory), RayStartParams: params,
			rayPodModel: pod,
		})
	}
	l, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: rayWorkerGroupAttrTypes}, groups)
	diags.Append(d...)
	m.WorkerGroups = l
	return diags
}

// stringMap is a Terraform map, null for an empty or absent Go map (the attribute unset).
func stringMap(ctx context.Context, m map[string]string) (types.Map, diag.Diagnostics) {
	if len(m) == 0 {
		return types.MapNull(types.StringType), nil
	}
	return types.MapValueFrom(ctx, types.StringType, m)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
