package provider

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// auto_provisioning maps onto GKE's cluster-level node auto-provisioning (containerpb
// ClusterAutoscaling): enableNodeAutoprovisioning, resourceLimits, autoprovisioningLocations and
// the service account and scopes of autoprovisioningNodePoolDefaults. It is set in the
// CreateCluster request and changed with UpdateCluster's desiredClusterAutoscaling, merged into
// what the cluster has (mergeAutoProvisioning); removing it turns node auto-provisioning off.
//
// Sources:
//   - A TPU's resource limit is named by its accelerator, the value of the node label
//     cloud.google.com/gke-tpu-accelerator (tpu-v4-podslice, tpu-v5-lite-podslice, tpu-v5p-slice,
//     tpu-v6e-slice, tpu7x), and counts chips: GKE "Use node auto-provisioning"
//     (cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning, "Configure TPUs":
//     resourceLimits entries with resourceType 'tpu-v4-podslice' and the like), and xpk, which
//     writes resourceType {gke_accelerator} with the maximum in chips
//     (AI-Hypercomputer/xpk src/xpk/core/nap.py). The names come from internal/tpu
//     (Generation.GKEAccelerator).
//   - cpu (cores) and memory (GB) limits are required: "Resource limits for cpu, memory must be
//     specified when enabling node autoprovisioning." (GKE's answer,
//     terraform-provider-google#24232); gcloud's --max-memory is in gigabytes.
//   - "Resource_limit.maximum must be greater than 0." (GKE's answer, google/caliban#65).

type autoProvisioningModel struct {
	MinCPU         types.Int64  `tfsdk:"min_cpu"`
	MaxCPU         types.Int64  `tfsdk:"max_cpu"`
	MinMemoryGB    types.Int64  `tfsdk:"min_memory_gb"`
	MaxMemoryGB    types.Int64  `tfsdk:"max_memory_gb"`
	TPULimits      types.List   `tfsdk:"tpu_limits"`
	Locations      types.List   `tfsdk:"locations"`
	ServiceAccount types.String `tfsdk:"service_account"`
	OAuthScopes    types.List   `tfsdk:"oauth_scopes"`
}

type tpuLimitModel struct {
	Generation types.String `tfsdk:"generation"`
	MaxChips   types.Int64  `tfsdk:"max_chips"`
}

var (
	tpuLimitAttrTypes         = map[string]attr.Type{"generation": types.StringType, "max_chips": types.Int64Type}
	autoProvisioningAttrTypes = map[string]attr.Type{
		"min_cpu": types.Int64Type, "max_cpu": types.Int64Type, "min_memory_gb": types.Int64Type, "max_memory_gb": types.Int64Type,
		"tpu_limits":      types.ListType{ElemType: types.ObjectType{AttrTypes: tpuLimitAttrTypes}},
		"locations":       types.ListType{ElemType: types.StringType},
		"service_account": types.StringType,
		"oauth_scopes":    types.ListType{ElemType: types.StringType},
	}
)

// GKE's resource types of the cpu and memory limits.
const (
	resourceCPU    = "cpu"
	resourceMemory = "memory"
)

