package provider

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const testWorkloadAudience = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/hcp/providers/tfc"

func externalCredentialsObject(audience, email, token string) types.Object {
	value := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	return types.ObjectValueMust(map[string]attr.Type{
		"audience": types.StringType, "service_account_email": types.StringType, "identity_token": types.StringType,
	}, map[string]attr.Value{"audience": value(audience), "service_account_email": value(email), "identity_token": value(token)})
}

func providerModelWith(external types.Object, delegates ...string) providerModel {
	m := providerModel{ExternalCredentials: external, ImpersonateDelegates: types.ListNull(types.StringType)}
	if delegates != nil {
		m.ImpersonateDelegates, _ = types.ListValueFrom(context.Background(), types.StringType, delegates)
	}
	return m
}

// TestProviderData_externalCredentials reads the block into the credentials raytpu exchanges, in
// place of the credentials of the environment.
func TestProviderData_externalCredentials(t *testing.T) {
	t.Setenv("GOOGLE_CREDENTIALS", `{"type": "service_account"}`)
	t.Setenv("GOOGLE_IMPERSONATE_SERVICE_ACCOUNT", "target@p.iam.gserviceaccount.com")
	m := providerModelWith(externalCredentialsObject(testWorkloadAudience, "hcp@p.iam.gserviceaccount.com", "header.payload.signature"),
		"first@p.iam.gserviceaccount.com")
	d, diags := newProviderData(context.Background(), m, "test")
	if diags.HasError() {
		t.Fatal(diags)
	}
	e := d.auth.External
	if e == nil || e.Audience != testWorkloadAudience || e.ServiceAccountEmail != "hcp@p.iam.gserviceaccount.com" || e.IdentityToken != "header.payload.signature" {
		t.Errorf("external credentials %+v", e)
	}
	if d.auth.Credentials != "" || strings.Join(d.auth.ImpersonateDelegates, ",") != "first@p.iam.gserviceaccount.com" {
		t.Errorf("credentials %q and delegates %v, want none and the one configured", d.auth.Credentials, d.auth.ImpersonateDelegates)
	}
}

func TestAccProviderConfig_externalCredentials(t *testing.T) {
	t.Parallel()
	topology := `
data "raytpu_topology" "x" {
  accelerator_type = "v6e-16"
}
`
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
provider "raytpu" {
  access_token = "token"
  external_credentials {
    audience              = "` + testWorkloadAudience + `"
    service_account_email = "hcp@p.iam.gserviceaccount.com"
    identity_token        = "header.payload.signature"
  }
}
` + topology,
				ExpectError: regexp.MustCompile(`Conflicting Credentials[\s\S]*external_credentials and access_token are both set`),
			},
			{
				Config: `
provider "raytpu" {
  external_credentials {
    audience              = "` + testWorkloadAudience + `"
    service_account_email = "hcp@p.iam.gserviceaccount.com"
  }
}
` + topology,
				ExpectError: regexp.MustCompile(`Missing External Credentials Attribute[\s\S]*external_credentials.identity_token is required`),
			},
			{
				Config: `
provider "raytpu" {
  external_credentials {
    audience              = "hcp.workload.identity"
    service_account_email = "hcp@p.iam.gserviceaccount.com"
    identity_token        = "header.payload.signature"
  }
}
` + topology,
				ExpectError: regexp.MustCompile(`Invalid Credentials[\s\S]*audience "hcp.workload.identity" is not a workload identity pool\s+provider`),
			},
			{
				Config: `
provider "raytpu" {
  impersonate_service_account_delegates = ["first@p.iam.gserviceaccount.com"]
}
` + topology,
				ExpectError: regexp.MustCompile(`Delegates Without Impersonation`),
			},
			{
				// A valid block configures the provider without a network call.
				Config: `
provider "raytpu" {
  impersonate_service_account           = "target@p.iam.gserviceaccount.com"
  impersonate_service_account_delegates = ["first@p.iam.gserviceaccount.com"]
  external_credentials {
    audience              = "` + testWorkloadAudience + `"
    service_account_email = "hcp@p.iam.gserviceaccount.com"
    identity_token        = "header.payload.signature"
  }
}
` + topology,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.raytpu_topology.x", tfjsonpath.New("topology"), knownvalue.StringExact("4x4")),
				},
			},
		},
	})
}
