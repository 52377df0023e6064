package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var (
	_ list.ListResourceWithConfigure      = (*sliceListResource)(nil)
	_ list.ListResourceWithValidateConfig = (*sliceListResource)(nil)
)

// NewSliceListResource returns the raytpu_slice list resource: every TPU node pool of a cluster,
// or of a project's clusters in a location, whoever made it.
func NewSliceListResource() list.ListResource {
	return &sliceListResource{}
}

type sliceListResource struct {
	resourceBase
}

type sliceListModel struct {
	listScope
	Cluster types.String `tfsdk:"cluster"`
}

func (r *sliceListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slice"
}

func (r *sliceListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	attributes := listScopeAttributes("clusters' TPU node pools")
	attributes["cluster"] = listschema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Cluster id, `projects/{project}/locations/{location}/clusters/{name}`: list the TPU node pools " +
			"of this cluster only. Conflicts with `project` and `location`.",
		Validators: []validator.String{clusterIDValidator{}},
	}
	resp.Schema = listschema.Schema{
		MarkdownDescription: "Every TPU node pool of a cluster, or of the clusters of a project in a location, whoever made " +
			"it (raytpu, the google provider, xpk, gcloud, GKE's node auto-provisioning), as the `raytpu_slice` it would be " +
			"once imported: its identity, a display name with its shape, hosts, capacity and maker, and with " +
			"`include_resource` the slice's attributes, its shape left null where none applies.",
		Attributes: attributes,
	}
}

func (r *sliceListResource) ValidateListResourceConfig(ctx context.Context, req list.ValidateConfigRequest, resp *list.ValidateConfigResponse) {
	var config sliceListModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || config.Cluster.IsNull() {
		return
	}
	for _, name := range []string{"project", "location"} {
		var v types.String
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(name), &v)...)
		if !v.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root(name), "Conflicting List Arguments",
				fmt.Sprintf("%s cannot be set together with cluster, which names the project and location already: set "+
					"either cluster, or project and location.", name))
		}
	}
}

func (r *sliceListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var config sliceListModel
	client, diags := r.listStart(ctx, req, &config, "raytpu_slice")
	if client == nil {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	clusters, project, d := r.clusters(ctx, client, config)
	diags.Append(d...)
	stream.Results = streamResults(req, diags, func(push func(list.ListResult) bool) {
		for _, cluster := range clusters {
			clusterID := gke.ClusterID{Project: project, Location: cluster.GetLocation(), Name: cluster.GetName()}
			pools := slices.Clone(cluster.GetNodePools())
			slices.SortFunc(pools, func(a, b *containerpb.NodePool) int { return strings.Compare(a.GetName(), b.GetName()) })
			for _, pool := range pools {
				if !isTPUNodePool(pool) {
					continue
				}
				if !push(sliceListResult(ctx, req, client, clusterID, accessOf(cluster), pool)) {
					return
				}
			}
		}
	})
}

// clusters reads the clusters the list block names, with their node pools, and the project
// they are in.
func (r *sliceListResource) clusters(ctx context.Context, client *gke.Client, config sliceListModel) ([]*containerpb.Cluster, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !config.Cluster.IsNull() {
		id, _ := gke.ParseClusterID(config.Cluster.ValueString())
		cluster, err := client.GetCluster(ctx, id)
		if err != nil {
			diags.AddAttributeError(path.Root("cluster"), "Error Listing Slices", fmt.Sprintf("listing raytpu_slice: reading the cluster %s: %s", id, gke.WithAdvice(err)))
			return nil, "", diags
		}
		return []*containerpb.Cluster{cluster}, id.Project, diags
	}
	project, location, diags := config.resolve(&r.resourceBase)
	if diags.HasError() {
		return nil, "", diags
	}
	clusters, d := listClusters(ctx, client, project, location, "raytpu_slice")
	diags.Append(d...)
	return clusters, project, diags
}

// isTPUNodePool reports a node pool whose machine type is a TPU machine type of the catalog.
func isTPUNodePool(pool *containerpb.NodePool) bool {
	_, _, ok := tpu.LookupMachineType(pool.GetConfig().GetMachineType())
	return ok
}

// sliceListResult is pool as a listed raytpu_slice: its state is what importing it writes
// (ImportState, then Read), from the pool as listed, and its hosts as they are now.
func sliceListResult(ctx context.Context, req list.ListRequest, client *gke.Client, cluster gke.ClusterID, access clusterAccess,
	pool *containerpb.NodePool) list.ListResult {
	id := gke.NodePoolID{Cluster: cluster, Name: pool.GetName()}
	return listResult(ctx, req, sliceIdentity, id.String(), sliceDisplayName(cluster, pool), sliceAdoptedAttributes(id),
		func(state *tfsdk.Resource) diag.Diagnostics {
			var m sliceResourceModel
			diags := state.Get(ctx, &m)
			if diags.HasError() {
				return diags
			}
			hosts, err := sliceHosts(ctx, client, access, pool)
			if err != nil {
				diags.AddWarning("Slice Hosts Unknown", fmt.Sprintf("listing the hosts of %s: %s", id, err))
			}
			diags.Append(readPool(ctx, &m, pool, hosts)...)
			diags.Append(state.Set(ctx, &m)...)
			return diags
		})
}

// sliceDisplayName says what a TPU node pool is: "cluster/pool: v6e 4x4, 4 hosts, spot, made by
// xpk", with "TPU shape unknown" for a pool whose shape cannot be derived.
func sliceDisplayName(cluster gke.ClusterID, pool *containerpb.NodePool) string {
	shape := "TPU shape unknown (" + pool.GetConfig().GetMachineType() + ")"
	if s, err := nodePoolSlice(pool, nil); err == nil {
		shape = s.Generation.Name + " " + s.Topology.String()
	}
	hosts := poolHosts(pool)
	maker := poolMaker(cluster.Name, pool)
	if maker == "" {
		maker = "a tool GKE does not record"
	}
	unit := "hosts"
	if hosts == 1 {
		unit = "host"
	}
	return fmt.Sprintf("%s/%s: %s, %d %s, %s, made by %s", cluster.Name, pool.GetName(), shape, hosts, unit, choiceOfPool(pool).Kind, maker)
}
