package provider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/ray"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// The shape of a slice is what raytpu_topology reads and provider::raytpu::slice_shape returns:
// one model, one attribute map, one derivation.

// sliceShapeModel is the data source's model and the function's result.
type sliceShapeModel struct {
	Generation      types.String `tfsdk:"generation"`
	Topology        types.String `tfsdk:"topology"`
	AcceleratorType types.String `tfsdk:"accelerator_type"`
	ChipsPerHost    types.Int64  `tfsdk:"chips_per_host"`
	GKEAccelerator  types.String `tfsdk:"gke_accelerator"`
	MachineType     types.String `tfsdk:"machine_type"`
	NumHosts        types.Int64  `tfsdk:"num_hosts"`
	TotalChips      types.Int64  `tfsdk:"total_chips"`
	MultiHost       types.Bool   `tfsdk:"multi_host"`
	PlacementType   types.String `tfsdk:"placement_type"`
	MinGKEVersion   types.String `tfsdk:"min_gke_version"`
	NodeSelector    types.Map    `tfsdk:"node_selector"`
	TPUResource     types.Map    `tfsdk:"tpu_resource"`
	Ray             types.Object `tfsdk:"ray"`
}

// rayShapeAttrTypes are the attributes of the nested ray object.
var rayShapeAttrTypes = map[string]attr.Type{
	"accelerator_version": types.StringType,
	"accelerator_type":    types.StringType,
	"pod_type":            types.StringType,
	"head_resource":       types.StringType,
	"topology_supported":  types.BoolType,
}

// rayNames are Ray's names for a slice in the Ray release of row: the ray object of
// raytpu_topology and slice_shape (for the default Ray version), and, with the image, of
// raytpu_slice (for its ray_version).
func rayNames(s *tpu.Slice, row ray.Names) map[string]attr.Value {
	podType := row.PodType(s.Generation.RayAcceleratorVersion, s.RayPodSize())
	return map[string]attr.Value{
		"accelerator_version": types.StringValue(s.Generation.RayAcceleratorVersion),
		"accelerator_type":    types.StringValue(s.Generation.RayAcceleratorType),
		"pod_type":            types.StringValue(podType),
		"head_resource":       types.StringValue("TPU-" + podType + "-head"),
		"topology_supported":  types.BoolValue(s.RayTopologySupported()),
	}
}

// rayRow is the row of raytpu's Ray table for version; the default version's for one that is not
// a Ray release number (the validators say so).
func rayRow(version string) ray.Names {
	v, err := ray.ParseVersion(version)
	if err != nil {
		v, _ = ray.ParseVersion(defaultRayVersion)
	}
	row, _ := ray.Lookup(v)
	return row
}

// sliceShapeAttrTypes mirrors sliceShapeModel.
var sliceShapeAttrTypes = map[string]attr.Type{
	"generation":       types.StringType,
	"topology":         types.StringType,
	"accelerator_type": types.StringType,
	"chips_per_host":   types.Int64Type,
	"gke_accelerator":  types.StringType,
	"machine_type":     types.StringType,
	"num_hosts":        types.Int64Type,
	"total_chips":      types.Int64Type,
	"multi_host":       types.BoolType,
	"placement_type":   types.StringType,
	"min_gke_version":  types.StringType,
	"node_selector":    types.MapType{ElemType: types.StringType},
	"tpu_resource":     types.MapType{ElemType: types.StringType},
	"ray":              types.ObjectType{AttrTypes: rayShapeAttrTypes},
}

// shapeInput names the input attribute that an error is about.
type shapeInput string

const (
	inputGeneration      shapeInput = "generation"
	inputTopology        shapeInput = "topology"
	inputAcceleratorType shapeInput = "accelerator_type"
	inputChipsPerHost    shapeInput = "chips_per_host"
)

// shapeInputSummary is the diagnostic summary for a bad value of each input.
var shapeInputSummary = map[shapeInput]string{
	inputGeneration:      "Invalid TPU Generation",
	inputTopology:        "Invalid TPU Topology",
	inputAcceleratorType: "Invalid TPU Accelerator Type",
	inputChipsPerHost:    "Invalid Chips Per Host",
}

// deriveSlice resolves a slice from either generation and topology or an accelerator type, and
// says which input is at fault when it cannot.
func deriveSlice(generation, topology, acceleratorType string, chipsPerHost int) (*tpu.Slice, shapeInput, error) {
	var g *tpu.Generation
	var t tpu.Topology
	if acceleratorType != "" {
		var err error
		if g, t, err = tpu.ParseAcceleratorType(acceleratorType); err != nil {
			return nil, inputAcceleratorType, err
		}
	} else {
		var err error
		if g, err = tpu.LookupGeneration(generation); err != nil {
			return nil, inputGeneration, err
		}
		if t, err = tpu.ParseTopology(topology); err != nil {
			return nil, inputTopology, err
		}
		if err = g.ValidateTopology(t); err != nil {
			return nil, inputTopology, err
		}
	}
	s, err := g.Slice(t, chipsPerHost)
	if err != nil {
		return nil, inputChipsPerHost, err
	}
	return s, "", nil
}

