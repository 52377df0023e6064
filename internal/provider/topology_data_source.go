package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var _ datasource.DataSourceWithValidateConfig = (*topologyDataSource)(nil)

type topologyDataSource struct{}

// NewTopologyDataSource returns raytpu_topology: the TPU catalog as a data source.
func NewTopologyDataSource() datasource.DataSource {
	return &topologyDataSource{}
}

func (d *topologyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_topology"
}

func (d *topologyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Derives everything about a TPU slice from its generation and topology (or its " +
			"accelerator type): the GKE machine type, host and chip counts, placement, the minimum GKE version, " +
			"and the names Ray and KubeRay use. It calls no API and needs no credentials.",
		Attributes: sliceShapeDataSourceAttributes(),
	}
}

// sliceShapeDataSourceAttributes describes sliceShapeModel: the inputs are optional and echoed
// back in canonical form, the rest is derived.
func sliceShapeDataSourceAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"generation": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: fmt.Sprintf("TPU generation: one of %s (aliases %s). Requires `topology`; "+
				"conflicts with `accelerator_type`. Read back in canonical form.",
				codeList(tpu.GenerationNames()), "`v5litepod`, `trillium`, `v7x`, `ironwood`"),
		},
		"topology": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "Slice shape: `AxB` for v5e and v6e (for example `4x4`), `AxBxC` for v4, v5p and tpu7x " +
				"(for example `2x2x4`). Requires `generation`.",
		},
		"accelerator_type": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "Cloud TPU accelerator type, for example `v6e-16`, `v5litepod-16`, `v5p-128` or `tpu7x-8`: " +
				"the number counts TensorCores for v4, v5p and tpu7x and chips for v5e and v6e. An alternative to " +
				"`generation` and `topology`; for 3D generations it picks the most cube-like shape. Always computed.",
		},
		"chips_per_host": schema.Int64Attribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "Chips on each VM. Leave unset for the default: one VM when the shape fits on one, " +
				"otherwise 4-chip VMs. Set `4` with v6e `2x4` for two `ct6e-standard-4t` VMs instead of one `ct6e-standard-8t`.",
		},
		"gke_accelerator": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Value of the `cloud.google.com/gke-tpu-accelerator` node label, for example `tpu-v6e-slice`.",
		},
		"machine_type": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "GKE machine type of every host, for example `ct6e-standard-4t`.",
		},
		"num_hosts": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "Number of VMs (GKE nodes) in the slice; KubeRay's `numOfHosts`.",
		},
		"total_chips": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "Number of TPU chips in the slice.",
		},
		"multi_host": schema.BoolAttribute{
			Computed:            true,
			MarkdownDescription: "Whether the slice spans several VMs.",
		},
		"placement_type": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "How GKE keeps the hosts together: `NONE` (single host), `COMPACT` (placement policy " +
				"with `tpu_topology`) or `WORKLOAD_POLICY` (multi-host tpu7x, a Compute Engine workload policy).",
		},
		"min_gke_version": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Lowest GKE version that runs this generation, for example `1.31.2-gke.1115000` for v6e.",
		},
		"node_selector": schema.MapAttribute{
			Computed:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Node selector for pods on this kind of slice: `cloud.google.com/gke-tpu-accelerator` " +
				"and `cloud.google.com/gke-tpu-topology`.",
		},
		"tpu_resource": schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Container resources for one host, `{\"google.com/tpu\" = \"<chips per host>\"}`, for `limits` and `requests`.",
		},
		"ray": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "Ray's names for the slice, in Ray " + defaultRayVersion + " (a `raytpu_slice` gives them for its own `ray_version`).",
			Attributes: map[string]schema.Attribute{
				"accelerator_version": schema.StringAttribute{
					Computed:            true,
					MarkdownDescription: "`accelerator_version` of `ray.util.tpu.slice_placement_group`, for example `v6e` or `v5litepod`.",
				},
				"accelerator_type": schema.StringAttribute{
					Computed:            true,
					MarkdownDescription: "Value of Ray's `ray.io/accelerator-type` node label, for example `TPU-V6E`.",
				},
				"pod_type": schema.StringAttribute{
					Computed:            true,
					MarkdownDescription: "Ray's TPU pod type, for example `v6e-16`.",
				},
				"head_resource": schema.StringAttribute{
					Computed:            true,
					MarkdownDescription: "Resource that Ray puts on worker 0 of the slice only, for example `TPU-v6e-16-head`.",
				},
				"topology_supported": schema.BoolAttribute{
					Computed: true,
					MarkdownDescription: "Whether `ray.util.tpu.slice_placement_group` accepts this topology. Ray's list is " +
						"narrower than GKE's: a slice outside it provisions, but Ray's placement helper refuses it.",
				},
			},
		},
	}
}

func (d *topologyDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var config sliceShapeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, diags := resolveShape(config.inputs())
	resp.Diagnostics.Append(diags...)
}

func (d *topologyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config sliceShapeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	s, diags := resolveShape(config.inputs())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	state, diags := flattenSliceShape(ctx, s)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (m sliceShapeModel) inputs() shapeInputs {
	return shapeInputs{Generation: m.Generation, Topology: m.Topology, AcceleratorType: m.AcceleratorType, ChipsPerHost: m.ChipsPerHost}
}

// codeList renders names as a Markdown list of code spans: `a`, `b`.
func codeList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	return strings.Join(quoted, ", ")
}