func autoProvisioningSchema() schema.SingleNestedAttribute {
	atLeastOne := []validator.Int64{int64validator.AtLeast(1)}
	atLeastZero := []validator.Int64{int64validator.AtLeast(0)}
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "GKE node auto-provisioning: GKE creates node pools, TPU slices included, for Pods that no node " +
			"pool can hold (a RayCluster worker group naming a TPU generation and topology), within these limits. " +
			"Removing it turns node auto-provisioning off (pools it created stay).",
		Validators: []validator.Object{autoProvisioningValidator{}},
		Attributes: map[string]schema.Attribute{
			"max_cpu": schema.Int64Attribute{
				Required: true, Validators: atLeastOne,
				MarkdownDescription: "Most CPU cores in the cluster, over all node pools (GKE requires a cpu limit).",
			},
			"min_cpu": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(0), Validators: atLeastZero,
				MarkdownDescription: "Fewest CPU cores in the cluster. Default `0`.",
			},
			"max_memory_gb": schema.Int64Attribute{
				Required: true, Validators: atLeastOne,
				MarkdownDescription: "Most memory in the cluster, in GB, over all node pools (GKE requires a memory limit).",
			},
			"min_memory_gb": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(0), Validators: atLeastZero,
				MarkdownDescription: "Least memory in the cluster, in GB. Default `0`.",
			},
			"tpu_limits": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "The TPU chips node auto-provisioning may create, per generation; a generation not " +
					"listed gets no auto-provisioned slices.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), tpuLimitsUniqueValidator{}},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"generation": schema.StringAttribute{
						Required: true, Validators: []validator.String{generationValidator{}},
						MarkdownDescription: "TPU generation: `v4`, `v5e`, `v5p`, `v6e` or `tpu7x` (aliases `v5litepod`, `trillium`, " +
							"`v7x`, `ironwood`).",
					},
					"max_chips": schema.Int64Attribute{
						Required: true, Validators: atLeastOne,
						MarkdownDescription: "Most chips of the generation in the cluster, counting its other node pools (its " +
							"`raytpu_slice`s) too, as GKE counts every limit: for example `64` for four v6e `4x4` slices in all.",
					},
				}},
			},
			"locations": schema.ListAttribute{
				Optional: true, Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Zones where node auto-provisioning may create node pools; GKE's choice (the cluster's " +
					"zones) when unset.",
				PlanModifiers: []planmodifier.List{listplanmodifier.UseNonNullStateForUnknown()},
			},
			"service_account": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Service account of the node pools node auto-provisioning creates, such as " +
					"`nodes@my-project.iam.gserviceaccount.com`; GKE's default, the Compute Engine default service account, when " +
					"unset. Set it in projects where that account is disabled or has no roles, or GKE cannot create the pools.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseNonNullStateForUnknown()},
			},
			"oauth_scopes": schema.ListAttribute{
				Optional: true, Computed: true, ElementType: types.StringType,
				MarkdownDescription: "OAuth scopes of the node pools node auto-provisioning creates; GKE's default when unset. " +
					"`[\"https://www.googleapis.com/auth/cloud-platform\"]` leaves access to IAM. GKE adds " +
					"`monitoring.write` when the service account would lack it; that causes no diff.",
				PlanModifiers: []planmodifier.List{listplanmodifier.UseNonNullStateForUnknown()},
			},
		},
	}
}

// expandAutoProvisioning is the ClusterAutoscaling of m: node auto-provisioning on with its limits,
// or off when m is null.
func expandAutoProvisioning(ctx context.Context, m types.Object) (*containerpb.ClusterAutoscaling, diag.Diagnostics) {
	if m.IsNull() || m.IsUnknown() {
		return &containerpb.ClusterAutoscaling{EnableNodeAutoprovisioning: false}, nil
	}
	var ap autoProvisioningModel
	diags := m.As(ctx, &ap, basetypes.ObjectAsOptions{})
	var limits []tpuLimitModel
	diags.Append(ap.TPULimits.ElementsAs(ctx, &limits, false)...)
	out := &containerpb.ClusterAutoscaling{
		EnableNodeAutoprovisioning: true,
		ResourceLimits: []*containerpb.ResourceLimit{
			{ResourceType: resourceCPU, Minimum: ap.MinCPU.ValueInt64(), Maximum: ap.MaxCPU.ValueInt64()},
			{ResourceType: resourceMemory, Minimum: ap.MinMemoryGB.ValueInt64(), Maximum: ap.MaxMemoryGB.ValueInt64()},
		},
	}
	for _, l := range limits {
		g, err := tpu.LookupGeneration(l.Generation.ValueString())
		if err != nil {
			continue // refused at plan time by generationValidator
		}
		out.ResourceLimits = append(out.ResourceLimits, &containerpb.ResourceLimit{ResourceType: g.GKEAccelerator, Maximum: l.MaxChips.ValueInt64()})
	}
	if !ap.Locations.IsUnknown() {
		diags.Append(ap.Locations.ElementsAs(ctx, &out.AutoprovisioningLocations, false)...)
	}
	if defaults := expandAutoProvisioningDefaults(ctx, ap, &diags); defaults != nil {
		out.AutoprovisioningNodePoolDefaults = defaults
	}
	return out, diags
}

