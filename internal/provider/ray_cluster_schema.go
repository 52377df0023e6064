package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type rayClusterModel struct {
	ID types.String `tfsdk:"id"`
	rayConfigModel
	rayOutputsModel
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (r *rayClusterResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A KubeRay RayCluster whose TPU worker groups are whole slices, applied to the cluster's API server by " +
			"server-side apply. Create waits until the head and every worker Pod run and checks that each replica's Pods " +
			"sit on distinct hosts of one slice (one node pool). The cluster needs the Ray Operator add-on.",
		Attributes: withAttributes(map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`{cluster_id}/rayClusters/{namespace}/{name}`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		}, rayConfigAttributes(rayClusterKind), rayOutputAttributes(rayClusterKind,
			"KubeRay's state of the RayCluster (`status.state`, for example `ready`); empty before KubeRay reports one.")),
	}
}
