package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var (
	_ resource.ResourceWithConfigure      = (*sliceResource)(nil)
	_ resource.ResourceWithImportState    = (*sliceResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sliceResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sliceResource)(nil)
)

// NewSliceResource returns raytpu_slice: one TPU slice as one GKE node pool.
func NewSliceResource() resource.Resource {
	return &sliceResource{}
}

type sliceResource struct {
	data *providerData
}

type sliceResourceModel struct {
	ID                  types.String   `tfsdk:"id"`
	Cluster             types.String   `tfsdk:"cluster"`
	Name                types.String   `tfsdk:"name"`
	Generation          types.String   `tfsdk:"generation"`
	Topology            types.String   `tfsdk:"topology"`
	AcceleratorType     types.String   `tfsdk:"accelerator_type"`
	ChipsPerHost        types.Int64    `tfsdk:"chips_per_host"`
	NodeVersion         types.String   `tfsdk:"node_version"`
	Zone                types.String   `tfsdk:"zone"`
	Spot                types.Bool     `tfsdk:"spot"`
	Reservation         types.Object   `tfsdk:"reservation"`
	QueuedProvisioning  types.Bool     `tfsdk:"queued_provisioning"`
	PlacementPolicyName types.String   `tfsdk:"placement_policy_name"`
	ServiceAccount      types.String   `tfsdk:"service_account"`
	OAuthScopes         types.List     `tfsdk:"oauth_scopes"`
	Labels              types.Map      `tfsdk:"labels"`
	ResourceLabels      types.Map      `tfsdk:"resource_labels"`
	DiskSizeGB          types.Int64    `tfsdk:"disk_size_gb"`
	DiskType            types.String   `tfsdk:"disk_type"`
	RayVersion          types.String   `tfsdk:"ray_version"`
	PythonVersion       types.String   `tfsdk:"python_version"`
	WaitForHosts        types.Bool     `tfsdk:"wait_for_hosts"`
	ReplaceUnhealthy    types.Bool     `tfsdk:"replace_unhealthy"`
	Timeouts            timeouts.Value `tfsdk:"timeouts"`
	GKEAccelerator      types.String   `tfsdk:"gke_accelerator"`
	MachineType         types.String   `tfsdk:"machine_type"`
	NumHosts            types.Int64    `tfsdk:"num_hosts"`
	TotalChips          types.Int64    `tfsdk:"total_chips"`
	MultiHost           types.Bool     `tfsdk:"multi_host"`
	PlacementType       types.String   `tfsdk:"placement_type"`
	NodeSelector        types.Map      `tfsdk:"node_selector"`
	Tolerations         types.List     `tfsdk:"tolerations"`
	TPUResource         types.Map      `tfsdk:"tpu_resource"`
	Ray                 types.Object   `tfsdk:"ray"`
	SlicePlacementGroup types.Object   `tfsdk:"slice_placement_group"`
	KubeRayWorkerGroup  types.String   `tfsdk:"kuberay_worker_group"`
	Hosts               types.List     `tfsdk:"hosts"`
	ReadyHosts          types.Int64    `tfsdk:"ready_hosts"`
	Status              types.String   `tfsdk:"status"`
	Healthy             types.Bool     `tfsdk:"healthy"`
}

var reservationAttrTypes = map[string]attr.Type{"name": types.StringType, "project": types.StringType}

