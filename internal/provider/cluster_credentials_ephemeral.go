package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

var _ ephemeral.EphemeralResourceWithConfigure = (*clusterCredentialsEphemeral)(nil)

// NewClusterCredentialsEphemeralResource returns raytpu_cluster_credentials: what the kubernetes
// and helm providers need to reach a cluster, never written to a plan or state.
func NewClusterCredentialsEphemeralResource() ephemeral.EphemeralResource {
	return &clusterCredentialsEphemeral{}
}

type clusterCredentialsEphemeral struct {
	data *providerData
}

type clusterCredentialsModel struct {
	Cluster              types.String `tfsdk:"cluster"`
	Endpoint             types.String `tfsdk:"endpoint"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Token                types.String `tfsdk:"token"`
	ExpiresAt            types.String `tfsdk:"expires_at"`
}

func (r *clusterCredentialsEphemeral) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_credentials"
}

func (r *clusterCredentialsEphemeral) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Credentials for a cluster's Kubernetes API server: its endpoint, its CA certificate and a " +
			"short-lived access token of the provider's own credentials, ready for the `kubernetes` and `helm` providers' " +
			"configuration. Being ephemeral, none of it is written to a plan or state (Terraform 1.10 or OpenTofu 1.11 and later).",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Id of the cluster, `projects/{project}/locations/{location}/clusters/{name}`: the `id` of a `raytpu_cluster`.",
				Validators:          []validator.String{clusterIDValidator{}},
			},
			"endpoint": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "URL of the API server, such as `https://203.0.113.10`, for the `host` of the kubernetes " +
					"provider. GKE's DNS-based endpoint when it accepts external traffic, else the IP endpoint.",
			},
			"cluster_ca_certificate": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "PEM CA certificate of the API server (decoded already), for `cluster_ca_certificate`. Null " +
					"for the DNS-based endpoint, whose certificate is publicly trusted.",
			},
			"token": schema.StringAttribute{
				Computed: true, Sensitive: true,
				MarkdownDescription: "OAuth2 access token of the provider's credentials, for `token`. Short-lived: it is obtained " +
					"again on every plan and apply.",
			},
			"expires_at": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "When `token` expires, RFC 3339; null when the credentials do not say (a configured `access_token`).",
			},
		},
	}
}

func (r *clusterCredentialsEphemeral) Configure(_ context.Context, req ephemeral.ConfigureRequest, resp *ephemeral.ConfigureResponse) {
	r.data = configuredProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *clusterCredentialsEphemeral) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var m clusterCredentialsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, err := gke.ParseClusterID(m.Cluster.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Invalid Cluster ID", err.Error()+".")
		return
	}
	action := fmt.Sprintf("opening raytpu_cluster_credentials (%s)", id)
	if r.data == nil {
		resp.Diagnostics.AddError("Provider Not Configured", action+": the raytpu provider is not configured.")
		return
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		resp.Diagnostics.AddError("GKE Client Error", fmt.Sprintf("%s: %s", action, err))
		return
	}
	cluster, err := client.GetCluster(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Error Reading Cluster", fmt.Sprintf("%s: %s", action, gke.WithAdvice(err)))
		return
	}
	access := accessOf(cluster)
	if access.Endpoint == "" {
		resp.Diagnostics.AddError("Cluster Has No Endpoint",
			fmt.Sprintf("%s: GKE reports no endpoint for the cluster (status %s). Wait until it is RUNNING, then plan again.", action, cluster.GetStatus()))
		return
	}
	m.Endpoint = types.StringValue("https://" + access.Endpoint)
	m.ClusterCACertificate = types.StringNull()
	if access.CACertificate != "" {
		pem, err := base64.StdEncoding.DecodeString(access.CACertificate)
		if err != nil {
			resp.Diagnostics.AddError("Invalid Cluster CA Certificate", fmt.Sprintf("%s: GKE's clusterCaCertificate is not base64: %s.", action, err))
			return
		}
		m.ClusterCACertificate = types.StringValue(string(pem))
	}
	token, expiry, err := client.AccessToken()
	if err != nil {
		resp.Diagnostics.AddError("Access Token Error", fmt.Sprintf("%s: %s. Check the provider's credentials.", action, err))
		return
	}
	m.Token = types.StringValue(token)
	m.ExpiresAt = types.StringNull()
	if !expiry.IsZero() {
		m.ExpiresAt = types.StringValue(expiry.UTC().Format(time.RFC3339))
	}
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}
