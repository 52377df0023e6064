package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// externalCredentialsModel is the provider's external_credentials block.
type externalCredentialsModel struct {
	Audience            types.String `tfsdk:"audience"`
	ServiceAccountEmail types.String `tfsdk:"service_account_email"`
	IdentityToken       types.String `tfsdk:"identity_token"`
}

// externalCredentialsBlock is the google provider's external_credentials block: workload identity
// federation with an identity token handed over as a value, as HCP Terraform Stacks hands it.
func externalCredentialsBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "Workload identity federation credentials given as values, as in the google provider: the " +
			"`identity_token` is exchanged at Google's Security Token Service for the workload identity pool provider " +
			"`audience`, and the federated identity impersonates `service_account_email`. For HCP Terraform Stacks " +
			"(`identity_token = identity_token.gcp.jwt`). Conflicts with `credentials` and `access_token`.",
		Attributes: map[string]schema.Attribute{
			"audience": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The workload identity pool provider, " +
					"`//iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{pool}/providers/{provider}`. Required in the block.",
			},
			"service_account_email": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The service account the federated identity impersonates. Required in the block.",
			},
			"identity_token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "The workload's OIDC token (a JWT). Required in the block.",
			},
		},
	}
}

func impersonateDelegatesAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Optional:    true,
		ElementType: types.StringType,
		MarkdownDescription: "The delegation chain of `impersonate_service_account`: service accounts (emails or " +
			"`projects/-/serviceAccounts/{email}`), each granted Service Account Token Creator on the next, the credentials " +
			"above on the first.",
	}
}

// configureFederation reads external_credentials and impersonate_service_account_delegates into
// auth, reporting every problem on its attribute. The block takes the place of the credentials
// and access token of the environment; set with either of them in the configuration, it is refused.
func (m providerModel) configureFederation(ctx context.Context, auth *gke.Auth) diag.Diagnostics {
	var diags diag.Diagnostics
	block := path.Root("external_credentials")
	if m.ExternalCredentials.IsUnknown() {
		diags.AddAttributeError(block, "Unknown Provider Configuration",
			"external_credentials depends on a value known only after apply. Provider configuration must be known at plan time.")
	}
	if !m.ExternalCredentials.IsNull() && !m.ExternalCredentials.IsUnknown() {
		var e externalCredentialsModel
		diags.Append(m.ExternalCredentials.As(ctx, &e, basetypes.ObjectAsOptions{})...)
		for name, v := range map[string]types.String{
			"audience": e.Audience, "service_account_email": e.ServiceAccountEmail, "identity_token": e.IdentityToken,
		} {
			switch {
			case v.IsUnknown():
				diags.AddAttributeError(block.AtName(name), "Unknown Provider Configuration", fmt.Sprintf("external_credentials.%s "+
					"depends on a value known only after apply. Provider configuration must be known at plan time.", name))
			case v.IsNull():
				diags.AddAttributeError(block.AtName(name), "Missing External Credentials Attribute",
					fmt.Sprintf("external_credentials.%s is required: the block needs audience, service_account_email and identity_token.", name))
			}
		}
		for name, v := range map[string]types.String{"credentials": m.Credentials, "access_token": m.AccessToken} {
			if !v.IsNull() {
				diags.AddAttributeError(block, "Conflicting Credentials",
					fmt.Sprintf("external_credentials and %s are both set: keep one of them.", name))
			}
		}
		auth.External = &gke.ExternalCredentials{
			Audience: e.Audience.ValueString(), ServiceAccountEmail: e.ServiceAccountEmail.ValueString(), IdentityToken: e.IdentityToken.ValueString(),
		}
		auth.Credentials, auth.AccessToken = "", ""
	}
	delegates := path.Root("impersonate_service_account_delegates")
	if m.ImpersonateDelegates.IsUnknown() {
		diags.AddAttributeError(delegates, "Unknown Provider Configuration",
			"impersonate_service_account_delegates depends on a value known only after apply. Provider configuration must be known at plan time.")
		return diags
	}
	diags.Append(m.ImpersonateDelegates.ElementsAs(ctx, &auth.ImpersonateDelegates, false)...)
	if len(auth.ImpersonateDelegates) > 0 && auth.ImpersonateServiceAccount == "" {
		diags.AddAttributeError(delegates, "Delegates Without Impersonation",
			"impersonate_service_account_delegates is set but impersonate_service_account (or GOOGLE_IMPERSONATE_SERVICE_ACCOUNT) is not: "+
				"set the service account the chain ends with, or remove the delegates.")
	}
	return diags
}