// zonePattern recognises a zone (us-central2-b) as opposed to a region (us-central2).
var zonePattern = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+-[a-z]$`)

// clusterZone is the zone of a zonal cluster, the default zone of its slices; ok is false for a
// regional cluster.
func clusterZone(id gke.ClusterID) (string, bool) {
	return id.Location, zonePattern.MatchString(id.Location)
}

func (r *sliceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slice"
}

func (r *sliceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceBool := []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	derivedString := func(description string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	derivedInt := func(description string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: description}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One TPU slice as one GKE node pool. Write a generation and a topology (or an accelerator type); " +
			"raytpu derives the machine type, host count, placement and version floor, checks them at plan time, creates the " +
			"pool in one request, and never leaves half a slice: a pool whose creation fails is deleted before the error is " +
			"returned. The outputs feed Ray and KubeRay directly.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Cluster id, `projects/{project}/locations/{location}/clusters/{name}` (the `id` of `raytpu_cluster` or `google_container_cluster`).",
				Validators:          []validator.String{clusterIDValidator{}},
				PlanModifiers:       replaceString,
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Node pool name: lower-case letters, digits and hyphens, at most 40 characters. Also the KubeRay worker group name.",
				Validators:          []validator.String{gkeNameValidator()},
				PlanModifiers:       replaceString,
			},
			"generation": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "TPU generation: `v4`, `v5e`, `v5p`, `v6e` or `tpu7x` (aliases `v5litepod`, `trillium`, `v7x`, `ironwood`). " +
					"With `topology`; or leave both unset and set `accelerator_type`. A change of slice shape replaces the slice.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"topology": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Slice shape, `AxB` (v5e, v6e) or `AxBxC` (v4, v5p, tpu7x).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"accelerator_type": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Cloud TPU accelerator type such as `v6e-16` or `v5p-128`, instead of `generation` and `topology`. Always computed.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"chips_per_host": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Chips on each VM; unset picks one VM when the shape fits on one, else 4-chip VMs. `4` with v6e `2x4` makes two hosts.",
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"node_version": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "GKE version of the nodes; defaults to the cluster's control plane version. Must meet the generation's " +
					"minimum (v6e: 1.31.2-gke.1115000), checked at plan time when known. Pinned at creation, because a pool created " +
					"without a version may come up below that minimum. Changing it replaces the slice.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"zone": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Zone of the slice; defaults to the cluster's location when that is a zone. Required for regional clusters.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"spot": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Use Spot capacity.", PlanModifiers: replaceBool,
			},
			"reservation": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Consume a specific Compute Engine reservation.",
				PlanModifiers:       []planmodifier.Object{objectplanmodifier.RequiresReplace()},
				Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Required: true, MarkdownDescription: "Reservation name."},
					"project": schema.StringAttribute{Optional: true, MarkdownDescription: "Project of a shared reservation; the cluster's project when unset."},
				},
			},
			"queued_provisioning": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Create the pool empty and let nodes arrive through ProvisioningRequests (Dynamic Workload Scheduler). Hosts are not waited for.",
				PlanModifiers:       replaceBool,
			},
			"placement_policy_name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Name of a Compute Engine workload policy (`HIGH_THROUGHPUT`, with the slice's accelerator topology). Required " +
					"for multi-host tpu7x slices, which GKE places only this way; refused for other slices.",
				PlanModifiers: replaceString,
			},
			"service_account": schema.StringAttribute{
				Optional: true, MarkdownDescription: "Service account of the nodes; GKE's default when unset.", PlanModifiers: replaceString,
			},
			"oauth_scopes": schema.ListAttribute{
				Optional: true, Computed: true, ElementType: types.StringType,
				MarkdownDescription: "OAuth scopes of the nodes; GKE's default when unset.",
				PlanModifiers:       []planmodifier.List{listplanmodifier.RequiresReplaceIfConfigured(), listplanmodifier.UseStateForUnknown()},
			},
			"labels": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Kubernetes labels of the nodes. Updated in place.",
			},
			"resource_labels": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Google Cloud labels of the VMs. Updated in place.",
			},
			"disk_size_gb": schema.Int64Attribute{
				Optional: true, Computed: true, MarkdownDescription: "Boot disk size of each host in GB; GKE's default when unset.",
				Validators:    []validator.Int64{int64validator.AtLeast(10)},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplaceIfConfigured(), int64planmodifier.UseStateForUnknown()},
			},
			"disk_type": schema.StringAttribute{
				Optional: true, Computed: true, MarkdownDescription: "Boot disk type, for example `hyperdisk-balanced`; GKE's default when unset.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"ray_version": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("2.55.0"),
				MarkdownDescription: "Ray version of the image in `ray.image` and `kuberay_worker_group`. Default `2.55.0`.",
			},
			"python_version": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("3.10"),
				MarkdownDescription: "Python version of that image. Default `3.10`.",
			},
			"wait_for_hosts": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Return from create only when every host is a Ready Kubernetes node (not with queued provisioning). Default `true`. " +
					"The hosts are then watched while GKE creates the pool, which is how the provider learns that the pool is up: " +
					"the GKE operation is read only every `operation_poll_interval`, to see a failure.",
			},
			"replace_unhealthy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Plan a replacement when the slice is unhealthy (a failed host, `RUNNING_WITH_ERROR`, `ERROR`): " +
					"a TPU slice cannot be repaired in place. Default `false`.",
			},
			"timeouts":        timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
			"gke_accelerator": derivedString("Value of the `cloud.google.com/gke-tpu-accelerator` node label."),
			"machine_type":    derivedString("Machine type of every host."),
			"num_hosts":       derivedInt("Number of hosts (GKE nodes); KubeRay's `numOfHosts`."),
			"total_chips":     derivedInt("TPU chips in the slice."),
			"multi_host": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "Whether the slice spans several VMs.",
			},
			"placement_type": derivedString("`NONE`, `COMPACT` or `WORKLOAD_POLICY`."),
			"node_selector": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Node selector that lands a pod on this slice: accelerator, topology and `cloud.google.com/gke-nodepool`.",
			},
			"tolerations": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Tolerations for the TPU taint GKE puts on every TPU node.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key": schema.StringAttribute{Computed: true}, "operator": schema.StringAttribute{Computed: true},
					"value": schema.StringAttribute{Computed: true}, "effect": schema.StringAttribute{Computed: true},
				}},
			},
			"tpu_resource": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Container resources of one host, `{\"google.com/tpu\" = \"<chips per host>\"}`.",
			},
			"ray": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Ray's names for the slice, and the Ray TPU image.",
				Attributes: map[string]schema.Attribute{
					"accelerator_version": derivedString("Ray's generation name, for example `v6e`."),
					"accelerator_type":    derivedString("Ray's `ray.io/accelerator-type` label, for example `TPU-V6E`."),
					"pod_type":            derivedString("Ray's TPU pod type, for example `v6e-16`."),
					"head_resource":       derivedString("Resource on worker 0 only, for example `TPU-v6e-16-head`."),
					"topology_supported": schema.BoolAttribute{
						Computed: true, MarkdownDescription: "Whether `ray.util.tpu.slice_placement_group` accepts the topology.",
					},
					"image": derivedString("Official Ray TPU image, for example `rayproject/ray:2.55.0-py310-tpu`."),
				},
			},
			"slice_placement_group": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Arguments of `ray.util.tpu.slice_placement_group` that reserve this slice.",
				Attributes: map[string]schema.Attribute{
					"topology":            derivedString("`topology` argument."),
					"accelerator_version": derivedString("`accelerator_version` argument."),
					"chips_per_vm":        derivedInt("`chips_per_vm` argument (needed for v6e `2x4` on two VMs)."),
					"num_slices":          derivedInt("`num_slices` argument: this resource is one slice."),
				},
			},
			"kuberay_worker_group": derivedString("A KubeRay `WorkerGroupSpec` for this slice, as JSON: `numOfHosts`, one replica, the Ray " +
				"image with `google.com/tpu` limits and requests, node selector and toleration. Use `jsondecode` to put it in a RayCluster."),
			"hosts": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Kubernetes node names of the slice's hosts, in worker order.",
			},
			"ready_hosts": derivedInt("Hosts whose node is Ready."),
			"status":      derivedString("GKE status of the node pool, for example `RUNNING`."),
			"healthy": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "The pool is `RUNNING` and every host is Ready.",
			},
		},
	}
}

