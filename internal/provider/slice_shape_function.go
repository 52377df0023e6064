package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ function.Function = (*sliceShapeFunction)(nil)

type sliceShapeFunction struct{}

// NewSliceShapeFunction returns provider::raytpu::slice_shape, raytpu_topology as a function.
func NewSliceShapeFunction() function.Function {
	return &sliceShapeFunction{}
}

func (f *sliceShapeFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "slice_shape"
}

func (f *sliceShapeFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Derive a TPU slice from its generation and topology",
		MarkdownDescription: "Returns the same object as the `raytpu_topology` data source: machine type, hosts, chips, " +
			"placement, minimum GKE version, node selector, TPU resource and Ray names. Needs no credentials.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "generation",
				MarkdownDescription: "TPU generation: `v4`, `v5e`, `v5p`, `v6e` or `tpu7x` (aliases `v5litepod`, `trillium`, `v7x`, `ironwood`).",
			},
			function.StringParameter{
				Name:                "topology",
				MarkdownDescription: "Slice shape, `AxB` (v5e, v6e) or `AxBxC` (v4, v5p, tpu7x).",
			},
		},
		Return: function.ObjectReturn{AttributeTypes: sliceShapeAttrTypes},
	}
}

func (f *sliceShapeFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var generation, topology string
	resp.Error = req.Arguments.Get(ctx, &generation, &topology)
	if resp.Error != nil {
		return
	}
	s, input, err := deriveSlice(generation, topology, "", 0)
	if err != nil {
		argument := int64(0)
		if input == inputTopology {
			argument = 1
		}
		resp.Error = function.NewArgumentFuncError(argument, err.Error())
		return
	}
	shape, diags := flattenSliceShape(ctx, s)
	if diags.HasError() {
		resp.Error = function.FuncErrorFromDiags(ctx, diags)
		return
	}
	result, diags := types.ObjectValueFrom(ctx, sliceShapeAttrTypes, shape)
	if diags.HasError() {
		resp.Error = function.FuncErrorFromDiags(ctx, diags)
		return
	}
	resp.Error = resp.Result.Set(ctx, result)
}
