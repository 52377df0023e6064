package provider

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var (
	_ resource.ResourceWithConfigure   = (*rayOperatorResource)(nil)
	_ resource.ResourceWithImportState = (*rayOperatorResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*rayOperatorResource)(nil)
)

// NewRayOperatorResource returns raytpu_ray_operator: the Ray Operator add-on of a cluster that
// another configuration manages.
func NewRayOperatorResource() resource.Resource {
	return rayOperatorResourceWithIdentity{&rayOperatorResource{}}
}

type rayOperatorResource struct {
	resourceBase
}

// rayOperatorTimeouts are the defaults of the timeouts block, which the resource page lists.
var rayOperatorTimeouts = OperationTimeouts{Create: 30 * time.Minute, Update: 30 * time.Minute, Delete: 30 * time.Minute}

func (r *rayOperatorResource) DefaultTimeouts() OperationTimeouts { return rayOperatorTimeouts }

type rayOperatorResourceModel struct {
	ID               types.String   `tfsdk:"id"`
	Cluster          types.String   `tfsdk:"cluster"`
	Logging          types.Bool     `tfsdk:"logging"`
	Monitoring       types.Bool     `tfsdk:"monitoring"`
	WaitForKubeRay   types.Bool     `tfsdk:"wait_for_kuberay"`
	DisableOnDestroy types.Bool     `tfsdk:"disable_on_destroy"`
	KubeRay          types.Object   `tfsdk:"kuberay"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

func (r *rayOperatorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ray_operator"
}

func (r *rayOperatorResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Enables GKE's Ray Operator add-on (GKE-managed KubeRay) on a cluster managed elsewhere, for example by " +
			"`google_container_cluster`, and waits until the KubeRay CRDs serve. Destroying it disables the add-on again " +
			"unless `disable_on_destroy = false`. For clusters created by raytpu, use `raytpu_cluster`, which always enables it.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The cluster id.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Cluster id, `projects/{project}/locations/{location}/clusters/{name}` (the `id` of " +
					"`google_container_cluster` or `raytpu_cluster`). The cluster must run " + tpu.RayOperatorMinVersion.String() + " or later.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{clusterIDValidator{}},
			},
			"logging": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Send Ray cluster logs to Cloud Logging.",
			},
			"monitoring": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Send Ray cluster metrics to Cloud Monitoring.",
			},
			"wait_for_kuberay": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Wait until the KubeRay CRDs are Established before returning. Default `true`.",
			},
			"disable_on_destroy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Disable the add-on when this resource is destroyed. Default `true`.",
			},
			"kuberay": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "KubeRay as seen in the cluster's API server.",
				Attributes: map[string]schema.Attribute{
					"ready": schema.BoolAttribute{Computed: true, MarkdownDescription: "Every KubeRay CRD is Established."},
					"crds": schema.ListAttribute{
						Computed: true, ElementType: types.StringType,
						MarkdownDescription: "The Established KubeRay CRDs.",
					},
				},
			},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// ModifyPlan plans another wait while KubeRay is not ready (see planKubeRayWait).
func (r *rayOperatorResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var plan, state rayOperatorResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.KubeRay = planKubeRayWait(state.KubeRay, plan.WaitForKubeRay)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *rayOperatorResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rayOperatorResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, rayOperatorTimeouts.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, _ := gke.ParseClusterID(plan.Cluster.ValueString())
	plan.ID = types.StringValue(id.String())
	if err := r.setAddon(ctx, id, true, plan, true); err != nil {
		resp.Diagnostics.AddError("Error Enabling Ray Operator", fmt.Sprintf("creating raytpu_ray_operator (%s): %s", id, gke.WithAdvice(err)))
		return
	}
	r.read(ctx, &plan, plan.WaitForKubeRay.ValueBool(), &resp.Diagnostics, gke.Fresh)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayOperatorResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state rayOperatorResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.read(ctx, &state, false, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *rayOperatorResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state rayOperatorResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, rayOperatorTimeouts.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, _ := gke.ParseClusterID(plan.Cluster.ValueString())
	if !plan.Logging.Equal(state.Logging) || !plan.Monitoring.Equal(state.Monitoring) {
		if err := r.setAddon(ctx, id, true, plan, false); err != nil {
			resp.Diagnostics.AddError("Error Updating Ray Operator", fmt.Sprintf("updating raytpu_ray_operator (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	r.read(ctx, &plan, plan.WaitForKubeRay.ValueBool(), &resp.Diagnostics, gke.Fresh)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayOperatorResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state rayOperatorResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !state.DisableOnDestroy.ValueBool() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, rayOperatorTimeouts.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, _ := gke.ParseClusterID(state.Cluster.ValueString())
	if err := r.setAddon(ctx, id, false, state, false); err != nil && !gke.IsNotFound(err) {
		resp.Diagnostics.AddError("Error Disabling Ray Operator", fmt.Sprintf("deleting raytpu_ray_operator (%s): %s", id, gke.WithAdvice(err)))
	}
}

func (r *rayOperatorResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := gke.ParseClusterImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, rayOperatorAdoptedAttributes(id))
}

// setAddon turns the add-on on (with the model's settings) or off, keeping the cluster's other
// add-ons as they are: SetAddonsConfig replaces the whole configuration. With checkVersion it
// first refuses a cluster below the add-on's minimum version. GKE's errors are returned as they
// are, so that callers can tell a cluster that is gone.
func (r *rayOperatorResource) setAddon(ctx context.Context, id gke.ClusterID, enabled bool, m rayOperatorResourceModel, checkVersion bool) error {
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		return err
	}
	unlock, err := client.LockCluster(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	// Fresh: the add-ons written are these with the Ray Operator's changed.
	cluster, err := client.GetCluster(ctx, id, gke.Fresh)
	if err != nil {
		return err
	}
	if checkVersion {
		current, err := tpu.ParseVersion(cluster.GetCurrentMasterVersion())
		if err == nil && current.Less(tpu.RayOperatorMinVersion) {
			return fmt.Errorf("the cluster runs GKE %s, below %s, the first version with the Ray Operator add-on: "+
				"upgrade the control plane first", current, tpu.RayOperatorMinVersion)
		}
	}
	addons, ok := proto.Clone(cluster.GetAddonsConfig()).(*containerpb.AddonsConfig)
	if !ok || addons == nil {
		addons = &containerpb.AddonsConfig{}
	}
	addons.RayOperatorConfig = expandRayOperator(enabled, rayOperatorSettings{Logging: m.Logging, Monitoring: m.Monitoring})
	op, err := client.SetAddons(ctx, id, addons)
	if err == nil {
		err = client.WaitForOperation(ctx, id, op)
	}
	if err != nil {
		return err
	}
	return nil
}

// read refreshes m from the cluster, read as opts ask (gke.Fresh after a write). It returns false
// when the cluster is gone or the add-on was disabled outside Terraform, so that the next plan
// enables it again.
func (r *rayOperatorResource) read(ctx context.Context, m *rayOperatorResourceModel, wait bool, diags *diag.Diagnostics, opts ...gke.ReadOption) bool {
	id, _ := gke.ParseClusterID(m.Cluster.ValueString())
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		diags.AddError("GKE Client Error", fmt.Sprintf("reading raytpu_ray_operator (%s): %s", id, err))
		return true
	}
	cluster, err := client.GetCluster(ctx, id, opts...)
	if gke.IsNotFound(err) {
		return false
	}
	if err != nil {
		diags.AddError("Error Reading Ray Operator", fmt.Sprintf("reading raytpu_ray_operator (%s): %s", id, gke.WithAdvice(err)))
		return true
	}
	ray := cluster.GetAddonsConfig().GetRayOperatorConfig()
	if !ray.GetEnabled() {
		return false
	}
	settings := flattenRayOperator(ray)
	m.Logging, m.Monitoring = settings.Logging, settings.Monitoring
	kubeRay, d := kubeRayState(ctx, client, cluster, wait, kubePollInterval, "raytpu_ray_operator ("+id.String()+")")
	diags.Append(d...)
	m.KubeRay = kubeRay
	return true
}
