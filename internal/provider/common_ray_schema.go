package provider

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/ray"
)

// What raytpu_ray_cluster and raytpu_ray_service share: the attributes a RayCluster is made of
// (a RayCluster's spec, and a RayService's rayClusterConfig, from which KubeRay makes its
// RayClusters) and what is reported of the RayCluster that runs.

// rayConfigModel is what a RayCluster is made of.
type rayConfigModel struct {
	ClusterID     types.String `tfsdk:"cluster_id"`
	Namespace     types.String `tfsdk:"namespace"`
	Name          types.String `tfsdk:"name"`
	RayVersion    types.String `tfsdk:"ray_version"`
	PythonVersion types.String `tfsdk:"python_version"`
	Image         types.String `tfsdk:"image"`
	Head          types.Object `tfsdk:"head"`
	WorkerGroups  types.List   `tfsdk:"worker_groups"`
	HistoryServer types.Object `tfsdk:"history_server"`
}

// rayOutputsModel is what is reported of the RayCluster that runs.
type rayOutputsModel struct {
	Ray              types.Object `tfsdk:"ray"`
	HeadService      types.String `tfsdk:"head_service"`
	DashboardAddress types.String `tfsdk:"dashboard_address"`
	ClientAddress    types.String `tfsdk:"client_address"`
	Status           types.String `tfsdk:"status"`
	Healthy          types.Bool   `tfsdk:"healthy"`
	InSync           types.Bool   `tfsdk:"in_sync"`
	Placement        types.Map    `tfsdk:"placement"`
	GroupSlices      types.Map    `tfsdk:"worker_group_slices"`
	GroupSettings    types.Map    `tfsdk:"worker_group_settings"`
}

type rayHeadModel struct {
	CPU            quantityValue `tfsdk:"cpu"`
	Memory         quantityValue `tfsdk:"memory"`
	ServiceType    types.String  `tfsdk:"service_type"`
	SourceRanges   types.List    `tfsdk:"load_balancer_source_ranges"`
	RayStartParams types.Map     `tfsdk:"ray_start_params"`
	rayPodModel
}

type rayWorkerGroupModel struct {
	Name           types.String  `tfsdk:"name"`
	Slices         types.List    `tfsdk:"slices"`
	SpareSlices    types.List    `tfsdk:"spare_slices"`
	Generation     types.String  `tfsdk:"generation"`
	Topology       types.String  `tfsdk:"topology"`
	ChipsPerHost   types.Int64   `tfsdk:"chips_per_host"`
	Replicas       types.Int64   `tfsdk:"replicas"`
	CPU            quantityValue `tfsdk:"cpu"`
	Memory         quantityValue `tfsdk:"memory"`
	RayStartParams types.Map     `tfsdk:"ray_start_params"`
	rayPodModel
}

var (
	rayHeadAttrTypes = withPodAttrTypes(map[string]attr.Type{
		"cpu": quantityType{}, "memory": quantityType{}, "service_type": types.StringType,
		"load_balancer_source_ranges": types.ListType{ElemType: types.StringType},
		"ray_start_params":            types.MapType{ElemType: types.StringType},
	})
	rayWorkerGroupAttrTypes = withPodAttrTypes(map[string]attr.Type{
		"name": types.StringType, "slices": types.ListType{ElemType: types.StringType},
		"spare_slices": types.ListType{ElemType: types.StringType}, "generation": types.StringType,
		"topology": types.StringType, "chips_per_host": types.Int64Type, "replicas": types.Int64Type,
		"cpu": quantityType{}, "memory": quantityType{}, "ray_start_params": types.MapType{ElemType: types.StringType},
	})
	rayNamesAttrTypes = map[string]attr.Type{
		"table_version": types.StringType, "exact": types.BoolType,
		"slice_placement_group_args": types.ListType{ElemType: types.StringType},
		"chips_per_vm":               types.BoolType, "single_host_slices": types.BoolType, "source": types.StringType,
	}
	placementHostAttrTypes = map[string]attr.Type{
		"pod": types.StringType, "node": types.StringType, "node_pool": types.StringType,
		"host_index": types.Int64Type, "phase": types.StringType, "running": types.BoolType,
	}
	placementType = types.MapType{ElemType: types.ListType{ElemType: types.ListType{ElemType: types.ObjectType{AttrTypes: placementHostAttrTypes}}}}
)

