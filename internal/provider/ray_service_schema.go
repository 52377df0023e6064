package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type rayServiceModel struct {
	ID types.String `tfsdk:"id"`
	rayConfigModel
	ServeConfigV2   types.String `tfsdk:"serve_config_v2"`
	UpgradeStrategy types.String `tfsdk:"upgrade_strategy"`
	DeletionDelay   types.Int64  `tfsdk:"old_cluster_deletion_delay"`
	rayOutputsModel
	ServeService   types.String   `tfsdk:"serve_service"`
	ServeAddress   types.String   `tfsdk:"serve_address"`
	RayClusterName types.String   `tfsdk:"ray_cluster_name"`
	Applications   types.Map      `tfsdk:"applications"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

// defaultDeletionDelay is KubeRay's default rayClusterDeletionDelaySeconds (ray-operator v1.5.0
// rayservice_types.go).
const defaultDeletionDelay = 60

// The values of upgrade_strategy.
const (
	upgradeNewCluster = "NewCluster"
	upgradeRecreate   = "Recreate"
)

func (r *rayServiceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computedString := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A KubeRay RayService: Ray Serve applications on a RayCluster whose TPU worker groups are whole slices, " +
			"made from the same attributes as `raytpu_ray_cluster`'s. Create waits until KubeRay reports the RayService ready and " +
			"every application `RUNNING`, with each replica's Pods on distinct hosts of one slice; an application that fails to " +
			"deploy ends it at once. A change of `serve_config_v2` alone is applied in place, to the same RayCluster; a change of " +
			"what the RayCluster is made of is KubeRay's zero-downtime upgrade onto free slices, which the plan refuses when the " +
			"slices are not free, or a replacement (`upgrade_strategy`). The cluster needs the Ray Operator add-on.",
		Attributes: withAttributes(rayConfigAttributes(rayServiceKind), rayOutputAttributes(rayServiceKind,
			"KubeRay's `status.serviceStatus`: `Running` once the RayService is ready to serve requests (its `Ready` condition), "+
				"empty before."), map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`{cluster_id}/rayServices/{namespace}/{name}`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"serve_config_v2": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Ray Serve's config file as YAML (KubeRay's `spec.serveConfigV2`, Ray's `ServeDeploySchema`): " +
					"`applications`, each with an `import_path`, and optionally `name`, `route_prefix`, `runtime_env`, `args` and " +
					"`deployments` (whose `ray_actor_options.resources` can ask for TPU chips, such as `{ TPU = 4 }`). Checked at plan " +
					"time: at least one application, each with an `import_path`, names and route prefixes unique. A change is applied " +
					"in place: KubeRay sends it to the running RayCluster's dashboard.",
				Validators: []validator.String{serveConfigValidator{}},
			},
			"upgrade_strategy": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(upgradeNewCluster),
				MarkdownDescription: "How a change of what the RayCluster is made of (`ray_version`, `python_version`, `image`, `head`, " +
					"`worker_groups`, `history_server`) is applied. `NewCluster` (default): KubeRay's zero-downtime upgrade, which brings up a second " +
					"RayCluster beside the one that serves and moves the Serve traffic to it once every application runs there; the " +
					"plan refuses it, with the options, when a worker group's slices are held by the RayCluster that serves, and says " +
					"which slices it brings up otherwise. `Recreate`: the RayService is replaced, with downtime between the two " +
					"RayClusters, on the same slices. raytpu's own setting: the RayService lets KubeRay bring up a second RayCluster " +
					"only while raytpu upgrades it.",
				Validators: []validator.String{stringvalidator.OneOf(upgradeNewCluster, upgradeRecreate)},
			},
			"old_cluster_deletion_delay": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(defaultDeletionDelay),
				MarkdownDescription: "Seconds KubeRay keeps the RayCluster an upgrade replaced, for requests in flight to finish, before it " +
					"deletes it (`rayClusterDeletionDelaySeconds`). An upgrade's apply waits for it, and the old slices are released " +
					"only then. Default `60`, KubeRay's.",
				Validators: []validator.Int64{int64validator.Between(0, 3600)},
			},
			"serve_service": computedString("Name of the Kubernetes Service in front of the Serve applications (`<name>-serve-svc`, " +
				"KubeRay's), which follows the RayCluster that serves."),
			"serve_address": computedString("In-cluster address of the Serve applications' HTTP proxy " +
				"(`http://<serve_service>.<namespace>.svc.cluster.local:8000`)."),
			"ray_cluster_name": computedString("Name of the RayCluster KubeRay made for the RayService and serves from " +
				"(`<name>-<5 characters>`); the same after a change of `serve_config_v2`."),
			"applications": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Status of each Serve application by name, as KubeRay reports them (`RUNNING`, `DEPLOYING`, " +
					"`DEPLOY_FAILED`, `UNHEALTHY`, ...). Refreshed by each read.",
			},
			"healthy": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "The RayService serves: KubeRay reports it ready, every application of `serve_config_v2` is " +
					"`RUNNING`, and every head and worker Pod of its RayCluster is Running and Ready, each replica on distinct hosts of " +
					"one slice. Refreshed by each read: a failed host or an application that fails turns it `false`.",
			},
			"in_sync": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "`false` when the RayService is not what its configuration and its slices ask for: changed " +
					"outside Terraform, a slice that lost its claim labels (a node pool recreated), or a second RayCluster that " +
					"KubeRay brings up. The next plan updates it.",
			},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		}),
	}
}
