package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ resource.ResourceWithIdentity = (*rayServiceResourceWithIdentity)(nil)

// rayServiceIdentity is raytpu_ray_service's identity: its GKE cluster's project, location and
// name, and the RayService's namespace and name.
var rayServiceIdentity = identityParts{
	names: []string{"project", "location", "cluster", "namespace", "name"},
	fromID: func(id string) ([]string, error) {
		c, namespace, name, err := rayServiceKind.parseImportID(id, "")
		return []string{c.Project, c.Location, c.Name, namespace, name}, err
	},
}

// rayServiceResourceWithIdentity is raytpu_ray_service with its resource identity
// (resource_identity.go).
type rayServiceResourceWithIdentity struct{ *rayServiceResource }

func (r rayServiceResourceWithIdentity) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = rayServiceIdentity.schema("the RayService")
}

func (r rayServiceResourceWithIdentity) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.rayServiceResource.Create(ctx, req, resp)
	rayServiceIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r rayServiceResourceWithIdentity) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.rayServiceResource.Read(ctx, req, resp)
	rayServiceIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State, req.State)
}

func (r rayServiceResourceWithIdentity) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.rayServiceResource.Update(ctx, req, resp)
	rayServiceIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r rayServiceResourceWithIdentity) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	rayServiceIdentity.importState(ctx, req, resp, r.rayServiceResource.ImportState)
}