// rayNamePattern is a DNS-1035 label. RayCluster names are kept to 40 characters: KubeRay names
// Pods <cluster>-<group>-worker-<suffix> and the webhook's TPU hostnames end in
// <cluster>-headless, which must stay within 63 characters. RayService names are kept to 34:
// KubeRay names a RayService's RayClusters <service>-<5 random characters>
// (ray-operator v1.5.0 controllers/ray/utils/util.go, GenerateRayClusterName).
var (
	rayNamePattern        = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)
	rayServiceNamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,32}[a-z0-9])?$`)
	rayGroupPattern       = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$`)
	namespacePat          = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// rayKind is the kind of KubeRay object a resource manages, as its attributes describe it.
type rayKind struct {
	kind        string // RayCluster or RayService
	namePattern *regexp.Regexp
	nameLength  int
}

var (
	rayClusterKind = rayKind{kind: "RayCluster", namePattern: rayNamePattern, nameLength: 40}
	rayServiceKind = rayKind{kind: "RayService", namePattern: rayServiceNamePattern, nameLength: 34}
)

// rayConfigAttributes are the attributes of rayConfigModel.
func rayConfigAttributes(k rayKind) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"cluster_id": clusterIDAttribute("the `id` of a `raytpu_cluster`, or the `cluster` of a `raytpu_ray_operator` (any cluster " +
			"with the Ray Operator add-on)."),
		"namespace": namespaceAttribute(),
		"name": schema.StringAttribute{
			Required: true,
			MarkdownDescription: fmt.Sprintf("%s name: a lower-case letter, then letters, digits and hyphens, at most %d characters; "+
				"not the name of a %s of the namespace (KubeRay names the head Service of both `{name}-head-svc`), which the create refuses.",
				k.kind, k.nameLength, k.other()),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators: []validator.String{stringvalidator.RegexMatches(k.namePattern, fmt.Sprintf(
				"must start with a lower-case letter, hold only lower-case letters, digits and hyphens, end with a letter or digit, and be at most %d characters",
				k.nameLength))},
		},
		"ray_version": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(defaultRayVersion),
			MarkdownDescription: "Ray version (`spec.rayVersion` and the image tag). Default `" + defaultRayVersion + "`. Versions " +
				"outside raytpu's table of Ray's TPU names get the nearest known row and a warning.",
			Validators: []validator.String{rayVersionValidator{}},
		},
		"python_version": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(defaultPythonVersion),
			MarkdownDescription: "Python version of the image, `3.N`. Default `" + defaultPythonVersion + "`.",
			Validators:          []validator.String{pythonVersionValidator{}},
		},
		"image": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Container image of the head and workers. Default `rayproject/ray:<ray_version>-py<python digits>-tpu`.",
		},
		"head":          rayHeadSchema(),
		"worker_groups": rayWorkerGroupsSchema(),
		// Archiving the runs (common_ray_history.go).
		"history_server": rayHistorySchema(k),
	}
}

