// Package provider maps raytpu's Terraform schemas onto the TPU catalog, GKE and Kubernetes.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/raytpu/raytpu"

var (
	_ provider.Provider              = (*raytpuProvider)(nil)
	_ provider.ProviderWithFunctions = (*raytpuProvider)(nil)
)

type raytpuProvider struct {
	version string
}

// New returns the provider factory for a build version ("dev", "test" or a release).
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &raytpuProvider{version: version}
	}
}

func (p *raytpuProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "raytpu"
	resp.Version = p.version
}

func (p *raytpuProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "raytpu creates GKE clusters with the Ray Operator add-on and TPU slices " +
			"(one GKE node pool each), validated at plan time, with outputs that Ray and KubeRay consume directly.",
	}
}

func (p *raytpuProvider) Configure(_ context.Context, _ provider.ConfigureRequest, _ *provider.ConfigureResponse) {
}

func (p *raytpuProvider) Resources(_ context.Context) []func() resource.Resource {
	return nil
}

func (p *raytpuProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewTopologyDataSource,
	}
}

func (p *raytpuProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		NewSliceShapeFunction,
	}
}