func (r *sliceResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredProviderData(req.ProviderData, &resp.Diagnostics)
}

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
	policy := config.PlacementPolicyName
	needsPolicy := s.Placement == tpu.PlacementWorkloadPolicy
	switch {
	case needsPolicy && policy.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("placement_policy_name"), "Missing Placement Policy",
			fmt.Sprintf("A multi-host %s slice is placed by a Compute Engine workload policy (HIGH_THROUGHPUT, accelerator topology %s); "+
				"GKE refuses COMPACT placement for it. Create the policy and set placement_policy_name to its name.", s.Generation.Name, s.Topology))
	case !needsPolicy && !policy.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("placement_policy_name"), "Placement Policy Not Applicable",
			fmt.Sprintf("placement_policy_name applies only to multi-host tpu7x slices; %s %s is placed as %s. Remove it.",
				s.Generation.Name, s.Topology, s.Placement))
	}
	capacity := 0
	for _, set := range []bool{config.Spot.ValueBool(), !config.Reservation.IsNull(), config.QueuedProvisioning.ValueBool()} {
		if set {
			capacity++
		}
	}
	if capacity > 1 {
		resp.Diagnostics.AddAttributeError(path.Root("spot"), "Conflicting Capacity Options",
			"spot, reservation and queued_provisioning are different ways to obtain TPU capacity: choose one.")
	}
	if v := config.NodeVersion; !v.IsNull() && !v.IsUnknown() {
		resp.Diagnostics.Append(checkNodeVersion(v.ValueString(), s)...)
	}
}

// checkNodeVersion refuses a node version that cannot meet the generation's minimum.
func checkNodeVersion(version string, s *tpu.Slice) diag.Diagnostics {
	var diags diag.Diagnostics
	v, err := tpu.ParseVersion(version)
	if err != nil {
		diags.AddAttributeError(path.Root("node_version"), "Invalid GKE Version", err.Error()+".")
		return diags
	}
	if !v.CanMeet(s.Generation.MinGKEVersion) {
		diags.AddAttributeError(path.Root("node_version"), "GKE Version Too Old for TPU Generation",
			fmt.Sprintf("node_version %s is below %s, the first GKE version that runs %s. Use %s or later (a newer cluster "+
				"version, or set node_version explicitly).", v, s.Generation.MinGKEVersion, s.Generation.DisplayName, s.Generation.MinGKEVersion))
	}
	return diags
}

