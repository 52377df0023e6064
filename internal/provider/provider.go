// Package provider maps raytpu's Terraform schemas onto the TPU catalog, GKE and Kubernetes.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/raytpu/raytpu"

var (
	_ provider.Provider              = (*raytpuProvider)(nil)
	_ provider.ProviderWithFunctions = (*raytpuProvider)(nil)

	_ provider.ProviderWithEphemeralResources = (*raytpuProvider)(nil)
	_ provider.ProviderWithListResources      = (*raytpuProvider)(nil)
	_ provider.ProviderWithActions            = (*raytpuProvider)(nil)
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
			"(one GKE node pool each), validated at plan time, with outputs that Ray and KubeRay consume directly. " +
			"It authenticates like every Google provider; `raytpu_topology` needs no credentials at all.",
		Attributes: map[string]schema.Attribute{
			"project": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Default project of resources. Falls back to `GOOGLE_PROJECT`, then `GOOGLE_CLOUD_PROJECT`.",
			},
			"location": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Default location (zone or region) of resources. Falls back to `GOOGLE_ZONE`, then `GOOGLE_REGION`.",
			},
			"credentials": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Path or JSON content of a Google credentials file (service account key, authorized user, " +
					"workload identity federation). Falls back to `GOOGLE_CREDENTIALS`. Conflicts with `access_token`. Without " +
					"either, Application Default Credentials are used (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud, metadata server).",
			},
			"access_token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "An OAuth2 access token. Falls back to `GOOGLE_OAUTH_ACCESS_TOKEN`. Conflicts with `credentials`.",
			},
			"impersonate_service_account": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Email of a service account whose tokens raytpu uses, obtained with the credentials above. " +
					"Falls back to `GOOGLE_IMPERSONATE_SERVICE_ACCOUNT`.",
			},
			"impersonate_service_account_delegates": impersonateDelegatesAttribute(),
			"container_endpoint": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Base URL of the GKE API, for a private endpoint or a local emulator. Falls back to " +
					"`RAYTPU_CONTAINER_ENDPOINT`. Must be `https://`, or `http://` on a loopback address.",
			},
			"compute_endpoint": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Base URL of the Compute Engine API (`https://compute.googleapis.com/compute/v1/` by default), " +
					"where raytpu reads and creates the workload policies of tpu7x slices. Falls back to `RAYTPU_COMPUTE_ENDPOINT`. " +
					"Must be `https://`, or `http://` on a loopback address.",
			},
			"operation_poll_interval": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Longest wait between two reads of a running GKE operation, as a Go duration such as " +
					"`10s` (the default). Reads start every quarter second, then wait a fifth of the time waited so far, up to " +
					"this bound, so an operation is seen done within a fifth of its duration; once an operation of a type has " +
					"finished, the next one of that type is read just after the time it took. While a slice is created, its " +
					"hosts are watched in Kubernetes and its operation is read only at this interval, to see a failure.",
			},
		},
		Blocks: map[string]schema.Block{"external_credentials": externalCredentialsBlock()},
	}
}

func (p *raytpuProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data, diags := newProviderData(ctx, config, p.version)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.EphemeralResourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
}

func (p *raytpuProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewClusterResource,
		NewRayClusterResource,
		NewRayHistoryServerResource,
		NewComputeClassResource,
		NewRayOperatorResource,
		NewRayServiceResource,
		NewSliceResource,
	}
}

func (p *raytpuProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewTopologyDataSource,
	}
}

func (p *raytpuProvider) EphemeralResources(_ context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		NewClusterCredentialsEphemeralResource,
	}
}

func (p *raytpuProvider) ListResources(_ context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		NewClusterListResource,
		NewSliceListResource,
	}
}

func (p *raytpuProvider) Actions(_ context.Context) []func() action.Action {
	return []func() action.Action{
		NewDrainSliceAction,
		NewRecreateSliceAction,
		NewSubmitRayJobAction,
		NewUncordonSliceAction,
	}
}

func (p *raytpuProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		NewSliceShapeFunction,
	}
}
