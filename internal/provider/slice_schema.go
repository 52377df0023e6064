package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type sliceResourceModel struct {
	ID                  types.String   `tfsdk:"id"`
	Cluster             types.String   `tfsdk:"cluster"`
	Name                types.String   `tfsdk:"name"`
	NamePrefix          types.String   `tfsdk:"name_prefix"`
	Generation          types.String   `tfsdk:"generation"`
	Topology            types.String   `tfsdk:"topology"`
	AcceleratorType     types.String   `tfsdk:"accelerator_type"`
	ChipsPerHost        types.Int64    `tfsdk:"chips_per_host"`
	NodeVersion         types.String   `tfsdk:"node_version"`
	CurrentNodeVersion  types.String   `tfsdk:"current_node_version"`
	Zone                types.String   `tfsdk:"zone"`
	Spot                types.Bool     `tfsdk:"spot"`
	Reservation         types.Object   `tfsdk:"reservation"`
	FlexStart           types.Bool     `tfsdk:"flex_start"`
	MaxRunDuration      types.String   `tfsdk:"max_run_duration"`
	QueuedProvisioning  types.Bool     `tfsdk:"queued_provisioning"`
	Autoscaling         types.Bool     `tfsdk:"autoscaling"`
	AutoRepair          types.Bool     `tfsdk:"auto_repair"`
	AutoUpgrade         types.Bool     `tfsdk:"auto_upgrade"`
	Fallback            types.List     `tfsdk:"fallback"`
	CapacityUsed        types.Object   `tfsdk:"capacity_used"`
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
	HostWaitTimeout     types.String   `tfsdk:"host_wait_timeout"`
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
	FailedHosts         types.List     `tfsdk:"failed_hosts"`
	Status              types.String   `tfsdk:"status"`
	Healthy             types.Bool     `tfsdk:"healthy"`
}

