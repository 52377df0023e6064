package provider

import (
	"context"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

type computeClassModel struct {
	ID                   types.String `tfsdk:"id"`
	ClusterID            types.String `tfsdk:"cluster_id"`
	Name                 types.String `tfsdk:"name"`
	Priorities           types.List   `tfsdk:"priorities"`
	WhenUnsatisfiable    types.String `tfsdk:"when_unsatisfiable"`
	NodePoolAutoCreation types.Bool   `tfsdk:"node_pool_auto_creation"`
	NodeSelector         types.Map    `tfsdk:"node_selector"`
}

type computeClassPriorityModel struct {
	Generation                   types.String `tfsdk:"generation"`
	Topology                     types.String `tfsdk:"topology"`
	ChipsPerHost                 types.Int64  `tfsdk:"chips_per_host"`
	Capacity                     types.String `tfsdk:"capacity"`
	Reservation                  types.String `tfsdk:"reservation"`
	ReservationProject           types.String `tfsdk:"reservation_project"`
	ReservationBlock             types.String `tfsdk:"reservation_block"`
	MaxRunDurationSeconds        types.Int64  `tfsdk:"max_run_duration_seconds"`
	NodeRecyclingLeadTimeSeconds types.Int64  `tfsdk:"node_recycling_lead_time_seconds"`
}

var computeClassPriorityAttrTypes = map[string]attr.Type{
	"generation": types.StringType, "topology": types.StringType, "chips_per_host": types.Int64Type, "capacity": types.StringType,
	"reservation": types.StringType, "reservation_project": types.StringType, "reservation_block": types.StringType,
	"max_run_duration_seconds": types.Int64Type, "node_recycling_lead_time_seconds": types.Int64Type,
}

// The kinds of capacity a priority asks for are raytpu_slice's fallback kinds.

// computeClassNamePattern: a class's name is the value of the cloud.google.com/compute-class node
// label, so a label value and an object name at once: a DNS label.
var computeClassNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// flexStartMaxRunSeconds is flex-start's longest run: "up to 7 days" (Cloud TPU, "Request Cloud
// TPUs using Flex-start"; GKE "About GPU and TPU provisioning with flex-start").
const flexStartMaxRunSeconds = 7 * 24 * 3600

func (r *computeClassResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	optionalString := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, MarkdownDescription: d}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A GKE custom ComputeClass of TPU slices: an ordered list of the capacity node auto-provisioning tries for " +
			"the Pods that select the class (node selector `cloud.google.com/compute-class`), a specific reservation, on demand, " +
			"flex-start or Spot, each for a slice named by generation and topology. When one is stocked out GKE falls back to the " +
			"next. Applied to the cluster's Kubernetes API by server-side apply; a change made outside Terraform shows in the next plan.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "`{cluster_id}/computeClasses/{name}`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"cluster_id": clusterIDAttribute("the `id` of a `raytpu_cluster`. Custom ComputeClasses need GKE 1.30.3-gke.1451000 or later."),
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "Name of the ComputeClass, the value Pods select it by.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{stringvalidator.RegexMatches(computeClassNamePattern,
					"must be a DNS label: lower-case letters, digits and hyphens, at most 63 characters, starting and ending with a letter or digit")},
			},
			"priorities": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "The capacity to try, in order: GKE tries the first, and on a stockout the next. Each is one TPU " +
					"slice shape with one kind of capacity.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"generation": schema.StringAttribute{Required: true,
						MarkdownDescription: "TPU generation: " + strings.Join(quoted(tpu.GenerationNames()), ", ") + "."},
					"topology": schema.StringAttribute{Required: true, MarkdownDescription: "Slice topology, valid for the generation (`2x4`, `2x2x2`)."},
					"chips_per_host": schema.Int64Attribute{Optional: true,
						MarkdownDescription: "TPU chips of each host (the machine type, `tpu.count`), where the shape has a choice (a v6e `2x4` " +
							"is one 8-chip host or two 4-chip ones); unset, one host when the shape fits on one, as `raytpu_slice` picks."},
					"capacity": schema.StringAttribute{Required: true,
						MarkdownDescription: "Kind of capacity, as `raytpu_slice`'s `fallback` names them: `reservation` (the specific reservation `reservation`), " +
							"`on-demand`, `flex-start` or `spot`.",
						Validators: []validator.String{stringvalidator.OneOf(fallbackCapacities...)}},
					"reservation":         optionalString("Name of the specific reservation, with `capacity = \"reservation\"`."),
					"reservation_project": optionalString("Project of a shared reservation; unset, the cluster's."),
					"reservation_block":   optionalString("A block of the reservation to take the slice from."),
					"max_run_duration_seconds": schema.Int64Attribute{Optional: true,
						MarkdownDescription: "With `flex-start`: how long the nodes may run, at most 604800 (7 days).",
						Validators:          []validator.Int64{int64validator.Between(1, flexStartMaxRunSeconds)}},
					"node_recycling_lead_time_seconds": schema.Int64Attribute{Optional: true,
						MarkdownDescription: "With `flex-start`: how long before the nodes' end GKE starts bringing up their replacements.",
						Validators:          []validator.Int64{int64validator.AtLeast(1)}},
				}},
			},
			"when_unsatisfiable": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("DoNotScaleUp"),
				MarkdownDescription: "What GKE does when no priority can be had: `DoNotScaleUp` leaves the Pods pending, `ScaleUpAnyway` makes " +
					"nodes outside the priorities, which are not TPU slices. Default `DoNotScaleUp`.",
				Validators: []validator.String{stringvalidator.OneOf("DoNotScaleUp", "ScaleUpAnyway")},
			},
			"node_pool_auto_creation": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Whether the class makes its own node pools (`nodePoolAutoCreation`), which GKE 1.33.3-gke.1136000 and " +
					"later do without the cluster's node auto-provisioning. Default `true`.",
			},
			"node_selector": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The node selector that puts a Pod on the class: `{\"cloud.google.com/compute-class\" = name}`. GKE " +
					"taints the class's nodes with the same key and adds the toleration to the Pods that select it.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()}},
		},
	}
}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}
