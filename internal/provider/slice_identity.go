package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ resource.ResourceWithIdentity = (*sliceResourceWithIdentity)(nil)

// sliceIdentity is raytpu_slice's identity: project, location, cluster and node pool name.
var sliceIdentity = identityParts{
	names: []string{"project", "location", "cluster", "name"},
	fromID: func(id string) ([]string, error) {
		n, err := gke.ParseNodePoolID(id)
		return []string{n.Cluster.Project, n.Cluster.Location, n.Cluster.Name, n.Name}, err
	},
}

// sliceResourceWithIdentity is raytpu_slice with its resource identity (resource_identity.go).
type sliceResourceWithIdentity struct{ *sliceResource }

func (r sliceResourceWithIdentity) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = sliceIdentity.schema("the slice's node pool")
}

func (r sliceResourceWithIdentity) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.sliceResource.Create(ctx, req, resp)
	sliceIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r sliceResourceWithIdentity) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.sliceResource.Read(ctx, req, resp)
	sliceIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State, req.State)
}

func (r sliceResourceWithIdentity) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.sliceResource.Update(ctx, req, resp)
	sliceIdentity.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
}

func (r sliceResourceWithIdentity) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	sliceIdentity.importState(ctx, req, resp, r.sliceResource.ImportState)
}
