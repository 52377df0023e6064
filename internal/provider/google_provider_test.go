package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The moved tests need state that terraform-provider-google wrote. They get it from a stand-in
// provider registered as "google" (registry.terraform.io/hashicorp/google, or registry.opentofu.org
// under OpenTofu), serving google_container_node_pool and google_container_cluster with the
// google provider v6/v7 schema versions (1 and 2), attribute names and SDKv2 shapes (nested blocks
// as lists) for the attributes the tests set. It records its configuration as its state and calls
// no API; the tests create the real objects in the emulator first.
//
// A state file crafted in testdata would not do: the state names the google provider, and both
// CLIs refuse to plan until that provider is installed, which they would try to download from the
// registry; terraform-plugin-testing installs only the providers the test serves in-process.

// testAccMoveProviderFactories serves raytpu and the stand-in google provider.
var testAccMoveProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"raytpu": testAccProtoV6ProviderFactories["raytpu"],
	"google": providerserver.NewProtocol6WithError(&googleStandIn{}),
}

type googleStandIn struct{}

func (p *googleStandIn) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "google"
}

func (p *googleStandIn) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (p *googleStandIn) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *googleStandIn) DataSources(context.Context) []func() datasource.DataSource { return nil }

func (p *googleStandIn) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource {
			return &googleStandInResource{typeName: "google_container_node_pool", schema: googleNodePoolSchema, id: googleNodePoolID}
		},
		func() resource.Resource {
			return &googleStandInResource{typeName: "google_container_cluster", schema: googleClusterSchema, id: googleClusterID}
		},
	}
}

// googleStandInResource keeps its configuration as its state, with the id the google provider
// gives the object.
type googleStandInResource struct {
	typeName string
	schema   schema.Schema
	id       func(attrs map[string]types.String) string
}

func (r *googleStandInResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = r.typeName
}

func (r *googleStandInResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.schema
}

func (r *googleStandInResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
	attrs := map[string]types.String{}
	for _, name := range []string{"project", "location", "cluster", "name"} {
		var v types.String
		if _, ok := r.schema.Attributes[name]; ok {
			resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root(name), &v)...)
		}
		attrs[name] = v
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), r.id(attrs))...)
}

func (r *googleStandInResource) Read(_ context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

func (r *googleStandInResource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (r *googleStandInResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

func googleNodePoolID(a map[string]types.String) string {
	return fmt.Sprintf("projects/%s/locations/%s/clusters/%s/nodePools/%s",
		a["project"].ValueString(), a["location"].ValueString(), a["cluster"].ValueString(), a["name"].ValueString())
}

func googleClusterID(a map[string]types.String) string {
	return fmt.Sprintf("projects/%s/locations/%s/clusters/%s", a["project"].ValueString(), a["location"].ValueString(), a["name"].ValueString())
}

func optionalStrings(names ...string) map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	for _, n := range names {
		attrs[n] = schema.StringAttribute{Optional: true}
	}
	return attrs
}

func enabledBlock() schema.ListNestedBlock {
	return schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
		Attributes: map[string]schema.Attribute{"enabled": schema.BoolAttribute{Optional: true}},
	}}
}

// googleNodePoolSchema is google_container_node_pool, schema version 1, in part.
var googleNodePoolSchema = schema.Schema{
	Version: 1,
	Attributes: func() map[string]schema.Attribute {
		a := optionalStrings("project", "location", "cluster", "name", "version")
		a["id"] = schema.StringAttribute{Computed: true}
		a["node_count"] = schema.Int64Attribute{Optional: true}
		a["initial_node_count"] = schema.Int64Attribute{Optional: true}
		a["node_locations"] = schema.SetAttribute{Optional: true, ElementType: types.StringType}
		return a
	}(),
	Blocks: map[string]schema.Block{
		"node_config": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: func() map[string]schema.Attribute {
			a := optionalStrings("machine_type", "disk_type")
			a["spot"] = schema.BoolAttribute{Optional: true}
			a["disk_size_gb"] = schema.Int64Attribute{Optional: true}
			a["labels"] = schema.MapAttribute{Optional: true, ElementType: types.StringType}
			return a
		}()}},
		"placement_policy": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
			Attributes: optionalStrings("type", "tpu_topology", "policy_name"),
		}},
		"management": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
			"auto_repair": schema.BoolAttribute{Optional: true}, "auto_upgrade": schema.BoolAttribute{Optional: true},
		}}},
		"autoscaling": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
			"min_node_count": schema.Int64Attribute{Optional: true}, "max_node_count": schema.Int64Attribute{Optional: true},
			"total_min_node_count": schema.Int64Attribute{Optional: true}, "total_max_node_count": schema.Int64Attribute{Optional: true},
		}}},
		"queued_provisioning": enabledBlock(),
	},
}

// googleClusterSchema is google_container_cluster, schema version 2, in part.
var googleClusterSchema = schema.Schema{
	Version: 2,
	Attributes: func() map[string]schema.Attribute {
		a := optionalStrings("project", "location", "name", "min_master_version")
		a["id"] = schema.StringAttribute{Computed: true}
		a["deletion_protection"] = schema.BoolAttribute{Optional: true}
		a["initial_node_count"] = schema.Int64Attribute{Optional: true}
		return a
	}(),
	Blocks: map[string]schema.Block{
		"addons_config": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Blocks: map[string]schema.Block{
			"ray_operator_config": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
				Attributes: map[string]schema.Attribute{"enabled": schema.BoolAttribute{Optional: true}},
				Blocks: map[string]schema.Block{
					"ray_logging_config":            enabledBlock(),
					"ray_cluster_monitoring_config": enabledBlock(),
				},
			}},
		}}},
	},
}

var _ provider.Provider = (*googleStandIn)(nil)
