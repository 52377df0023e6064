package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithIdentity = (*rayClusterResourceWithIdentity)(nil)

// rayClusterIdentity is raytpu_ray_cluster's identity: its GKE cluster's project, location and
// name, and the RayCluster's namespace and name.
var rayClusterIdentity = identityParts{
	names: []string{"project", "location", "cluster", "namespace", "name"},
	fromID: func(id string) ([]string, error) {
		c, namespace, name, err := rayClusterKind.parseImportID(id, "")
		return []string{c.Project, c.Location, c.Name, namespace, name}, err
	},
}

// rayClusterResourceWithIdentity is raytpu_ray_cluster with its resource identity
// (resource_identity.go).
type rayClusterResourceWithIdentity struct{ *rayClusterResource }

func (r rayClusterResourceWithIdentity) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = rayClusterIdentity.schema("the RayCluster")
}

func (r rayClusterResourceWithIdentity) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.rayClusterResource.Create(ctx, req, resp)
	rayClusterIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r rayClusterResourceWithIdentity) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.rayClusterResource.Read(ctx, req, resp)
	rayClusterIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State, req.State)
}

func (r rayClusterResourceWithIdentity) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.rayClusterResource.Update(ctx, req, resp)
	rayClusterIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r rayClusterResourceWithIdentity) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	rayClusterIdentity.importState(ctx, req, resp, r.rayClusterResource.ImportState)
}