// rayOutputAttributes are the attributes of rayOutputsModel; status is the kind's own.
func rayOutputAttributes(k rayKind, status string) map[string]schema.Attribute {
	computedString := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d}
	}
	return map[string]schema.Attribute{
		"ray": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "What `ray_version` means for TPU code, from raytpu's table of Ray releases.",
			Attributes: map[string]schema.Attribute{
				"table_version": computedString("The table row used: the first Ray release it describes."),
				"exact":         schema.BoolAttribute{Computed: true, MarkdownDescription: "`false` when `ray_version` is outside the table and the nearest row stands in."},
				"slice_placement_group_args": schema.ListAttribute{
					Computed: true, ElementType: types.StringType,
					MarkdownDescription: "Named parameters of `ray.util.tpu.slice_placement_group` in that release.",
				},
				"chips_per_vm":       schema.BoolAttribute{Computed: true, MarkdownDescription: "`slice_placement_group` takes `chips_per_vm`."},
				"single_host_slices": schema.BoolAttribute{Computed: true, MarkdownDescription: "`slice_placement_group` can reserve a single-host slice."},
				"source":             computedString("Where the row comes from; INFERRED marks what was not read at the release tag."),
			},
		},
		"head_service":      computedString("Name of the head's Kubernetes service (`<name>-head-svc`)."),
		"dashboard_address": computedString("In-cluster address of the Ray dashboard and job API (`<service>.<namespace>.svc.cluster.local:8265`)."),
		"client_address":    computedString("In-cluster Ray client address (`ray://<service>.<namespace>.svc.cluster.local:10001`)."),
		"status":            computedString(status),
		"healthy": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "Every head and worker Pod is Running and Ready, made from the " + k.kind + "'s present templates, and " +
				"every replica sits on distinct hosts of one slice. Refreshed by each read: a failed host turns it `false`, until its " +
				"replica runs again on a spare slice (`spare_slices`); `worker_group_slices` then says the group is `Degraded`.",
		},
		"in_sync": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "`false` when the " + k.kind + " is not what its configuration and its slices ask for: changed outside " +
				"Terraform, a slice replaced by one of another shape, a slice that lost its claim labels, or Pods left from an older " +
				"template. The next plan updates it.",
		},
		"placement": schema.MapAttribute{
			Computed:    true,
			ElementType: placementType.ElemType,
			MarkdownDescription: "Where the workers run: worker group name → replicas (one slice each) → hosts in `TPU_WORKER_ID` order, " +
				"each `{pod, node, node_pool, host_index, phase, running}`.",
		},
		"worker_group_settings": groupSettingsSchema(),
		"worker_group_slices":   groupSlicesSchema(),
	}
}

// withAttributes is attrs with more added.
func withAttributes(attrs map[string]schema.Attribute, more ...map[string]schema.Attribute) map[string]schema.Attribute {
	for _, m := range more {
		for k, v := range m {
			attrs[k] = v
		}
	}
	return attrs
}

func rayHeadSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: "The Ray head, on the cluster's CPU nodes. Omitted: 1 CPU, 2Gi, a ClusterIP service.",
		Attributes: withPodAttributes(map[string]schema.Attribute{
			"cpu": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(defaultHeadCPU), CustomType: quantityType{},
				MarkdownDescription: "CPU request and limit, a Kubernetes quantity. Default `" + defaultHeadCPU + "`.",
			},
			"memory": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(defaultHeadMemory), CustomType: quantityType{},
				MarkdownDescription: "Memory request and limit, a Kubernetes quantity. Default `" + defaultHeadMemory + "`.",
			},
			"service_type": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(serviceClusterIP),
				MarkdownDescription: "The head service, which serves Ray's dashboard and Jobs API (port 8265) and the Ray client " +
					"(10001), both of which run any code a caller sends: `ClusterIP` (default; reached from inside the cluster), " +
					"`InternalLoadBalancer` (a LoadBalancer Service with GKE's `networking.gke.io/load-balancer-type: Internal`: " +
					"an internal passthrough Network Load Balancer, reached from the VPC), `LoadBalancer` (an external one, only with " +
					"`load_balancer_source_ranges`, and the plan warns) or `NodePort`. On a `raytpu_ray_cluster` a change recreates " +
					"the Service, not the Pods; on a `raytpu_ray_service` it is an upgrade (KubeRay hashes the head Service with the " +
					"head: the page's table of changes), except off `ClusterIP` and to or from `InternalLoadBalancer`, which KubeRay's " +
					"upgrade cannot apply to the Services it keeps: those need `upgrade_strategy = \"Recreate\"`.",
				Validators: []validator.String{stringvalidator.OneOf(serviceClusterIP, serviceInternalLB, serviceExternalLB, serviceNodePort)},
			},
			"load_balancer_source_ranges": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "CIDR ranges a load balancer of the head admits (`loadBalancerSourceRanges`, which GKE turns " +
					"into firewall rules). Required with `service_type = \"LoadBalancer\"`, where `0.0.0.0/0` and `::/0` are refused; " +
					"optional with `InternalLoadBalancer`.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
			},
			"ray_start_params": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "`ray start` parameters of the head, such as `dashboard-host = \"0.0.0.0\"`.",
			},
		}, false),
	}
}

