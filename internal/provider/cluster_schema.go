package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

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
	SliceController    types.Bool     `tfsdk:"slice_controller"`
	MaintenancePolicy  types.Object   `tfsdk:"maintenance_policy"`
	AutoProvisioning   types.Object   `tfsdk:"auto_provisioning"`
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

var systemPoolAttrTypes = map[string]attr.Type{"machine_type": types.StringType, "node_count": types.Int64Type}

// systemPoolName is the CPU node pool that holds the Ray head and system pods.
const systemPoolName = "system"

func (r *clusterResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A GKE Standard cluster ready for Ray on TPUs: the Ray Operator add-on (GKE-managed KubeRay) is always " +
			"enabled, and create and update return only once the KubeRay CRDs serve in the cluster. A small CPU node pool, " +
			"`system`, holds the Ray head and system pods; add TPU slices with `raytpu_slice`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "`projects/{project}/locations/{location}/clusters/{name}`. Unknown in the plan of a cluster " +
					"being created or replaced, so that what references it waits for it: `raytpu_cluster_credentials` is opened " +
					"once the cluster exists, and the slices and RayClusters of a replaced cluster, which GKE deletes with it, " +
					"are replaced in the same apply.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
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
				MarkdownDescription: "GKE release channel: `RAPID`, `REGULAR` (default), `STABLE` or `EXTENDED`.",
				Validators:          []validator.String{stringvalidator.OneOf("RAPID", "REGULAR", "STABLE", "EXTENDED")},
			},
			"min_master_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Lowest control plane version, such as `1.31` or `1.31.2-gke.1115000`; at least " +
					tpu.RayOperatorMinVersion.String() + " (the Ray Operator add-on's minimum). A minimum: a control plane at or above " +
					"it, where GKE's automatic upgrades take it, is left as it is, whatever the release channel offers now; one below " +
					"it is upgraded in place to the newest version of the release channel that matches it. `master_version` " +
					"shows the version in effect.",
			},
			"network": schema.StringAttribute{
				Optional: true, Computed: true, MarkdownDescription: "VPC network: its name, path or self link (the `id` of a `google_compute_network`); GKE's default when unset. GKE reports the name; another spelling of the same network changes nothing.",
				PlanModifiers: []planmodifier.String{requiresReplaceUnlessSameResource(), stringplanmodifier.UseStateForUnknown()},
			},
			"subnetwork": schema.StringAttribute{
				Optional: true, Computed: true, MarkdownDescription: "Subnetwork: its name, path or self link; GKE's default when unset. GKE reports the name; another spelling of the same subnetwork changes nothing.",
				PlanModifiers: []planmodifier.String{requiresReplaceUnlessSameResource(), stringplanmodifier.UseStateForUnknown()},
			},
			"resource_labels": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Google Cloud labels of the cluster.",
			},
			"workload_identity": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Enables Workload Identity (`<project>.svc.id.goog`), so Ray pods reach Google APIs without keys. Default `true`.",
			},
			"system_pool": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "The CPU node pool for the Ray head and system pods. A new machine type " +
					"migrates its nodes, a new node count resizes it, and the cluster's slices stay as they are. A resize made " +
					"outside Terraform shows in the next plan.",
				Default: objectdefault.StaticValue(types.ObjectValueMust(systemPoolAttrTypes, map[string]attr.Value{
					"machine_type": types.StringValue("e2-standard-8"), "node_count": types.Int64Value(1),
				})),
				Attributes: map[string]schema.Attribute{
					"machine_type": schema.StringAttribute{Required: true, MarkdownDescription: "Machine type, for example `e2-standard-8`."},
					"node_count": schema.Int64Attribute{
						Required: true, MarkdownDescription: "Number of nodes in each of the cluster's zones; at least 1, for the Ray head.",
						Validators: []validator.Int64{int64validator.AtLeast(1)},
					},
				},
			},
			"ray_operator": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Settings of the Ray Operator add-on, which is always enabled.",
				Default: objectdefault.StaticValue(types.ObjectValueMust(rayOperatorAttrTypes, map[string]attr.Value{
					"logging": types.BoolValue(false), "monitoring": types.BoolValue(false),
				})),
				Attributes: map[string]schema.Attribute{
					"logging":    schema.BoolAttribute{Required: true, MarkdownDescription: "Send Ray cluster logs to Cloud Logging."},
					"monitoring": schema.BoolAttribute{Required: true, MarkdownDescription: "Send Ray cluster metrics to Cloud Monitoring."},
				},
			},
			"slice_controller": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Enables GKE's slice controller add-on, which joins Ironwood (tpu7x) sub-block node pools " +
					"into larger slices (dynamic slicing) through `Slice` objects in the cluster. GKE requires `release_channel = " +
					"\"RAPID\"` and a control plane at " + tpu.SliceControllerMinVersion.String() + " or later, both checked at plan. " +
					"Turned on and off in place; a change made outside Terraform shows in the next plan. Default `false`.",
			},
			"maintenance_policy": maintenancePolicySchema(),
			"auto_provisioning":  autoProvisioningSchema(),
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