func (r *sliceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
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
				Computed: true,
				MarkdownDescription: "`projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}`. Unknown in the " +
					"plan of a slice being created or replaced.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Cluster id, `projects/{project}/locations/{location}/clusters/{name}` (the `id` of `raytpu_cluster` or `google_container_cluster`).",
				Validators:          []validator.String{clusterIDValidator{}},
				PlanModifiers:       replaceString,
			},
			"name": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Node pool name: lower-case letters, digits and hyphens, at most 40 characters. Also the KubeRay " +
					"worker group name. Set it or `name_prefix`.",
				Validators:    []validator.String{gkeNameValidator(), stringvalidator.ExactlyOneOf(path.MatchRoot("name_prefix"))},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()},
			},
			"name_prefix": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Instead of `name`: the node pool is named this prefix and eight random characters, a new " +
					"name for every slice that replaces it. With `lifecycle { create_before_destroy = true }` a replacement is then " +
					"created before the slice it replaces is deleted, so the old slice keeps its TPUs until the new one has its " +
					"own, and a stockout leaves the old slice running. At most 32 characters, starting with a letter.",
				Validators:    []validator.String{namePrefixValidator()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(nameLacksPrefix, nameLacksPrefixCondition, nameLacksPrefixCondition)},
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
				Optional: true,
				MarkdownDescription: "GKE version of the nodes, written as GKE takes it: exact (`1.34.0-gke.2201000`), a release " +
					"(`1.34`, `1.34.1`: its newest version) or `latest`; unset, the control plane's version. raytpu resolves it to the " +
					"newest version the location offers for nodes that matches and is not newer than the control plane, checks it " +
					"against the generation's minimum (v6e: 1.31.2-gke.1115000) at plan time once the cluster exists, and requests " +
					"that exact version, because a pool created without one may come up below the minimum. State keeps what you " +
					"wrote; `current_node_version` shows the version in effect. A change that resolves to another version upgrades " +
					"the nodes in place (GKE recreates the slice's hosts, so its pods restart); one that resolves to the version in " +
					"effect, such as `1.34` for `1.34.0-gke.2201000`, changes nothing.",
			},
			"current_node_version": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "GKE version the slice's nodes run, as GKE reports it.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"placement_policy_name": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Name of the Compute Engine workload policy that places a multi-host tpu7x slice (GKE places " +
					"those only this way; refused for other slices). Unset, raytpu creates a `HIGH_THROUGHPUT` policy with the " +
					"slice's accelerator topology in the cluster's region, named after the node pool, and deletes it with the " +
					"slice. Set, the policy must exist with that type and topology: it is checked before the node pool is requested.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
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
				MarkdownDescription: "Kubernetes labels of the nodes. Only the labels set here are read back: one changed or " +
					"removed outside Terraform shows in the plan, while labels GKE or another tool adds are left out of this " +
					"attribute and kept by an update of it (an imported slice reads every label). The labels with which " +
					"`raytpu_ray_cluster` claims the slice for a worker group (`raytpu.dev/ray-*`) are its own: refused here, left " +
					"out of this attribute, and kept by an update of it.",
				Validators: []validator.Map{claimLabelsValidator{}},
			},
			"resource_labels": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Google Cloud labels of the VMs. GKE's own labels (`goog-gke-*`, such as " +
					"`goog-gke-node-pool-provisioning-model`) are left out, and refused here: GKE sets them itself.",
				Validators: []validator.Map{reservedLabelsValidator{}},
			},
			"disk_size_gb": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Boot disk size of each host in GB, at least 10; GKE's default when unset. A new " +
					"size is applied in place: GKE migrates the hosts to the new disk.",
				Validators:    []validator.Int64{int64validator.AtLeast(10)},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"disk_type": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Boot disk type, for example `hyperdisk-balanced`; GKE's default when unset. A new " +
					"type is applied in place: GKE migrates the hosts to the new disk.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			// No schema default: unset stays null in state, so that a configuration Terraform
			// generates from an import leaves them out (it writes "3.10" as jsonencode(3.1)).
			"ray_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Ray version of the image in `ray.image` and `kuberay_worker_group`, a release such as " +
					"`2.55.0`; `" + defaultRayVersion + "` when unset.",
				Validators: []validator.String{rayVersionValidator{}},
			},
			"python_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Python version of that image, as a string such as `\"3.10\"` (unquoted, HCL reads 3.10 as " +
					"the number 3.1); `" + defaultPythonVersion + "` when unset.",
				Validators: []validator.String{pythonVersionValidator{}},
			},
			"wait_for_hosts": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Return from create only when every host is a Ready Kubernetes node (not with queued provisioning). Default `true`. " +
					"The hosts are then watched while GKE creates the pool, which is how the provider learns that the pool is up: " +
					"the GKE operation is read only every `operation_poll_interval`, to see a failure.",
			},
			"host_wait_timeout": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("10m"),
				MarkdownDescription: "With `wait_for_hosts`, how long the hosts may take to be Ready Kubernetes nodes once GKE reports " +
					"the node pool created, as a Go duration. Past it the create fails and the slice is tainted, to be replaced: a " +
					"slice whose hosts do not come up is broken, not slow. Hosts that cannot be seen from where Terraform runs (a " +
					"private endpoint without GKE's DNS-based endpoint, a refused token) are not waited for: the slice is created " +
					"with a warning and its hosts unknown. Default `10m`.",
				Validators: []validator.String{durationValidator{}},
			},
			"replace_unhealthy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Plan a replacement when the slice has failed, as the last refresh saw it: its node pool is " +
					"`ERROR`, or a host is in `failed_hosts`. A TPU slice cannot be repaired in place. A slice in transition is " +
					"never replaced: `PROVISIONING`, `RECONCILING` (an upgrade or another update), `STOPPING`, " +
					"`RUNNING_WITH_ERROR` without a failed host, hosts still to come (an autoscaled slice scaling up) or booting " +
					"(not Ready yet). Default `false`.",
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
					"pod_type":            derivedString("Ray's TPU pod type in the release of `ray_version`, for example `v6e-16` (tpu7x: `v7x-8` from Ray 2.55, `tpu7x-8` before)."),
					"head_resource":       derivedString("Resource on worker 0 only, for example `TPU-v6e-16-head`."),
					"topology_supported": schema.BoolAttribute{
						Computed: true, MarkdownDescription: "Whether `ray.util.tpu.slice_placement_group` accepts the topology.",
					},
					"image":   derivedString("Official Ray TPU image, for example `rayproject/ray:2.55.0-py310-tpu`."),
					"version": derivedString("Ray version of that image, for a RayCluster's `rayVersion`."),
				},
			},
			"slice_placement_group": schema.SingleNestedAttribute{
				Computed: true,
				MarkdownDescription: "Arguments of `ray.util.tpu.slice_placement_group` that reserve this slice, as the Ray release " +
					"of `ray_version` takes them (raytpu's table of Ray releases: `chips_per_vm` from Ray 2.56). Pass the ones that " +
					"are not null.",
				Attributes: map[string]schema.Attribute{
					"topology":            derivedString("`topology` argument."),
					"accelerator_version": derivedString("`accelerator_version` argument."),
					"chips_per_vm": derivedInt("`chips_per_vm` argument, the chips of one host (needed for a v6e `2x4` on two VMs); null " +
						"when `ray_version`'s `slice_placement_group` has no such parameter (Ray 2.55 and earlier in raytpu's table), " +
						"which assumes one 8-chip VM for a `2x4`."),
					"num_slices": derivedInt("`num_slices` argument: this resource is one slice."),
				},
			},
			"kuberay_worker_group": derivedString("A KubeRay `WorkerGroupSpec` for this slice, as JSON: `numOfHosts`, one replica, the Ray " +
				"image with `google.com/tpu` limits and requests, node selector and toleration. Use `jsondecode` to put it in a RayCluster."),
			"hosts": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Kubernetes node names of the slice's hosts that are there now, in worker order: all of " +
					"them, or none while an autoscaled or flex-start slice is scaled to zero.",
			},
			"ready_hosts": derivedInt("Hosts whose node is Ready."),
			"failed_hosts": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Hosts the cluster lost: their node's Ready condition is `Unknown`, as Kubernetes marks a node " +
					"it no longer hears from. A host that boots, or that an autoscaler is adding, is not in it.",
			},
			"status": derivedString("GKE status of the node pool, for example `RUNNING`."),
			"healthy": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "The pool is `RUNNING` and every host is Ready; for an autoscaled or flex-start slice, " +
					"also when it is scaled to zero (a slice caught while it scales reads unhealthy).",
			},
		},
	}
	for name, a := range sliceCapacityAttributes() {
		resp.Schema.Attributes[name] = a
	}
}
