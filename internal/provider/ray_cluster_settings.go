package provider

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// What the code on a worker group needs to know of it: Ray Train's and slice_placement_group's
// arguments in the Ray release of ray_version, and the MEGASCALE_* variables of multislice JAX.

var groupSettingsAttrTypes = map[string]attr.Type{
	"num_slices": types.Int64Type, "hosts_per_slice": types.Int64Type, "chips_per_host": types.Int64Type,
	"num_workers": types.Int64Type, "topology": types.StringType, "accelerator_type": types.StringType,
	"pod_type":              types.StringType,
	"slice_placement_group": types.ObjectType{AttrTypes: placementGroupAttrTypes},
	"megascale":             types.MapType{ElemType: types.StringType},
}

func groupSettingsSchema() schema.MapNestedAttribute {
	computed := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d}
	}
	count := func(d string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: d}
	}
	return schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "By worker group name, what the code running on the group needs to know of it, in the Ray release of " +
			"`ray_version`. Known after apply.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"num_slices":      count("Slices (replicas) of the group."),
			"hosts_per_slice": count("Hosts of each slice (`numOfHosts`)."),
			"chips_per_host":  count("TPU chips of each host (`google.com/tpu`; Ray's `TPU` resource per worker)."),
			"num_workers":     count("Hosts of all the slices: Ray Train's `ScalingConfig(num_workers=...)`, one JAX process each."),
			"topology":        computed("Slice topology: `ScalingConfig(topology=...)`."),
			"accelerator_type": computed("Ray's accelerator type, for example `TPU-V6E`: `ScalingConfig(accelerator_type=...)` and the " +
				"`ray.io/accelerator-type` node label."),
			"pod_type": computed("Ray's TPU pod type of one slice, for example `v6e-16`."),
			"slice_placement_group": schema.SingleNestedAttribute{
				Computed: true,
				MarkdownDescription: "Arguments of `ray.util.tpu.slice_placement_group` that reserve all the group's slices: `num_slices` " +
					"of them, and `chips_per_vm` only where the Ray release takes it (null otherwise). Pass those that are not null.",
				Attributes: map[string]schema.Attribute{
					"topology":            computed("`topology` argument."),
					"accelerator_version": computed("`accelerator_version` argument."),
					"chips_per_vm":        count("`chips_per_vm` argument; null where the release has no such parameter."),
					"num_slices":          count("`num_slices` argument."),
				},
			},
			"megascale": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "For a group of several multi-host slices, the multislice (DCN) settings of JAX that every worker " +
					"gets: `MEGASCALE_NUM_SLICES`, which raytpu sets, and `MEGASCALE_COORDINATOR_ADDRESS` and `MEGASCALE_PORT`, which GKE's " +
					"TPU webhook injects because it is set, together with `MEGASCALE_SLICE_ID`, the replica's index (0 to `num_slices` - 1). " +
					"Null for one slice, and for single-host slices, whose Pods the webhook gives no host name to coordinate by.",
			},
		}},
	}
}

// groupSettings are the settings of the resolved groups of a RayCluster named name.
func groupSettings(groups []resolvedGroup, name, rayVersion string) types.Map {
	row := rayRow(rayVersion)
	elemType := types.ObjectType{AttrTypes: groupSettingsAttrTypes}
	out := map[string]attr.Value{}
	for _, g := range groups {
		s := g.slice
		podType := row.PodType(s.Generation.RayAcceleratorVersion, s.RayPodSize())
		megascale := types.MapNull(types.StringType)
		if g.MegascaleSlices > 1 {
			// The webhook's values: the host name of replica 0's worker 0 under the RayCluster's
			// headless Service, and port 8081 (ai-on-gke kuberay-tpu-webhook main.go, WH:875-910;
			// on tpu7x the address carries the port).
			addr := fmt.Sprintf("%s-0-0.%s-headless", g.Name, name)
			if s.Generation.RayAcceleratorVersion == "v7x" {
				addr += ":8081"
			}
			megascale = types.MapValueMust(types.StringType, map[string]attr.Value{
				"MEGASCALE_NUM_SLICES":          types.StringValue(strconv.Itoa(g.MegascaleSlices)),
				"MEGASCALE_COORDINATOR_ADDRESS": types.StringValue(addr),
				"MEGASCALE_PORT":                types.StringValue("8081"),
			})
		}
		out[g.Name] = types.ObjectValueMust(groupSettingsAttrTypes, map[string]attr.Value{
			"num_slices": types.Int64Value(int64(g.Replicas)), "hosts_per_slice": types.Int64Value(int64(g.NumOfHosts)),
			"chips_per_host": types.Int64Value(int64(g.ChipsPerHost)), "num_workers": types.Int64Value(int64(g.Replicas * g.NumOfHosts)),
			"topology": types.StringValue(s.Topology.String()), "accelerator_type": types.StringValue(s.Generation.RayAcceleratorType),
			"pod_type":              types.StringValue(podType),
			"slice_placement_group": slicePlacementGroupArgs(s, row, g.Replicas),
			"megascale":             megascale,
		})
	}
	return types.MapValueMust(elemType, out)
}
