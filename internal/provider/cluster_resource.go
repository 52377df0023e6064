package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var (
	_ resource.ResourceWithConfigure   = (*clusterResource)(nil)
	_ resource.ResourceWithImportState = (*clusterResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterResource)(nil)
)

// NewClusterResource returns raytpu_cluster: a GKE Standard cluster with the Ray Operator add-on.
func NewClusterResource() resource.Resource {
	return &clusterResource{}
}

type clusterResource struct {
	data *providerData
}

type clusterResourceModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	Project            types.String   `tfsdk:"project"`
	Location           types.String   `tfsdk:"location"`
	Description        types.String   `tfsdk:"description"`
	ReleaseChannel     types.String   `tfsdk:"release_channel"`
	MinMasterVersion   types.String   `tfsdk:"min_master_version"`
	Network            types.String   `tfsdk:"network"`
	Subnetwork         types.String   `tfsdk:"subnetwork"`
	ResourceLabels     types.Map      `tfsdk:"resource_labels"`
	WorkloadIdentity   types.Bool     `tfsdk:"workload_identity"`
	SystemPool         types.Object   `tfsdk:"system_pool"`
	RayOperator        types.Object   `tfsdk:"ray_operator"`
	DeletionProtection types.Bool     `tfsdk:"deletion_protection"`
	WaitForKubeRay     types.Bool     `tfsdk:"wait_for_kuberay"`
	Endpoint           types.String   `tfsdk:"endpoint"`
	CACertificate      types.String   `tfsdk:"ca_certificate"`
	MasterVersion      types.String   `tfsdk:"master_version"`
	Status             types.String   `tfsdk:"status"`
	SelfLink           types.String   `tfsdk:"self_link"`
	KubeRay            types.Object   `tfsdk:"kuberay"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

var (
	systemPoolAttrTypes  = map[string]attr.Type{"machine_type": types.StringType, "node_count": types.Int64Type}
	rayOperatorAttrTypes = map[string]attr.Type{"logging": types.BoolType, "monitoring": types.BoolType}
	kubeRayAttrTypes     = map[string]attr.Type{"ready": types.BoolType, "crds": types.ListType{ElemType: types.StringType}}
)

// systemPoolName is the CPU node pool that holds the Ray head and system pods.
const systemPoolName = "system"

func (r *clusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func (r *clusterResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A GKE Standard cluster ready for Ray on TPUs: the Ray Operator add-on (GKE-managed KubeRay) is always " +
			"enabled, and create and update return only once the KubeRay CRDs serve in the cluster. A small CPU node pool, " +
			"`system`, holds the Ray head and system pods; add TPU slices with `raytpu_slice`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`projects/{project}/locations/{location}/clusters/{name}`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Cluster name: lower-case letters, digits and hyphens, at most 40 characters.",
				Validators:          []validator.String{gkeNameValidator()},
				PlanModifiers:       replace,
			},
			"project": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Project; defaults to the provider's.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"location": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Zone (zonal cluster) or region; defaults to the provider's. TPU slices need a zone that offers the generation.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"description": schema.StringAttribute{
				Optional: true, MarkdownDescription: "Free text shown in the console.", PlanModifiers: replace,
			},
			"release_channel": schema.StringAttribute{
				Optional: true, Computed: true,
				Default:             stringdefault.StaticString("REGULAR"),
				MarkdownDescription: "GKE release channel: `RAPID`, `REGULAR` (default), `STABLE` or `EXTENDED`. Updated in place.",
				Validators:          []validator.String{stringvalidator.OneOf("RAPID", "REGULAR", "STABLE", "EXTENDED")},
			},
			"min_master_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Lowest control plane version, such as `1.31` or `1.31.2-gke.1115000`; at least " +
					tpu.RayOperatorMinVersion.String() + " (the Ray Operator add-on's minimum). Raising it upgrades in place; lowering it is refused.",
			},
			"network": schema.StringAttribute{
				Optional: true, Computed: true, MarkdownDescription: "VPC network; GKE's default when unset.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"subnetwork": schema.StringAttribute{
				Optional: true, Computed: true, MarkdownDescription: "Subnetwork; GKE's default when unset.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"resource_labels": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Google Cloud labels of the cluster. Updated in place.",
			},
			"workload_identity": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Enables Workload Identity (`<project>.svc.id.goog`), so Ray pods reach Google APIs without keys. Default `true`. Updated in place.",
			},
			"system_pool": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "The CPU node pool for the Ray head and system pods.",
				Default: objectdefault.StaticValue(types.ObjectValueMust(systemPoolAttrTypes, map[string]attr.Value{
					"machine_type": types.StringValue("e2-standard-8"), "node_count": types.Int64Value(1),
				})),
				PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
				Attributes: map[string]schema.Attribute{
					"machine_type": schema.StringAttribute{Required: true, MarkdownDescription: "Machine type, for example `e2-standard-8`."},
					"node_count":   schema.Int64Attribute{Required: true, MarkdownDescription: "Number of nodes."},
				},
			},
			"ray_operator": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Settings of the Ray Operator add-on, which is always enabled. Updated in place.",
				Default: objectdefault.StaticValue(types.ObjectValueMust(rayOperatorAttrTypes, map[string]attr.Value{
					"logging": types.BoolValue(false), "monitoring": types.BoolValue(false),
				})),
				Attributes: map[string]schema.Attribute{
					"logging":    schema.BoolAttribute{Required: true, MarkdownDescription: "Send Ray cluster logs to Cloud Logging."},
					"monitoring": schema.BoolAttribute{Required: true, MarkdownDescription: "Send Ray cluster metrics to Cloud Monitoring."},
				},
			},
			"deletion_protection": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "While `true` (the default), destroy refuses to delete the cluster. Set it to `false` and apply first.",
			},
			"wait_for_kuberay": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Wait, on create and update, until the KubeRay CRDs are Established in the cluster, so that a " +
					"RayCluster applied next cannot fail for a missing CRD. Default `true`.",
			},
			"endpoint": schema.StringAttribute{
				Computed: true, MarkdownDescription: "Address of the cluster's Kubernetes API server.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"ca_certificate": schema.StringAttribute{
				Computed: true, MarkdownDescription: "Base64-encoded PEM CA certificate of the API server, as GKE returns it.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"master_version": schema.StringAttribute{Computed: true, MarkdownDescription: "Current control plane version."},
			"status":         schema.StringAttribute{Computed: true, MarkdownDescription: "GKE status, for example `RUNNING`."},
			"self_link": schema.StringAttribute{
				Computed: true, MarkdownDescription: "GKE API URL of the cluster.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"kuberay": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "KubeRay as seen in the cluster's API server.",
				Attributes: map[string]schema.Attribute{
					"ready": schema.BoolAttribute{Computed: true, MarkdownDescription: "Every KubeRay CRD is Established."},
					"crds": schema.ListAttribute{
						Computed: true, ElementType: types.StringType,
						MarkdownDescription: "The Established KubeRay CRDs, for example `rayclusters.ray.io`.",
					},
				},
			},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func (r *clusterResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredProviderData(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan fills project and location from the provider, so the id is known in the plan, and
// checks min_master_version against the Ray add-on's minimum and against downgrades.
func (r *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return
	}
	var plan clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	fillDefault := func(v *types.String, fallback, attribute string) {
		if !v.IsUnknown() {
			return
		}
		if fallback == "" {
			resp.Diagnostics.AddAttributeError(path.Root(attribute), "Missing "+attribute,
				fmt.Sprintf("Set %s on the resource, or on the provider (or through the environment, see the provider docs).", attribute))
			return
		}
		*v = types.StringValue(fallback)
	}
	fillDefault(&plan.Project, r.data.project, "project")
	fillDefault(&plan.Location, r.data.location, "location")
	if !plan.Project.IsUnknown() && !plan.Location.IsUnknown() && !plan.Name.IsUnknown() {
		plan.ID = types.StringValue(gke.ClusterID{Project: plan.Project.ValueString(), Location: plan.Location.ValueString(), Name: plan.Name.ValueString()}.String())
	}
	if v := plan.MinMasterVersion; !v.IsNull() && !v.IsUnknown() {
		want, err := tpu.ParseVersion(v.ValueString())
		switch {
		case err != nil:
			resp.Diagnostics.AddAttributeError(path.Root("min_master_version"), "Invalid GKE Version", err.Error()+".")
		case !want.CanMeet(tpu.RayOperatorMinVersion):
			resp.Diagnostics.AddAttributeError(path.Root("min_master_version"), "GKE Version Too Old for Ray",
				fmt.Sprintf("min_master_version %s is below %s, the first GKE version with the Ray Operator add-on. Use %s or later.",
					want, tpu.RayOperatorMinVersion, tpu.RayOperatorMinVersion))
		}
		if err == nil && !req.State.Raw.IsNull() {
			var state clusterResourceModel
			resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
			if current, err := tpu.ParseVersion(state.MasterVersion.ValueString()); err == nil && current.IsExact() && want.IsExact() && want.Less(current) {
				resp.Diagnostics.AddAttributeError(path.Root("min_master_version"), "GKE Downgrade Refused",
					fmt.Sprintf("min_master_version %s is below the cluster's current version %s: GKE cannot downgrade a control plane. "+
						"Keep %s or later, or replace the cluster.", want, current, current))
			}
		}
	}
	if !req.State.Raw.IsNull() {
		var state clusterResourceModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		plan.KubeRay = planKubeRayWait(state.KubeRay, plan.WaitForKubeRay)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// kubePollInterval spaces the reads of a cluster's Kubernetes API while waiting for KubeRay: they
// cost no GKE quota, and a short interval ends the wait sooner. (A slice's hosts are watched.)
const kubePollInterval = 250 * time.Millisecond

// planKubeRayWait plans kuberay as unknown while it is not ready and the resource waits for it,
// so that the next apply runs an update that waits again instead of reporting success.
func planKubeRayWait(state types.Object, wait types.Bool) types.Object {
	if !wait.ValueBool() || state.IsNull() || state.IsUnknown() {
		return state
	}
	if ready, ok := state.Attributes()["ready"].(types.Bool); ok && !ready.ValueBool() {
		return types.ObjectUnknown(kubeRayAttrTypes)
	}
	return state
}

func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, 90*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id := plan.clusterID()
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("creating raytpu_cluster (%s): %s", id, err))
		return
	}
	cluster, diags := expandCluster(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	unlock, err := client.LockCluster(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Error Creating Cluster", fmt.Sprintf("creating raytpu_cluster (%s): %s", id, err))
		return
	}
	defer unlock()
	op, err := client.CreateCluster(ctx, id, cluster)
	if err != nil {
		resp.Diagnostics.AddError("Error Creating Cluster", fmt.Sprintf("creating raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
		return
	}
	// GKE accepted the cluster: record it now, so that a failed or interrupted wait leaves it in
	// state (tainted) instead of leaking it.
	plan.ID = types.StringValue(id.String())
	plan.setUnknownComputedToNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := client.WaitForOperation(ctx, id, op); err != nil {
		resp.Diagnostics.AddError("Error Creating Cluster", fmt.Sprintf("waiting for raytpu_cluster (%s) creation: %s", id, gke.WithAdvice(err)))
		return
	}
	unlock()
	resp.Diagnostics.Append(r.refresh(ctx, client, &plan, plan.WaitForKubeRay.ValueBool())...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state clusterResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("reading raytpu_cluster (%s): %s", state.ID.ValueString(), err))
		return
	}
	diags := r.refresh(ctx, client, &state, false)
	if state.ID.IsNull() {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, 90*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id := state.clusterID()
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("updating raytpu_cluster (%s): %s", id, err))
		return
	}
	var updates []*containerpb.ClusterUpdate
	if !plan.RayOperator.Equal(state.RayOperator) {
		addons, diags := expandAddons(ctx, plan)
		resp.Diagnostics.Append(diags...)
		updates = append(updates, &containerpb.ClusterUpdate{DesiredAddonsConfig: addons})
	}
	if !plan.ReleaseChannel.Equal(state.ReleaseChannel) {
		updates = append(updates, &containerpb.ClusterUpdate{DesiredReleaseChannel: expandReleaseChannel(plan.ReleaseChannel)})
	}
	if !plan.WorkloadIdentity.Equal(state.WorkloadIdentity) {
		updates = append(updates, &containerpb.ClusterUpdate{DesiredWorkloadIdentityConfig: expandWorkloadIdentity(plan)})
	}
	if !plan.MinMasterVersion.IsNull() && !plan.MinMasterVersion.Equal(state.MinMasterVersion) {
		updates = append(updates, &containerpb.ClusterUpdate{DesiredMasterVersion: plan.MinMasterVersion.ValueString()})
	}
	if resp.Diagnostics.HasError() {
		return
	}
	for _, update := range updates {
		if err := mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.UpdateCluster(ctx, id, update)
		}); err != nil {
			resp.Diagnostics.AddError("Error Updating Cluster", fmt.Sprintf("updating raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	if !plan.ResourceLabels.Equal(state.ResourceLabels) {
		labels := map[string]string{}
		resp.Diagnostics.Append(plan.ResourceLabels.ElementsAs(ctx, &labels, false)...)
		cluster, err := client.GetCluster(ctx, id)
		if err == nil {
			err = mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
				return client.SetResourceLabels(ctx, id, labels, cluster.GetLabelFingerprint())
			})
		}
		if err != nil {
			resp.Diagnostics.AddError("Error Updating Cluster", fmt.Sprintf("updating resource labels of raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	plan.ID = state.ID
	resp.Diagnostics.Append(r.refresh(ctx, client, &plan, plan.WaitForKubeRay.ValueBool())...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.clusterID()
	if state.DeletionProtection.ValueBool() {
		resp.Diagnostics.AddError("Cluster Deletion Protected",
			fmt.Sprintf("raytpu_cluster (%s) has deletion_protection = true, so it was not deleted. To delete it, set "+
				"deletion_protection = false, run apply, then destroy (or remove the resource) again.", id))
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, 60*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("deleting raytpu_cluster (%s): %s", id, err))
		return
	}
	err = mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
		return client.DeleteCluster(ctx, id)
	})
	if err != nil && !gke.IsNotFound(err) {
		resp.Diagnostics.AddError("Error Deleting Cluster", fmt.Sprintf("deleting raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
	}
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	project := ""
	if r.data != nil {
		project = r.data.project
	}
	id, err := gke.ParseClusterImportID(req.ID, project)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import ID", err.Error()+".")
		return
	}
	// Read fills the rest; settings that live only in Terraform take their defaults.
	for attribute, value := range map[string]any{
		"id": id.String(), "name": id.Name, "project": id.Project, "location": id.Location,
		"deletion_protection": true, "wait_for_kuberay": true,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attribute), value)...)
	}
}

// mutateCluster runs one cluster-level mutation, alone on the cluster, and waits for its operation.
func mutateCluster(ctx context.Context, client *gke.Client, id gke.ClusterID, start func(context.Context) (*containerpb.Operation, error)) error {
	unlock, err := client.LockCluster(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	op, err := start(ctx)
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id, op)
}

// mutateNodePool runs one mutation of a node pool, beside those of the cluster's other pools, and
// waits for its operation.
func mutateNodePool(ctx context.Context, client *gke.Client, id gke.NodePoolID, start func(context.Context) (*containerpb.Operation, error)) error {
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	op, err := start(ctx)
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id.Cluster, op)
}

// refresh reads the cluster into m and, with waitForKubeRay, waits for the KubeRay CRDs. A
// cluster that no longer exists leaves m.ID null.
func (r *clusterResource) refresh(ctx context.Context, client *gke.Client, m *clusterResourceModel, waitForKubeRay bool) diag.Diagnostics {
	var diags diag.Diagnostics
	id := m.clusterID()
	cluster, err := client.GetCluster(ctx, id)
	if gke.IsNotFound(err) {
		m.ID = types.StringNull()
		return diags
	}
	if err != nil {
		diags.AddError("Error Reading Cluster", fmt.Sprintf("reading raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
		return diags
	}
	diags.Append(flattenCluster(ctx, cluster, m)...)
	switch cluster.GetStatus() {
	case containerpb.Cluster_ERROR, containerpb.Cluster_DEGRADED:
		var conditions []string
		for _, c := range cluster.GetConditions() {
			conditions = append(conditions, c.GetMessage())
		}
		diags.AddWarning("Cluster Unhealthy", fmt.Sprintf("raytpu_cluster (%s) is %s: %s", id, cluster.GetStatus(), strings.Join(conditions, "; ")))
	}
	kubeRay, d := kubeRayState(ctx, client, cluster, waitForKubeRay, kubePollInterval, "raytpu_cluster ("+id.String()+")")
	diags.Append(d...)
	m.KubeRay = kubeRay
	return diags
}

// kubeRayState reads, or with wait waits for, the KubeRay CRDs of a running cluster. Failing to
// reach them is an error while waiting and a warning otherwise, so a refresh never fails for it.
func kubeRayState(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, wait bool, poll time.Duration, what string) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	status := kube.KubeRayStatus{}
	if cluster.GetStatus() == containerpb.Cluster_RUNNING {
		var err error
		status, err = kubeRayStatus(ctx, client, cluster, wait, poll)
		switch {
		case err != nil && wait:
			diags.AddError("KubeRay Not Ready", fmt.Sprintf("waiting for KubeRay in %s: %s. GKE reports the Ray "+
				"Operator add-on enabled before its CRDs serve. The next apply waits again, or raise the timeouts. After a "+
				"create, Terraform marks the resource tainted and would replace it: run terraform untaint on it first to keep it.", what, err))
		case err != nil:
			diags.AddWarning("KubeRay Status Unknown", fmt.Sprintf("reading the KubeRay CRDs of %s: %s", what, err))
		}
	}
	kubeRay, d := flattenKubeRay(ctx, status)
	diags.Append(d...)
	return kubeRay, diags
}

func flattenKubeRay(ctx context.Context, status kube.KubeRayStatus) (types.Object, diag.Diagnostics) {
	crds, diags := types.ListValueFrom(ctx, types.StringType, status.Established)
	obj, d := types.ObjectValue(kubeRayAttrTypes, map[string]attr.Value{"ready": types.BoolValue(status.Ready), "crds": crds})
	diags.Append(d...)
	return obj, diags
}

// kubeRayStatus reads, or waits for, the KubeRay CRDs in the cluster's own API server.
func kubeRayStatus(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, wait bool, poll time.Duration) (kube.KubeRayStatus, error) {
	k, err := kubeClient(client, cluster)
	if err != nil {
		return kube.KubeRayStatus{}, err
	}
	defer k.Close()
	if wait {
		return k.WaitForKubeRay(ctx, poll)
	}
	return k.KubeRayStatus(ctx)
}

func (m clusterResourceModel) clusterID() gke.ClusterID {
	return gke.ClusterID{Project: m.Project.ValueString(), Location: m.Location.ValueString(), Name: m.Name.ValueString()}
}

// setUnknownComputedToNull keeps unknown values out of state when it is written before the
// cluster can be read.
func (m *clusterResourceModel) setUnknownComputedToNull() {
	for _, s := range []*types.String{&m.Endpoint, &m.CACertificate, &m.MasterVersion, &m.Status, &m.SelfLink, &m.Network, &m.Subnetwork, &m.ReleaseChannel} {
		if s.IsUnknown() {
			*s = types.StringNull()
		}
	}
	if m.KubeRay.IsUnknown() || m.KubeRay.IsNull() {
		m.KubeRay = types.ObjectNull(kubeRayAttrTypes)
	}
	if m.SystemPool.IsUnknown() {
		m.SystemPool = types.ObjectNull(systemPoolAttrTypes)
	}
	if m.RayOperator.IsUnknown() {
		m.RayOperator = types.ObjectNull(rayOperatorAttrTypes)
	}
	if m.WorkloadIdentity.IsUnknown() {
		m.WorkloadIdentity = types.BoolNull()
	}
	if m.ResourceLabels.IsUnknown() {
		m.ResourceLabels = types.MapNull(types.StringType)
	}
}

func expandReleaseChannel(v types.String) *containerpb.ReleaseChannel {
	channel := containerpb.ReleaseChannel_Channel_value[v.ValueString()]
	return &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_Channel(channel)}
}

// rayOperatorSettings is the model of ray_operator and of raytpu_ray_operator's settings.
type rayOperatorSettings struct {
	Logging    types.Bool `tfsdk:"logging"`
	Monitoring types.Bool `tfsdk:"monitoring"`
}

// expandRayOperator is the add-on configuration; enabled is false only to turn it off.
func expandRayOperator(enabled bool, s rayOperatorSettings) *containerpb.RayOperatorConfig {
	return &containerpb.RayOperatorConfig{
		Enabled:                    enabled,
		RayClusterLoggingConfig:    &containerpb.RayClusterLoggingConfig{Enabled: enabled && s.Logging.ValueBool()},
		RayClusterMonitoringConfig: &containerpb.RayClusterMonitoringConfig{Enabled: enabled && s.Monitoring.ValueBool()},
	}
}

func flattenRayOperator(c *containerpb.RayOperatorConfig) rayOperatorSettings {
	return rayOperatorSettings{
		Logging:    types.BoolValue(c.GetRayClusterLoggingConfig().GetEnabled()),
		Monitoring: types.BoolValue(c.GetRayClusterMonitoringConfig().GetEnabled()),
	}
}

func expandAddons(ctx context.Context, m clusterResourceModel) (*containerpb.AddonsConfig, diag.Diagnostics) {
	var ray rayOperatorSettings
	diags := m.RayOperator.As(ctx, &ray, basetypes.ObjectAsOptions{})
	return &containerpb.AddonsConfig{RayOperatorConfig: expandRayOperator(true, ray)}, diags
}

func expandCluster(ctx context.Context, m clusterResourceModel) (*containerpb.Cluster, diag.Diagnostics) {
	addons, diags := expandAddons(ctx, m)
	var pool struct {
		MachineType types.String `tfsdk:"machine_type"`
		NodeCount   types.Int64  `tfsdk:"node_count"`
	}
	diags.Append(m.SystemPool.As(ctx, &pool, basetypes.ObjectAsOptions{})...)
	labels := map[string]string{}
	diags.Append(m.ResourceLabels.ElementsAs(ctx, &labels, false)...)
	cluster := &containerpb.Cluster{
		Name:                  m.Name.ValueString(),
		Description:           m.Description.ValueString(),
		InitialClusterVersion: m.MinMasterVersion.ValueString(),
		Network:               m.Network.ValueString(),
		Subnetwork:            m.Subnetwork.ValueString(),
		ResourceLabels:        labels,
		ReleaseChannel:        expandReleaseChannel(m.ReleaseChannel),
		AddonsConfig:          addons,
		NodePools: []*containerpb.NodePool{{
			Name:             systemPoolName,
			InitialNodeCount: int32(pool.NodeCount.ValueInt64()),
			Config:           &containerpb.NodeConfig{MachineType: pool.MachineType.ValueString()},
		}},
	}
	if m.WorkloadIdentity.ValueBool() {
		cluster.WorkloadIdentityConfig = expandWorkloadIdentity(m)
	}
	return cluster, diags
}

// expandWorkloadIdentity is the project's workload pool, or an empty pool to turn it off.
func expandWorkloadIdentity(m clusterResourceModel) *containerpb.WorkloadIdentityConfig {
	if !m.WorkloadIdentity.ValueBool() {
		return &containerpb.WorkloadIdentityConfig{}
	}
	return &containerpb.WorkloadIdentityConfig{WorkloadPool: m.Project.ValueString() + ".svc.id.goog"}
}

// flattenCluster copies what GKE reports into m. Settings GKE does not report back (deletion
// protection, waits, timeouts, min_master_version) keep their configured values.
func flattenCluster(ctx context.Context, c *containerpb.Cluster, m *clusterResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Name = types.StringValue(c.GetName())
	if c.GetDescription() != "" {
		m.Description = types.StringValue(c.GetDescription())
	}
	m.Network = types.StringValue(c.GetNetwork())
	m.Subnetwork = types.StringValue(c.GetSubnetwork())
	m.Endpoint = types.StringValue(c.GetEndpoint())
	m.CACertificate = types.StringValue(c.GetMasterAuth().GetClusterCaCertificate())
	m.MasterVersion = types.StringValue(c.GetCurrentMasterVersion())
	m.Status = types.StringValue(c.GetStatus().String())
	m.SelfLink = types.StringValue(c.GetSelfLink())
	if channel := c.GetReleaseChannel().GetChannel(); channel != containerpb.ReleaseChannel_UNSPECIFIED { //nolint:staticcheck // GKE reports it for clusters without a channel
		m.ReleaseChannel = types.StringValue(channel.String())
	}
	if len(c.GetResourceLabels()) > 0 || !m.ResourceLabels.IsNull() {
		labels, d := types.MapValueFrom(ctx, types.StringType, c.GetResourceLabels())
		diags.Append(d...)
		m.ResourceLabels = labels
	}
	m.WorkloadIdentity = types.BoolValue(c.GetWorkloadIdentityConfig().GetWorkloadPool() != "")
	ray := c.GetAddonsConfig().GetRayOperatorConfig()
	settings, d := types.ObjectValueFrom(ctx, rayOperatorAttrTypes, flattenRayOperator(ray))
	diags.Append(d...)
	m.RayOperator = settings
	if !ray.GetEnabled() {
		diags.AddWarning("Ray Operator Add-on Disabled",
			fmt.Sprintf("The Ray Operator add-on of %s was disabled outside Terraform; the next apply enables it again.", c.GetName()))
	}
	for _, pool := range c.GetNodePools() {
		if pool.GetName() == systemPoolName {
			m.SystemPool = types.ObjectValueMust(systemPoolAttrTypes, map[string]attr.Value{
				"machine_type": types.StringValue(pool.GetConfig().GetMachineType()),
				"node_count":   types.Int64Value(int64(pool.GetInitialNodeCount())),
			})
		}
	}
	return diags
}