// ModifyPlan makes every derived output known in the plan, replaces the slice when its shape
// changes (not when the same shape is written another way), checks a version known only from the
// cluster, and, with replace_unhealthy, replaces an unhealthy slice.
func (r *sliceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
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
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("topology"), path.Root("generation"), path.Root("accelerator_type"), path.Root("chips_per_host"))
		}
	}
	if state == nil {
		if id, err := gke.ParseClusterID(plan.Cluster.ValueString()); err == nil && !plan.Cluster.IsUnknown() && !plan.Name.IsUnknown() {
			plan.ID = types.StringValue(gke.NodePoolID{Cluster: id, Name: plan.Name.ValueString()}.String())
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
	outputs, diags := deriveSliceOutputs(ctx, s, plan.Name.ValueString(), plan.RayVersion.ValueString(), plan.PythonVersion.ValueString())
	resp.Diagnostics.Append(diags...)
	plan.setOutputs(outputs)
	if state == nil {
		r.planFromCluster(ctx, &plan, s, &resp.Diagnostics)
	} else if plan.ReplaceUnhealthy.ValueBool() && !state.Healthy.IsNull() && !state.Healthy.ValueBool() {
		plan.Healthy = types.BoolUnknown()
		plan.Status = types.StringUnknown()
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("healthy"))
		resp.Diagnostics.AddAttributeWarning(path.Root("healthy"), "Replacing Unhealthy Slice",
			fmt.Sprintf("%s is %s with %d of %d hosts Ready; replace_unhealthy is set, so it is replaced: a TPU slice cannot be repaired in place.",
				state.ID.ValueString(), state.Status.ValueString(), state.ReadyHosts.ValueInt64(), state.NumHosts.ValueInt64()))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planFromCluster fills node_version and zone from the cluster when it already exists, so that
// they are known, and checked, in the plan.
func (r *sliceResource) planFromCluster(ctx context.Context, plan *sliceResourceModel, s *tpu.Slice, diags *diag.Diagnostics) {
	if r.data == nil || plan.Cluster.IsUnknown() {
		return
	}
	id, err := gke.ParseClusterID(plan.Cluster.ValueString())
	if err != nil {
		return
	}
	if zone, ok := clusterZone(id); ok && plan.Zone.IsUnknown() {
		plan.Zone = types.StringValue(zone)
	}
	if !plan.NodeVersion.IsUnknown() {
		return
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		return
	}
	cluster, err := r.data.clusters.get(ctx, client, id)
	if err != nil {
		// The cluster is created in the same apply, or unreachable now: apply checks again.
		tflog.Debug(ctx, "cluster not readable at plan time", map[string]any{"cluster": id.String(), "error": err.Error()})
		return
	}
	plan.NodeVersion = types.StringValue(cluster.GetCurrentMasterVersion())
	diags.Append(checkNodeVersion(cluster.GetCurrentMasterVersion(), s)...)
}

func (r *sliceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, 2*time.Hour, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	s, diags := resolveShape(plan.shape())
	resp.Diagnostics.Append(diags...)
	if s == nil || resp.Diagnostics.HasError() {
		return
	}
	clusterID, _ := gke.ParseClusterID(plan.Cluster.ValueString())
	id := gke.NodePoolID{Cluster: clusterID, Name: plan.Name.ValueString()}
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError("Error Creating Slice", fmt.Sprintf("creating raytpu_slice (%s): ", id)+fmt.Sprintf(format, args...))
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		fail("%s", err)
		return
	}
	cluster, err := r.data.clusters.get(ctx, client, clusterID)
	if err != nil {
		fail("reading the cluster: %s", gke.WithAdvice(err))
		return
	}
	// Checked again here: at plan time the cluster may not have existed yet.
	if plan.NodeVersion.IsUnknown() || plan.NodeVersion.IsNull() {
		plan.NodeVersion = types.StringValue(cluster.GetCurrentMasterVersion())
	}
	if d := checkNodeVersion(plan.NodeVersion.ValueString(), s); d.HasError() {
		resp.Diagnostics.Append(d...)
		return
	}
	if plan.Zone.IsUnknown() || plan.Zone.IsNull() {
		zone, ok := clusterZone(clusterID)
		if !ok {
			resp.Diagnostics.AddAttributeError(path.Root("zone"), "Missing Zone",
				fmt.Sprintf("%s is a regional cluster: set zone to one of its zones that offers %s.", clusterID, s.Generation.DisplayName))
			return
		}
		plan.Zone = types.StringValue(zone)
	}
	pool, diags := expandNodePool(ctx, plan, s)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		fail("%s", err)
		return
	}
	defer unlock()
	op, err := client.CreateNodePool(ctx, id, pool)
	if err != nil {
		fail("%s", gke.WithAdvice(err))
		return
	}
	// GKE accepted the pool: record it now, so that an interrupted wait leaves it in state.
	plan.ID = types.StringValue(id.String())
	plan.setLiveNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	// The hosts are watched while GKE creates the pool: their turning Ready is what tells the
	// wait that the pool is up, without polling the operation for it.
	var hosts *hostWait
	var hostsUp <-chan struct{}
	if plan.WaitForHosts.ValueBool() && !plan.QueuedProvisioning.ValueBool() {
		hosts = startHostWait(ctx, client, cluster, id.Name, s.Hosts)
		defer hosts.stop()
		hostsUp = hosts.done
	}
	created, err := client.WaitForNodePoolCreation(ctx, id, op, hostsUp)
	if err != nil {
		var opErr *gke.OperationError
		if !errors.As(err, &opErr) {
			fail("waiting for the node pool: %s%s", gke.WithAdvice(err), keptInState)
			return
		}
		hosts.stop()
		// Atomic: a failed creation may leave a pool in ERROR; delete it before reporting.
		cleanup := deleteNodePool(ctx, client, id)
		if cleanup != nil {
			fail("%s\n\nThe partly created node pool could not be deleted (%s); it stays in state and the next apply replaces it.", gke.WithAdvice(err), cleanup)
			return
		}
		resp.State.RemoveResource(ctx)
		fail("%s\n\nNothing was left behind: the node pool GKE started was deleted.", gke.WithAdvice(err))
		return
	}
	unlock()
	if err := hosts.result(); err != nil {
		fail("waiting for its %d hosts to be Ready Kubernetes nodes: %s%s", s.Hosts, err, keptInState)
		return
	}
	resp.Diagnostics.Append(r.readPool(ctx, client, &plan, cluster, created)...)
	resp.Private.SetKey(ctx, privateClusterKey, clusterAccess(cluster))
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *sliceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state sliceResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("reading raytpu_slice (%s): %s", state.ID.ValueString(), err))
		return
	}
	// The cluster's endpoint and CA are kept in private state, so a refresh costs one GKE call per slice.
	access, diags := req.Private.GetKey(ctx, privateClusterKey)
	resp.Diagnostics.Append(diags...)
	cluster := clusterFromAccess(access)
	if cluster == nil {
		clusterID, _ := gke.ParseClusterID(state.Cluster.ValueString())
		if cluster, err = r.data.clusters.get(ctx, client, clusterID); err != nil {
			if gke.IsNotFound(err) {
				resp.State.RemoveResource(ctx)
				return
			}
			resp.Diagnostics.AddError("Error Reading Slice", fmt.Sprintf("reading raytpu_slice (%s): %s", state.ID.ValueString(), gke.WithAdvice(err)))
			return
		}
		resp.Private.SetKey(ctx, privateClusterKey, clusterAccess(cluster))
	}
	diags = r.refresh(ctx, client, &state, cluster)
	if state.ID.IsNull() {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *sliceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, 30*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, _ := gke.ParseNodePoolID(state.ID.ValueString())
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("updating raytpu_slice (%s): %s", id, err))
		return
	}
	update := &containerpb.UpdateNodePoolRequest{Name: id.String()}
	changed := false
	if !plan.Labels.Equal(state.Labels) {
		labels := map[string]string{}
		resp.Diagnostics.Append(plan.Labels.ElementsAs(ctx, &labels, false)...)
		update.Labels, changed = &containerpb.NodeLabels{Labels: labels}, true
	}
	if !plan.ResourceLabels.Equal(state.ResourceLabels) {
		labels := map[string]string{}
		resp.Diagnostics.Append(plan.ResourceLabels.ElementsAs(ctx, &labels, false)...)
		update.ResourceLabels, changed = &containerpb.ResourceLabels{Labels: labels}, true
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if changed {
		err := mutateNodePool(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.UpdateNodePool(ctx, update)
		})
		if err != nil {
			resp.Diagnostics.AddError("Error Updating Slice", fmt.Sprintf("updating raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	// Ray settings and waits live in Terraform only; the live attributes keep their refreshed values.
	plan.ID = state.ID
	plan.Hosts, plan.ReadyHosts, plan.Status, plan.Healthy = state.Hosts, state.ReadyHosts, state.Status, state.Healthy
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *sliceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state sliceResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, time.Hour, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, err := gke.ParseNodePoolID(state.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice: %s", err))
		return
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, err))
		return
	}
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, err))
		return
	}
	defer unlock()
	if err := deleteNodePool(ctx, client, id); err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
	}
}