// shapeInputs are the four inputs as Terraform values, any of which may be null or unknown.
type shapeInputs struct {
	Generation, Topology, AcceleratorType types.String
	ChipsPerHost                          types.Int64
}

// resolveShape checks the combination of inputs and derives the slice. It returns nil without
// an error while any input it needs is unknown, so that validation can wait for apply-time values.
func resolveShape(in shapeInputs) (*tpu.Slice, diag.Diagnostics) {
	var diags diag.Diagnostics
	set := func(v attr.Value) bool { return !v.IsNull() }
	switch {
	case set(in.AcceleratorType) && set(in.Generation) && set(in.Topology):
		// All three, as a configuration that Terraform generates from an import writes them: fine
		// when they name the same slice (checked below).
	case set(in.AcceleratorType) && (set(in.Generation) || set(in.Topology)):
		diags.AddAttributeError(path.Root(string(inputAcceleratorType)), "Conflicting TPU Shape Attributes",
			"accelerator_type cannot be combined with generation or topology: set either accelerator_type "+
				"(for example \"v6e-16\") or generation and topology (for example \"v6e\" and \"4x4\").")
	case !set(in.AcceleratorType) && !set(in.Generation) && !set(in.Topology):
		diags.AddError("Missing TPU Shape",
			"Set generation and topology (for example generation = \"v6e\" and topology = \"4x4\"), "+
				"or accelerator_type (for example \"v6e-16\").")
	case set(in.Generation) && !set(in.Topology):
		diags.AddAttributeError(path.Root(string(inputTopology)), "Missing TPU Topology",
			"topology is required with generation: set it to a shape such as \"4x4\" (2D generations) or \"2x2x4\" (3D generations), "+
				"or replace generation with accelerator_type.")
	case set(in.Topology) && !set(in.Generation):
		diags.AddAttributeError(path.Root(string(inputGeneration)), "Missing TPU Generation",
			fmt.Sprintf("generation is required with topology: set it to one of %v.", tpu.GenerationNames()))
	}
	if diags.HasError() {
		return nil, diags
	}
	if in.Generation.IsUnknown() || in.Topology.IsUnknown() || in.AcceleratorType.IsUnknown() || in.ChipsPerHost.IsUnknown() {
		return nil, diags
	}
	acceleratorType := in.AcceleratorType.ValueString()
	if set(in.Generation) {
		acceleratorType = "" // generation and topology name the shape; a third name must agree
	}
	s, input, err := deriveSlice(in.Generation.ValueString(), in.Topology.ValueString(), acceleratorType, int(in.ChipsPerHost.ValueInt64()))
	if err != nil {
		diags.AddAttributeError(path.Root(string(input)), shapeInputSummary[input], err.Error()+".")
		return nil, diags
	}
	if set(in.Generation) && set(in.AcceleratorType) {
		g, t, err := tpu.ParseAcceleratorType(in.AcceleratorType.ValueString())
		if err != nil || g != s.Generation || t.Chips() != s.TotalChips() {
			diags.AddAttributeError(path.Root(string(inputAcceleratorType)), "Conflicting TPU Shape Attributes",
				fmt.Sprintf("accelerator_type %q does not name the slice that generation %q and topology %q do (%s): remove "+
					"accelerator_type, or generation and topology.", in.AcceleratorType.ValueString(), in.Generation.ValueString(),
					in.Topology.ValueString(), s.AcceleratorType()))
			return nil, diags
		}
	}
	return s, diags
}

// flattenSliceShape renders a slice as the shape model.
func flattenSliceShape(ctx context.Context, s *tpu.Slice) (sliceShapeModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	nodeSelector, d := types.MapValueFrom(ctx, types.StringType, s.NodeSelector())
	diags.Append(d...)
	tpuResource, d := types.MapValueFrom(ctx, types.StringType, map[string]string{
		tpu.ResourceName: strconv.Itoa(s.ChipsPerHost()),
	})
	diags.Append(d...)
	ray, d := types.ObjectValue(rayShapeAttrTypes, rayNames(s, rayRow(defaultRayVersion)))
	diags.Append(d...)
	return sliceShapeModel{
		Generation:      types.StringValue(s.Generation.Name),
		Topology:        types.StringValue(s.Topology.String()),
		AcceleratorType: types.StringValue(s.AcceleratorType()),
		ChipsPerHost:    types.Int64Value(int64(s.ChipsPerHost())),
		GKEAccelerator:  types.StringValue(s.Generation.GKEAccelerator),
		MachineType:     types.StringValue(s.MachineType.Name),
		NumHosts:        types.Int64Value(int64(s.Hosts)),
		TotalChips:      types.Int64Value(int64(s.TotalChips())),
		MultiHost:       types.BoolValue(s.MultiHost),
		PlacementType:   types.StringValue(string(s.Placement)),
		MinGKEVersion:   types.StringValue(s.Generation.MinGKEVersion.String()),
		NodeSelector:    nodeSelector,
		TPUResource:     tpuResource,
		Ray:             ray,
	}, diags
}
