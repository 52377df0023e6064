package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ resource.ResourceWithIdentity = (*clusterResourceWithIdentity)(nil)

// clusterIdentity is raytpu_cluster's identity: project, location and name.
var clusterIdentity = identityParts{
	names: []string{"project", "location", "name"},
	fromID: func(id string) ([]string, error) {
		c, err := gke.ParseClusterID(id)
		return []string{c.Project, c.Location, c.Name}, err
	},
}

// clusterResourceWithIdentity is raytpu_cluster with its resource identity (resource_identity.go).
type clusterResourceWithIdentity struct{ *clusterResource }

func (r clusterResourceWithIdentity) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = clusterIdentity.schema("the cluster")
}

func (r clusterResourceWithIdentity) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.clusterResource.Create(ctx, req, resp)
	clusterIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r clusterResourceWithIdentity) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.clusterResource.Read(ctx, req, resp)
	clusterIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State, req.State)
}

func (r clusterResourceWithIdentity) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.clusterResource.Update(ctx, req, resp)
	clusterIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r clusterResourceWithIdentity) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	clusterIdentity.importState(ctx, req, resp, r.clusterResource.ImportState)
}
