package provider

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// List resources (Terraform 1.14 and later: list blocks, `terraform query`) find what GKE holds
// and describe each object as its resource would after an import: the same identity, and, when
// the list block asks for it (include_resource), the state that the resource's ImportState and
// Read would write. `terraform query -generate-config-out` writes configuration from that state,
// so what it writes imports with an empty plan.

// listScope is where a list block looks: a project, and a location or every location.
type listScope struct {
	Project  types.String `tfsdk:"project"`
	Location types.String `tfsdk:"location"`
}

// listScopeAttributes are the project and location arguments of a list block.
func listScopeAttributes(what string) map[string]listschema.Attribute {
	return map[string]listschema.Attribute{
		"project": listschema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Project whose " + what + " to list; the provider's project when unset.",
		},
		"location": listschema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Zone or region whose " + what + " to list, or `-` for every location of the project; the " +
				"provider's location when unset.",
		},
	}
}

// resolve fills in the provider's project and location.
func (s listScope) resolve(b *resourceBase) (project, location string, diags diag.Diagnostics) {
	project, location = s.Project.ValueString(), s.Location.ValueString()
	if project == "" && b.data != nil {
		project = b.data.project
	}
	if location == "" && b.data != nil {
		location = b.data.location
	}
	if project == "" {
		diags.AddAttributeError(path.Root("project"), "Missing Project",
			"Set project in the list block's config, or project in the provider block (or GOOGLE_PROJECT).")
	}
	if location == "" {
		diags.AddAttributeError(path.Root("location"), "Missing Location",
			"Set location in the list block's config (a zone, a region, or - for every location), or location in the "+
				"provider block (or GOOGLE_ZONE, GOOGLE_REGION).")
	}
	return project, location, diags
}

// listStart reads a list block's config into config and returns the GKE client: nil, with the
// diagnostics to stream, when either fails.
func (b *resourceBase) listStart(ctx context.Context, req list.ListRequest, config any, what string) (*gke.Client, diag.Diagnostics) {
	diags := req.Config.Get(ctx, config)
	if diags.HasError() {
		return nil, diags
	}
	return b.client(ctx, "listing "+what, &diags), diags
}

// listClusters reads the clusters of project in location (gke.AllLocations for all), sorted by
// location and name so that every query lists them in the same order. The zones GKE could not
// answer for are a warning: the list may miss their clusters.
func listClusters(ctx context.Context, client *gke.Client, project, location, what string) ([]*containerpb.Cluster, diag.Diagnostics) {
	var diags diag.Diagnostics
	clusters, missing, err := client.ListClusters(ctx, project, location)
	if err != nil {
		diags.AddError("Error Listing Clusters", fmt.Sprintf("listing %s: reading the clusters of project %s in %s: %s",
			what, project, location, gke.WithAdvice(err)))
		return nil, diags
	}
	if len(missing) > 0 {
		diags.AddWarning("Zones Not Listed", fmt.Sprintf("GKE could not list the clusters of project %s in %s: what they hold is "+
			"missing from this list. Query again later.", project, strings.Join(missing, ", ")))
	}
	slices.SortFunc(clusters, func(a, b *containerpb.Cluster) int {
		return strings.Compare(a.GetLocation()+"/"+a.GetName(), b.GetLocation()+"/"+b.GetName())
	})
	return clusters, diags
}

// listResult is one listed object: its resource's identity from id and, when the request
// includes the resource, the state that import attributes and then read write.
func listResult(ctx context.Context, req list.ListRequest, identity identityParts, id, displayName string,
	imported map[string]any, read func(*tfsdk.Resource) diag.Diagnostics) list.ListResult {
	result := req.NewListResult(ctx)
	result.DisplayName = displayName
	if err := identity.setID(ctx, result.Identity, id); err != nil {
		result.Diagnostics.AddError("Resource Identity Error", err.Error()+". Please report this issue to the provider developers.")
		return result
	}
	if !req.IncludeResource {
		return result
	}
	for attribute, value := range imported {
		result.Diagnostics.Append(result.Resource.SetAttribute(ctx, path.Root(attribute), value)...)
	}
	if !result.Diagnostics.HasError() {
		result.Diagnostics.Append(read(result.Resource)...)
	}
	return result
}

// streamResults sends the results of next, after the diagnostics of the whole list (warnings),
// and stops at the request's limit or when Terraform wants no more.
func streamResults(req list.ListRequest, diags diag.Diagnostics, next iter.Seq[list.ListResult]) iter.Seq[list.ListResult] {
	return func(push func(list.ListResult) bool) {
		if len(diags) > 0 && !push(list.ListResult{Diagnostics: diags}) {
			return
		}
		if diags.HasError() {
			return
		}
		sent := int64(0)
		for result := range next {
			if req.Limit > 0 && sent >= req.Limit {
				return
			}
			if !push(result) {
				return
			}
			sent++
		}
	}
}
