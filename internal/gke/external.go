package gke

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google/externalaccount"
)

// STSTokenURL is Google's Security Token Service, where external_account credentials exchange
// their subject token.
const STSTokenURL = "https://sts.googleapis.com/v1/token"

// ExternalCredentials are workload identity federation credentials handed over as values, as
// HCP Terraform Stacks hands an identity token: the token is exchanged at Google's STS for the
// workload identity pool provider named by Audience, and the federated token then impersonates
// ServiceAccountEmail.
type ExternalCredentials struct {
	// Audience is the workload identity pool provider:
	// //iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER.
	Audience string
	// ServiceAccountEmail is the service account the federated identity impersonates.
	ServiceAccountEmail string
	// IdentityToken is the OIDC token (a JWT) of the workload. A secret: never logged.
	IdentityToken string
}

// Check says what is wrong with e, naming the attribute of the provider's external_credentials
// block; nil when it can be used.
func (e ExternalCredentials) Check() error {
	var problems []string
	if !strings.HasPrefix(e.Audience, "//iam.googleapis.com/") {
		problems = append(problems, fmt.Sprintf("audience %q is not a workload identity pool provider: write it as "+
			"//iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER", e.Audience))
	}
	if !strings.Contains(e.ServiceAccountEmail, "@") {
		problems = append(problems, fmt.Sprintf("service_account_email %q is not a service account email such as "+
			"terraform@my-project.iam.gserviceaccount.com", e.ServiceAccountEmail))
	}
	if strings.TrimSpace(e.IdentityToken) == "" {
		problems = append(problems, "identity_token is empty: set it to the workload's OIDC token, such as identity_token.gcp.jwt in a Stack")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// config is the external_account credential configuration e stands for: the same document an
// external_account credentials file holds, with the subject token supplied from memory.
func (e ExternalCredentials) config() externalaccount.Config {
	return externalaccount.Config{
		Audience:                       e.Audience,
		SubjectTokenType:               "urn:ietf:params:oauth:token-type:jwt",
		TokenURL:                       STSTokenURL,
		ServiceAccountImpersonationURL: IAMCredentialsURL(e.ServiceAccountEmail),
		SubjectTokenSupplier:           identityToken(e.IdentityToken),
		Scopes:                         Scopes,
	}
}

// externalAccountTokenSource exchanges the subject token of cfg at its token_url and, when cfg
// names one, impersonates the service account at its service_account_impersonation_url. The
// context's HTTP client (oauth2.HTTPClient) makes the calls.
func externalAccountTokenSource(ctx context.Context, cfg externalaccount.Config) (oauth2.TokenSource, error) {
	ts, err := externalaccount.NewTokenSource(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("building external_account credentials for audience %s: %w", cfg.Audience, err)
	}
	return ts, nil
}

// identityToken supplies a token held in memory as the subject token.
type identityToken string

func (t identityToken) SubjectToken(context.Context, externalaccount.SupplierOptions) (string, error) {
	return string(t), nil
}

// String keeps the token out of any log or error that formats the supplier.
func (t identityToken) String() string { return "(identity token)" }

// GoString is String for %#v.
func (t identityToken) GoString() string { return t.String() }
