package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Resource identity (Terraform 1.12 and later, OpenTofu 1.12 and later): every raytpu resource is
// identified by the GKE names its id is made of, so that an import block can name it by identity
// instead of by id. The identity is derived from the id attribute alone, so each resource gets it
// from a thin wrapper (cluster_identity.go, slice_identity.go, ray_operator_identity.go,
// ray_cluster_identity.go, ray_service_identity.go) that runs
// the resource's own Create, Read, Update and ImportState and then writes the identity of the id it
// left in state. CLIs without resource identity ignore it.

// identityParts are the identity attributes of a resource in the order its import id names them,
// with a parser of its id into them.
type identityParts struct {
	// names are the identity attributes; the first is "project", which an import may leave out for
	// the provider's project.
	names []string
	// fromID splits a state id into the values of names.
	fromID func(id string) ([]string, error)
}

func (p identityParts) schema(what string) identityschema.Schema {
	attrs := map[string]identityschema.Attribute{}
	for _, name := range p.names {
		if name == "project" {
			attrs[name] = identityschema.StringAttribute{OptionalForImport: true, Description: "Project of " + what + "; the provider's project when left out of an import."}
			continue
		}
		attrs[name] = identityschema.StringAttribute{RequiredForImport: true, Description: identityDescriptions[name] + " of " + what + "."}
	}
	return identityschema.Schema{Attributes: attrs}
}

var identityDescriptions = map[string]string{
	"location":  "Location (zone or region)",
	"cluster":   "Name of the cluster",
	"name":      "Name",
	"namespace": "Kubernetes namespace",
}

// set writes the identity of the id that the first of states with an id holds: a Read that finds
// the resource gone still answers with its identity, from the prior state, as the framework
// requires. Nothing when no state has an id, or when there is no identity to write.
func (p identityParts) set(ctx context.Context, identity *tfsdk.ResourceIdentity, states ...tfsdk.State) error {
	if identity == nil {
		return nil
	}
	var id types.String
	for _, state := range states {
		if state.Raw.IsNull() {
			continue
		}
		if d := state.GetAttribute(ctx, path.Root("id"), &id); !d.HasError() && !id.IsNull() && !id.IsUnknown() {
			break
		}
	}
	if id.IsNull() || id.IsUnknown() {
		return nil
	}
	return p.setID(ctx, identity, id.ValueString())
}

// setID writes the identity of the resource whose id is id.
func (p identityParts) setID(ctx context.Context, identity *tfsdk.ResourceIdentity, id string) error {
	values, err := p.fromID(id)
	if err != nil {
		return err
	}
	for i, name := range p.names {
		if d := identity.SetAttribute(ctx, path.Root(name), values[i]); d.HasError() {
			return fmt.Errorf("setting identity attribute %s: %v", name, d.Errors())
		}
	}
	return nil
}

// importID is the import id an import by identity stands for: {project}/{location}/... or, with
// no project, the short form that the resource's ImportState completes with the provider's project.
func (p identityParts) importID(ctx context.Context, identity *tfsdk.ResourceIdentity) (string, error) {
	if identity == nil {
		return "", fmt.Errorf("the import gives neither an id nor an identity")
	}
	var parts []string
	for _, name := range p.names {
		var v types.String
		if d := identity.GetAttribute(ctx, path.Root(name), &v); d.HasError() {
			return "", fmt.Errorf("reading identity attribute %s: %v", name, d.Errors())
		}
		switch {
		case name == "project" && v.ValueString() == "":
			continue
		case v.ValueString() == "" || strings.Contains(v.ValueString(), "/"):
			return "", fmt.Errorf("identity attribute %s = %q must be a non-empty GKE name without \"/\"", name, v.ValueString())
		}
		parts = append(parts, v.ValueString())
	}
	return strings.Join(parts, "/"), nil
}

// importState runs a resource's ImportState for an import by id or by identity, then writes the
// identity of what it imported.
func (p identityParts) importState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse,
	importByID func(context.Context, resource.ImportStateRequest, *resource.ImportStateResponse)) {
	if req.ID == "" {
		id, err := p.importID(ctx, req.Identity)
		if err != nil {
			resp.Diagnostics.AddError("Invalid Import Identity", err.Error()+".")
			return
		}
		req.ID = id
	}
	importByID(ctx, req, resp)
	if !resp.Diagnostics.HasError() {
		p.report(ctx, resp.Identity, &resp.Diagnostics, resp.State)
	}
}

// report is set, with its error as a diagnostic.
func (p identityParts) report(ctx context.Context, identity *tfsdk.ResourceIdentity, diags interface{ AddError(string, string) }, states ...tfsdk.State) {
	if err := p.set(ctx, identity, states...); err != nil {
		diags.AddError("Resource Identity Error", err.Error()+". Please report this issue to the provider developers.")
	}
}
