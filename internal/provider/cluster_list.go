package provider

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ list.ListResourceWithConfigure = (*clusterListResource)(nil)

// NewClusterListResource returns the raytpu_cluster list resource: the clusters of a project that
// raytpu_cluster can adopt.
func NewClusterListResource() list.ListResource {
	return &clusterListResource{}
}

type clusterListResource struct {
	resourceBase
}

func (r *clusterListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func (r *clusterListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The GKE clusters of a project in a location (or in all of them) that `raytpu_cluster` can adopt, " +
			"as the `raytpu_cluster` each would be once imported: its identity, a display name with its status, Ray " +
			"Operator add-on and TPU node pools, and with `include_resource` its attributes. A cluster without the `system` " +
			"node pool that `raytpu_cluster` keeps is left out, with a warning naming it: importing it would plan its " +
			"replacement; adopt its Ray Operator add-on as `raytpu_ray_operator` instead.",
		Attributes: listScopeAttributes("clusters"),
	}
}

func (r *clusterListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var scope listScope
	client, diags := r.listStart(ctx, req, &scope, "raytpu_cluster")
	var project, location string
	if client != nil {
		var d diag.Diagnostics
		project, location, d = scope.resolve(&r.resourceBase)
		diags.Append(d...)
	}
	if client == nil || diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	clusters, d := listClusters(ctx, client, project, location, "raytpu_cluster")
	diags.Append(d...)
	var adoptable []*containerpb.Cluster
	var left []string
	for _, c := range clusters {
		if clusterHasSystemPool(c) {
			adoptable = append(adoptable, c)
		} else {
			left = append(left, c.GetLocation()+"/"+c.GetName())
		}
	}
	if len(left) > 0 {
		diags.AddWarning("Clusters Not Listed", fmt.Sprintf("%s: no node pool named %q, which raytpu_cluster keeps for the Ray head "+
			"and system pods, so importing one as raytpu_cluster would plan its replacement. To run Ray on TPU slices there, "+
			"import its Ray Operator add-on as raytpu_ray_operator and its TPU node pools as raytpu_slice.", strings.Join(left, ", "), systemPoolName))
	}
	stream.Results = streamResults(req, diags, func(push func(list.ListResult) bool) {
		for _, cluster := range adoptable {
			if !push(clusterListResult(ctx, req, client, project, cluster)) {
				return
			}
		}
	})
}

func clusterHasSystemPool(c *containerpb.Cluster) bool {
	for _, pool := range c.GetNodePools() {
		if pool.GetName() == systemPoolName {
			return true
		}
	}
	return false
}

// clusterListResult is cluster as a listed raytpu_cluster, its state what importing it writes.
func clusterListResult(ctx context.Context, req list.ListRequest, client *gke.Client, project string, cluster *containerpb.Cluster) list.ListResult {
	id := gke.ClusterID{Project: project, Location: cluster.GetLocation(), Name: cluster.GetName()}
	return listResult(ctx, req, clusterIdentity, id.String(), clusterDisplayName(cluster), clusterAdoptedAttributes(id),
		func(state *tfsdk.Resource) diag.Diagnostics {
			var m clusterResourceModel
			diags := state.Get(ctx, &m)
			if diags.HasError() {
				return diags
			}
			diags.Append(readCluster(ctx, client, cluster, &m, false)...)
			diags.Append(state.Set(ctx, &m)...)
			return diags
		})
}

// clusterDisplayName says what a cluster is: "location/name: RUNNING, Ray Operator on, 3 TPU
// node pools".
func clusterDisplayName(c *containerpb.Cluster) string {
	ray := "off"
	if c.GetAddonsConfig().GetRayOperatorConfig().GetEnabled() {
		ray = "on"
	}
	tpuPools := 0
	for _, pool := range c.GetNodePools() {
		if isTPUNodePool(pool) {
			tpuPools++
		}
	}
	unit := "TPU node pools"
	if tpuPools == 1 {
		unit = "TPU node pool"
	}
	return fmt.Sprintf("%s/%s: %s, Ray Operator %s, %d %s", c.GetLocation(), c.GetName(), c.GetStatus(), ray, tpuPools, unit)
}