// flattenAutoProvisioning reads GKE's ClusterAutoscaling into auto_provisioning: null when node
// auto-provisioning is off. TPU limits keep the order and the spelling of prior (the state or the
// plan) for the generations they name, so that only a change of GKE's settings shows as a diff;
// limits of other accelerators (GPUs) are left out.
func flattenAutoProvisioning(ctx context.Context, a *containerpb.ClusterAutoscaling, prior types.Object) (types.Object, diag.Diagnostics) {
	if !a.GetEnableNodeAutoprovisioning() {
		return types.ObjectNull(autoProvisioningAttrTypes), nil
	}
	var diags diag.Diagnostics
	var priorLimits []tpuLimitModel
	if !prior.IsNull() && !prior.IsUnknown() {
		var ap autoProvisioningModel
		diags.Append(prior.As(ctx, &ap, basetypes.ObjectAsOptions{})...)
		if !ap.TPULimits.IsUnknown() {
			diags.Append(ap.TPULimits.ElementsAs(ctx, &priorLimits, false)...)
		}
	}
	ap := autoProvisioningModel{MinCPU: types.Int64Value(0), MaxCPU: types.Int64Value(0), MinMemoryGB: types.Int64Value(0), MaxMemoryGB: types.Int64Value(0)}
	chips := map[string]int64{} // by canonical generation name
	for _, l := range a.GetResourceLimits() {
		switch t := l.GetResourceType(); t {
		case resourceCPU:
			ap.MinCPU, ap.MaxCPU = types.Int64Value(l.GetMinimum()), types.Int64Value(l.GetMaximum())
		case resourceMemory:
			ap.MinMemoryGB, ap.MaxMemoryGB = types.Int64Value(l.GetMinimum()), types.Int64Value(l.GetMaximum())
		default:
			if g := generationOfAccelerator(t); g != nil {
				chips[g.Name] = l.GetMaximum()
			}
		}
	}
	var limits []tpuLimitModel
	for _, l := range priorLimits {
		g, err := tpu.LookupGeneration(l.Generation.ValueString())
		if err != nil {
			continue
		}
		if most, ok := chips[g.Name]; ok {
			limits = append(limits, tpuLimitModel{Generation: l.Generation, MaxChips: types.Int64Value(most)})
			delete(chips, g.Name)
		}
	}
	for _, g := range tpu.Generations() {
		if most, ok := chips[g.Name]; ok {
			limits = append(limits, tpuLimitModel{Generation: types.StringValue(g.Name), MaxChips: types.Int64Value(most)})
		}
	}
	list, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: tpuLimitAttrTypes}, limits)
	diags.Append(d...)
	ap.TPULimits = list
	ap.Locations = types.ListNull(types.StringType)
	if locations := a.GetAutoprovisioningLocations(); len(locations) > 0 {
		ap.Locations, d = types.ListValueFrom(ctx, types.StringType, locations)
		diags.Append(d...)
	}
	defaults := a.GetAutoprovisioningNodePoolDefaults()
	ap.ServiceAccount = types.StringNull()
	if sa := defaults.GetServiceAccount(); sa != "" {
		ap.ServiceAccount = types.StringValue(sa)
	}
	ap.OAuthScopes = flattenAutoProvisioningScopes(ctx, defaults.GetOauthScopes(), prior, &diags)
	obj, d := types.ObjectValueFrom(ctx, autoProvisioningAttrTypes, ap)
	diags.Append(d...)
	return obj, diags
}

