package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ resource.ResourceWithIdentity = (*rayOperatorResourceWithIdentity)(nil)

// rayOperatorIdentity is raytpu_ray_operator's identity: the cluster's project, location and name.
var rayOperatorIdentity = identityParts{
	names: []string{"project", "location", "cluster"},
	fromID: func(id string) ([]string, error) {
		c, err := gke.ParseClusterID(id)
		return []string{c.Project, c.Location, c.Name}, err
	},
}

// rayOperatorResourceWithIdentity is raytpu_ray_operator with its resource identity
// (resource_identity.go).
type rayOperatorResourceWithIdentity struct{ *rayOperatorResource }

func (r rayOperatorResourceWithIdentity) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = rayOperatorIdentity.schema("the Ray Operator add-on")
}

func (r rayOperatorResourceWithIdentity) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.rayOperatorResource.Create(ctx, req, resp)
	rayOperatorIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r rayOperatorResourceWithIdentity) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.rayOperatorResource.Read(ctx, req, resp)
	rayOperatorIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State, req.State)
}

func (r rayOperatorResourceWithIdentity) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.rayOperatorResource.Update(ctx, req, resp)
	rayOperatorIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r rayOperatorResourceWithIdentity) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	rayOperatorIdentity.importState(ctx, req, resp, r.rayOperatorResource.ImportState)
}