func rayWorkerGroupsSchema() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Required: true,
		MarkdownDescription: "TPU worker groups. Each replica of a group is one whole slice. Give either `slices` (existing " +
			"`raytpu_slice` ids of one shape: one replica per slice, a multislice group when several) or `generation` and " +
			"`topology` (no slice resource: the Pods ask for that shape and GKE node auto-provisioning creates the node pools).",
		Validators: []validator.List{listvalidator.SizeAtLeast(1)},
		NestedObject: schema.NestedAttributeObject{Attributes: withPodAttributes(map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Group name: a lower-case letter, then letters, digits and hyphens, at most 20 characters.",
				Validators: []validator.String{stringvalidator.RegexMatches(rayGroupPattern,
					"must start with a lower-case letter, hold only lower-case letters, digits and hyphens, and be at most 20 characters")},
			},
			"slices": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "`raytpu_slice` ids (`projects/{p}/locations/{l}/clusters/{c}/nodePools/{name}`) of this cluster, all " +
					"of one shape. The group gets one replica per slice, the slice's host count as `numOfHosts`, its node " +
					"selector, toleration and `google.com/tpu` chips, and is held to exactly these node pools by the labels raytpu sets " +
					"on them and the group selects. Queued and flex-start " +
					"slices are refused: their hosts come only when capacity does.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
			},
			"spare_slices": spareSlicesSchema(),
			"generation": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "TPU generation of an auto-provisioned group, with `topology`: `v4`, `v5e`, `v5p` or `v6e`, the generations " +
					"GKE documents node auto-provisioning for. A multi-host `tpu7x` slice is placed only by a workload policy, " +
					"which GKE does not document node auto-provisioning as creating, so the plan refuses it: create tpu7x slices with `raytpu_slice` and " +
					"list them in `slices`.",
			},
			"topology": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Slice shape of an auto-provisioned group, such as `2x4` or `4x4`.",
			},
			"chips_per_host": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Chips per VM of an auto-provisioned group, when the shape fits more than one machine type (v6e `2x4`: `8` for one VM, `4` for two). Default: one VM when the shape fits on one.",
			},
			"replicas": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Number of slices of an auto-provisioned group. Default `1`.",
				Validators:          []validator.Int64{int64validator.Between(1, 64)},
			},
			"cpu": schema.StringAttribute{
				Optional: true, CustomType: quantityType{},
				MarkdownDescription: "CPU request and limit of each worker, a Kubernetes quantity.",
			},
			"memory": schema.StringAttribute{
				Optional: true, CustomType: quantityType{},
				MarkdownDescription: "Memory request and limit of each worker, a Kubernetes quantity.",
			},
			"ray_start_params": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "`ray start` parameters of the workers.",
			},
		}, true)},
	}
}

const (
	defaultHeadCPU    = "1"
	defaultHeadMemory = "2Gi"
)

// rayVersionValidator accepts a Ray release number.
type rayVersionValidator struct{}

func (rayVersionValidator) Description(context.Context) string {
	return "must be a Ray release, major.minor.patch"
}
func (v rayVersionValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (rayVersionValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := ray.ParseVersion(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Ray Version", err.Error()+"; known releases start at "+ray.Known()[0]+".")
	}
}

// other is the other kind: a RayCluster's name must not be a RayService's, and the reverse.
func (k rayKind) other() string {
	if k.kind == rayServiceKind.kind {
		return rayClusterKind.kind
	}
	return rayServiceKind.kind
}

// typeName is the resource type of the kind, without the provider's prefix.
func (k rayKind) typeName() string {
	if k.kind == rayServiceKind.kind {
		return "ray_service"
	}
	return "ray_cluster"
}

// claimer is the Cluster of the claims that the worker groups of the object named name put on
// their slices (kube.SliceClaim).
func (k rayKind) claimer(name string) string {
	if k.kind == rayServiceKind.kind {
		return kube.RayServiceClaimer(name)
	}
	return name
}