func (r *sliceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	project := ""
	if r.data != nil {
		project = r.data.project
	}
	id, err := gke.ParseNodePoolImportID(req.ID, project)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import ID", err.Error()+".")
		return
	}
	// Read fills the rest; settings that live only in Terraform take their defaults.
	for attribute, value := range map[string]any{
		"id": id.String(), "cluster": id.Cluster.String(), "name": id.Name,
		"ray_version": "2.55.0", "python_version": "3.10", "wait_for_hosts": true, "replace_unhealthy": false,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attribute), value)...)
	}
}

// deleteNodePool deletes a pool and waits; a pool already gone counts as deleted. The caller
// holds the pool's lock.
func deleteNodePool(ctx context.Context, client *gke.Client, id gke.NodePoolID) error {
	op, err := client.DeleteNodePool(ctx, id)
	if gke.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id.Cluster, op)
}

// refresh reads the pool and its hosts into m. A pool that no longer exists leaves m.ID null.
func (r *sliceResource) refresh(ctx context.Context, client *gke.Client, m *sliceResourceModel, cluster *containerpb.Cluster) diag.Diagnostics {
	var diags diag.Diagnostics
	id, _ := gke.ParseNodePoolID(m.ID.ValueString())
	pool, err := client.GetNodePool(ctx, id)
	if gke.IsNotFound(err) {
		m.ID = types.StringNull()
		return diags
	}
	if err != nil {
		diags.AddError("Error Reading Slice", fmt.Sprintf("reading raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
		return diags
	}
	return r.readPool(ctx, client, m, cluster, pool)
}

// readPool copies pool, as GKE just reported it, and its hosts into m.
func (r *sliceResource) readPool(ctx context.Context, client *gke.Client, m *sliceResourceModel, cluster *containerpb.Cluster, pool *containerpb.NodePool) diag.Diagnostics {
	var diags diag.Diagnostics
	id, _ := gke.ParseNodePoolID(m.ID.ValueString())
	diags.Append(flattenNodePool(ctx, pool, m)...)
	if diags.HasError() {
		return diags
	}
	hosts := []kube.Host{}
	if pool.GetStatus() == containerpb.NodePool_RUNNING || pool.GetStatus() == containerpb.NodePool_RUNNING_WITH_ERROR {
		k, err := kubeClient(client, cluster)
		if err == nil {
			hosts, err = k.SliceHosts(ctx, id.Name)
			k.Close()
		}
		if err != nil {
			diags.AddWarning("Slice Hosts Unknown", fmt.Sprintf("listing the hosts of raytpu_slice (%s): %s", id, err))
		}
	}
	names := make([]string, len(hosts))
	ready := 0
	for i, h := range hosts {
		names[i] = h.Name
		if h.Ready {
			ready++
		}
	}
	list, d := types.ListValueFrom(ctx, types.StringType, names)
	diags.Append(d...)
	m.Hosts = list
	m.ReadyHosts = types.Int64Value(int64(ready))
	m.Status = types.StringValue(pool.GetStatus().String())
	wantHosts := m.NumHosts.ValueInt64()
	if m.QueuedProvisioning.ValueBool() {
		wantHosts = int64(len(hosts))
	}
	m.Healthy = types.BoolValue(pool.GetStatus() == containerpb.NodePool_RUNNING && int64(ready) == wantHosts)
	return diags
}

// flattenNodePool copies what GKE reports into m and derives the outputs from it, so that an
// imported slice or one changed outside Terraform shows its real shape.
func flattenNodePool(ctx context.Context, pool *containerpb.NodePool, m *sliceResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	cfg := pool.GetConfig()
	current, _ := resolveShape(m.shape())
	s, err := nodePoolSlice(pool, current)
	if err != nil {
		diags.AddError("Not a TPU Slice", fmt.Sprintf("node pool %s is not a TPU slice raytpu understands: %s.", pool.GetName(), err))
		return diags
	}
	// Keep the configuration's spelling when it names the same shape (an alias, or accelerator_type).
	if current != s {
		m.Generation = types.StringValue(s.Generation.Name)
		m.Topology = types.StringValue(s.Topology.String())
		m.AcceleratorType = types.StringValue(s.AcceleratorType())
		m.ChipsPerHost = types.Int64Value(int64(s.ChipsPerHost()))
	}
	outputs, d := deriveSliceOutputs(ctx, s, pool.GetName(), m.RayVersion.ValueString(), m.PythonVersion.ValueString())
	diags.Append(d...)
	m.setOutputs(outputs)
	m.Name = types.StringValue(pool.GetName())
	m.NodeVersion = types.StringValue(pool.GetVersion())
	if locations := pool.GetLocations(); len(locations) == 1 {
		m.Zone = types.StringValue(locations[0])
	}
	m.Spot = types.BoolValue(cfg.GetSpot())
	m.QueuedProvisioning = types.BoolValue(pool.GetQueuedProvisioning().GetEnabled())
	if name := pool.GetPlacementPolicy().GetPolicyName(); name != "" {
		m.PlacementPolicyName = types.StringValue(name)
	}
	if affinity := cfg.GetReservationAffinity(); affinity.GetConsumeReservationType() == containerpb.ReservationAffinity_SPECIFIC_RESERVATION && len(affinity.GetValues()) == 1 {
		name, project := affinity.GetValues()[0], types.StringNull()
		if p, rest, ok := strings.Cut(strings.TrimPrefix(name, "projects/"), "/reservations/"); ok {
			name, project = rest, types.StringValue(p)
		}
		m.Reservation = types.ObjectValueMust(reservationAttrTypes, map[string]attr.Value{"name": types.StringValue(name), "project": project})
	}
	if sa := cfg.GetServiceAccount(); sa != "" && sa != "default" {
		m.ServiceAccount = types.StringValue(sa)
	}
	m.DiskSizeGB = types.Int64Value(int64(cfg.GetDiskSizeGb()))
	m.DiskType = types.StringValue(cfg.GetDiskType())
	scopes, d := types.ListValueFrom(ctx, types.StringType, cfg.GetOauthScopes())
	diags.Append(d...)
	m.OAuthScopes = scopes
	m.Labels = mapOrNull(ctx, cfg.GetLabels(), m.Labels, &diags)
	m.ResourceLabels = mapOrNull(ctx, cfg.GetResourceLabels(), m.ResourceLabels, &diags)
	return diags
}

// nodePoolSlice is the slice a node pool holds. A pool placed by a workload policy may not report
// its topology (the policy holds it); then the known slice stands if the machine type and the
// node count agree with it.
func nodePoolSlice(pool *containerpb.NodePool, known *tpu.Slice) (*tpu.Slice, error) {
	machineType, topology := pool.GetConfig().GetMachineType(), pool.GetPlacementPolicy().GetTpuTopology()
	if topology == "" && pool.GetPlacementPolicy().GetPolicyName() != "" {
		if known != nil && known.MachineType.Name == machineType && int(pool.GetInitialNodeCount()) == known.Hosts {
			return known, nil
		}
		return nil, fmt.Errorf("it is placed by workload policy %s and reports no TPU topology", pool.GetPlacementPolicy().GetPolicyName())
	}
	s, err := tpu.SliceForNodePool(machineType, topology)
	if err != nil {
		return nil, err
	}
	if known != nil && *known == *s {
		return known, nil
	}
	return s, nil
}

// mapOrNull keeps an unset map unset when GKE reports it empty.
func mapOrNull(ctx context.Context, values map[string]string, current types.Map, diags *diag.Diagnostics) types.Map {
	if len(values) == 0 && current.IsNull() {
		return current
	}
	m, d := types.MapValueFrom(ctx, types.StringType, values)
	diags.Append(d...)
	return m
}

// expandNodePool is the CreateNodePool request body for the slice.
func expandNodePool(ctx context.Context, m sliceResourceModel, s *tpu.Slice) (*containerpb.NodePool, diag.Diagnostics) {
	var diags diag.Diagnostics
	labels, resourceLabels := map[string]string{}, map[string]string{}
	diags.Append(m.Labels.ElementsAs(ctx, &labels, false)...)
	diags.Append(m.ResourceLabels.ElementsAs(ctx, &resourceLabels, false)...)
	var scopes []string
	if !m.OAuthScopes.IsUnknown() {
		diags.Append(m.OAuthScopes.ElementsAs(ctx, &scopes, false)...)
	}
	nodes := int32(s.Hosts)
	if m.QueuedProvisioning.ValueBool() {
		nodes = 0
	}
	pool := &containerpb.NodePool{
		Name:             m.Name.ValueString(),
		InitialNodeCount: nodes,
		Version:          m.NodeVersion.ValueString(),
		Locations:        []string{m.Zone.ValueString()},
		Config: &containerpb.NodeConfig{
			MachineType:    s.MachineType.Name,
			Spot:           m.Spot.ValueBool(),
			Labels:         labels,
			ResourceLabels: resourceLabels,
			ServiceAccount: m.ServiceAccount.ValueString(),
			OauthScopes:    scopes,
			DiskSizeGb:     int32(m.DiskSizeGB.ValueInt64()),
			DiskType:       m.DiskType.ValueString(),
		},
	}
	switch s.Placement {
	case tpu.PlacementCompact:
		pool.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: s.TPUTopology()}
	case tpu.PlacementWorkloadPolicy:
		pool.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{PolicyName: m.PlacementPolicyName.ValueString()}
	}
	if m.QueuedProvisioning.ValueBool() {
		pool.QueuedProvisioning = &containerpb.NodePool_QueuedProvisioning{Enabled: true}
	}
	if !m.Reservation.IsNull() {
		var reservation struct {
			Name    types.String `tfsdk:"name"`
			Project types.String `tfsdk:"project"`
		}
		diags.Append(m.Reservation.As(ctx, &reservation, basetypes.ObjectAsOptions{})...)
		value := reservation.Name.ValueString()
		if !reservation.Project.IsNull() {
			value = fmt.Sprintf("projects/%s/reservations/%s", reservation.Project.ValueString(), value)
		}
		pool.Config.ReservationAffinity = &containerpb.ReservationAffinity{
			ConsumeReservationType: containerpb.ReservationAffinity_SPECIFIC_RESERVATION,
			Key:                    "compute.googleapis.com/reservation-name",
			Values:                 []string{value},
		}
	}
	return pool, diags
}

// configShape is the shape inputs as written in the configuration.
func (m sliceResourceModel) configShape() shapeInputs {
	return shapeInputs{Generation: m.Generation, Topology: m.Topology, AcceleratorType: m.AcceleratorType, ChipsPerHost: m.ChipsPerHost}
}

// shape is the shape of a planned or stored slice, where generation, topology and
// accelerator_type are all set and name the same shape: generation and topology are read.
func (m sliceResourceModel) shape() shapeInputs {
	if m.Generation.IsNull() {
		return shapeInputs{Generation: types.StringNull(), Topology: types.StringNull(), AcceleratorType: m.AcceleratorType, ChipsPerHost: m.ChipsPerHost}
	}
	return shapeInputs{Generation: m.Generation, Topology: m.Topology, AcceleratorType: types.StringNull(), ChipsPerHost: m.ChipsPerHost}
}

// setOutputs copies the derived outputs; accelerator_type, which may also be an input, is the
// caller's to set.
func (m *sliceResourceModel) setOutputs(o sliceOutputs) {
	m.GKEAccelerator, m.MachineType = o.GKEAccelerator, o.MachineType
	m.NumHosts, m.TotalChips, m.MultiHost, m.PlacementType = o.NumHosts, o.TotalChips, o.MultiHost, o.PlacementType
	m.NodeSelector, m.Tolerations, m.TPUResource = o.NodeSelector, o.Tolerations, o.TPUResource
	m.Ray, m.SlicePlacementGroup, m.KubeRayWorkerGroup = o.Ray, o.SlicePlacementGroup, o.KubeRayWorkerGroup
}

func (m *sliceResourceModel) setDerivedUnknown() {
	m.GKEAccelerator, m.MachineType, m.PlacementType, m.KubeRayWorkerGroup = types.StringUnknown(), types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	m.NumHosts, m.TotalChips = types.Int64Unknown(), types.Int64Unknown()
	m.MultiHost = types.BoolUnknown()
	m.NodeSelector, m.TPUResource = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	m.Tolerations = types.ListUnknown(types.ObjectType{AttrTypes: tolerationAttrTypes})
	m.Ray = types.ObjectUnknown(sliceRayAttrTypes)
	m.SlicePlacementGroup = types.ObjectUnknown(placementGroupAttrTypes)
}

// setLiveNull keeps unknown live values out of the state written before the pool is ready.
func (m *sliceResourceModel) setLiveNull() {
	if m.DiskSizeGB.IsUnknown() {
		m.DiskSizeGB = types.Int64Null()
	}
	if m.DiskType.IsUnknown() {
		m.DiskType = types.StringNull()
	}
	if m.OAuthScopes.IsUnknown() {
		m.OAuthScopes = types.ListNull(types.StringType)
	}
	m.Hosts = types.ListNull(types.StringType)
	m.ReadyHosts, m.Status, m.Healthy = types.Int64Null(), types.StringNull(), types.BoolNull()
}

// privateClusterKey holds, in a slice's private state, how to reach its cluster's API server.
const privateClusterKey = "cluster_access"

type clusterAccessData struct {
	Endpoint      string `json:"endpoint"`
	CACertificate string `json:"ca_certificate"`
}

func clusterAccess(c *containerpb.Cluster) []byte {
	out, _ := json.Marshal(clusterAccessData{Endpoint: c.GetEndpoint(), CACertificate: c.GetMasterAuth().GetClusterCaCertificate()})
	return out
}

// clusterFromAccess rebuilds the two fields of a cluster that the kube client needs.
func clusterFromAccess(data []byte) *containerpb.Cluster {
	var a clusterAccessData
	if len(data) == 0 || json.Unmarshal(data, &a) != nil || a.Endpoint == "" {
		return nil
	}
	return &containerpb.Cluster{Endpoint: a.Endpoint, MasterAuth: &containerpb.MasterAuth{ClusterCaCertificate: a.CACertificate}}
}

func kubeClient(client *gke.Client, cluster *containerpb.Cluster) (*kube.Client, error) {
	return kube.NewClient(kube.Cluster{
		Endpoint:            cluster.GetEndpoint(),
		CACertificateBase64: cluster.GetMasterAuth().GetClusterCaCertificate(),
		TokenSource:         client.TokenSource(),
	})
}

// keptInState ends the error of a creation whose wait did not end well while the pool lives on.
const keptInState = "\n\nThe node pool is in state, so nothing is lost or duplicated: Terraform marks this slice " +
	"tainted and the next apply replaces it. To keep the pool instead once it is ready, run terraform untaint on this slice first."

// hostWait waits in the background until want hosts of a pool are Ready Kubernetes nodes. Its
// methods are safe on a nil *hostWait, which stands for no wait.
type hostWait struct {
	done   chan struct{} // closed when the wait ends, well or not
	cancel context.CancelFunc
	err    error
}

func startHostWait(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, pool string, want int) *hostWait {
	ctx, cancel := context.WithCancel(ctx)
	w := &hostWait{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(w.done)
		k, err := kubeClient(client, cluster)
		if err != nil {
			w.err = err
			return
		}
		defer k.Close()
		// Watched: the interval only spaces new listings after a watch ends or fails.
		_, w.err = k.WaitForSliceHosts(ctx, pool, want, kube.DefaultPollInterval)
	}()
	return w
}

// result waits for the end of the wait and returns its error.
func (w *hostWait) result() error {
	if w == nil {
		return nil
	}
	<-w.done
	return w.err
}

// stop ends the wait and waits for it to return.
func (w *hostWait) stop() {
	if w == nil {
		return
	}
	w.cancel()
	<-w.done
}