// generationOfAccelerator is the generation whose GKE accelerator name is accelerator, or nil.
func generationOfAccelerator(accelerator string) *tpu.Generation {
	for _, g := range tpu.Generations() {
		if g.GKEAccelerator == accelerator {
			return g
		}
	}
	return nil
}

// autoProvisioningLocationsKnown replaces the unknown values GKE decides (locations, service
// account, scopes) with null, for a state written before the cluster can be read.
func autoProvisioningLocationsKnown(m types.Object) types.Object {
	if m.IsNull() || m.IsUnknown() {
		return m
	}
	attrs := m.Attributes()
	for name, null := range map[string]attr.Value{
		"locations": types.ListNull(types.StringType), "oauth_scopes": types.ListNull(types.StringType), "service_account": types.StringNull(),
	} {
		if v, ok := attrs[name]; ok && v.IsUnknown() {
			attrs[name] = null
		}
	}
	obj, _ := types.ObjectValue(autoProvisioningAttrTypes, attrs)
	return obj
}

// generationValidator accepts the TPU generations of internal/tpu and their aliases.
type generationValidator struct{}

func (generationValidator) Description(context.Context) string {
	return "a TPU generation: " + strings.Join(tpu.GenerationNames(), ", ")
}

func (v generationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (generationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := tpu.LookupGeneration(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Unknown TPU Generation", fmt.Sprintf("%s: %s.", req.Path, err))
	}
}

// tpuLimitsUniqueValidator refuses two limits for one generation (aliases included): GKE takes one
// limit per resource type.
type tpuLimitsUniqueValidator struct{}

func (tpuLimitsUniqueValidator) Description(context.Context) string {
	return "at most one limit per TPU generation"
}

func (v tpuLimitsUniqueValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (tpuLimitsUniqueValidator) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var limits []tpuLimitModel
	if d := req.ConfigValue.ElementsAs(ctx, &limits, false); d.HasError() {
		return
	}
	first := map[string]int{}
	for i, l := range limits {
		if l.Generation.IsUnknown() || l.Generation.IsNull() {
			continue
		}
		g, err := tpu.LookupGeneration(l.Generation.ValueString())
		if err != nil {
			continue
		}
		if j, seen := first[g.Name]; seen {
			resp.Diagnostics.AddAttributeError(req.Path.AtListIndex(i).AtName("generation"), "Duplicate TPU Limit",
				fmt.Sprintf("%s: %s[%d] and %s[%d] both limit %s (%s in GKE): GKE takes one limit per TPU type. Merge them into one entry.",
					req.Path, req.Path, j, req.Path, i, g.Name, g.GKEAccelerator))
			continue
		}
		first[g.Name] = i
	}
}

// autoProvisioningValidator checks that each minimum is at most its maximum.
type autoProvisioningValidator struct{}

func (autoProvisioningValidator) Description(context.Context) string {
	return "min_cpu and min_memory_gb at most max_cpu and max_memory_gb"
}

func (v autoProvisioningValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (autoProvisioningValidator) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var ap autoProvisioningModel
	if d := req.ConfigValue.As(ctx, &ap, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true}); d.HasError() {
		return
	}
	for _, pair := range []struct {
		min, max       types.Int64
		minName, which string
	}{{ap.MinCPU, ap.MaxCPU, "min_cpu", "max_cpu"}, {ap.MinMemoryGB, ap.MaxMemoryGB, "min_memory_gb", "max_memory_gb"}} {
		if pair.min.IsNull() || pair.min.IsUnknown() || pair.max.IsNull() || pair.max.IsUnknown() {
			continue
		}
		if pair.min.ValueInt64() > pair.max.ValueInt64() {
			resp.Diagnostics.AddAttributeError(req.Path.AtName(pair.minName), "Invalid Auto-provisioning Limit",
				fmt.Sprintf("%s = %d is above %s = %d: GKE needs a minimum between 0 and the maximum. Lower %s or raise %s.",
					req.Path.AtName(pair.minName), pair.min.ValueInt64(), pair.which, pair.max.ValueInt64(), pair.minName, pair.which))
		}
	}
}
