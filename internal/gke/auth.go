package gke

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Scopes are the OAuth2 scopes raytpu asks for: the GKE API and, with the same token, each
// cluster's Kubernetes API.
var Scopes = []string{
	"https://www.googleapis.com/auth/cloud-platform",
	"https://www.googleapis.com/auth/userinfo.email",
}

// Auth says how to obtain Google access tokens. At most one of Credentials, AccessToken and
// External is set; with none, Application Default Credentials are used.
type Auth struct {
	// Credentials is a credentials file path or its JSON content.
	Credentials string
	// AccessToken is a ready OAuth2 access token.
	AccessToken string
	// External are workload identity federation credentials given as values.
	External *ExternalCredentials
	// ImpersonateServiceAccount, when set, exchanges the credentials above for the service
	// account's tokens.
	ImpersonateServiceAccount string
	// ImpersonateDelegates is the delegation chain of that impersonation: service accounts, each
	// allowed to impersonate the next, the last one ImpersonateServiceAccount.
	ImpersonateDelegates []string
}

// TokenSource resolves Auth into a token source. Tokens are fetched lazily, so building one
// costs no network call.
func (a Auth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	base, err := a.baseTokenSource(ctx)
	if err != nil {
		return nil, err
	}
	if a.ImpersonateServiceAccount == "" {
		return base, nil
	}
	return newImpersonation(ctx, base, IAMCredentialsURL(a.ImpersonateServiceAccount), a.ImpersonateDelegates), nil
}

func (a Auth) baseTokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	switch {
	case a.External != nil:
		if err := a.External.Check(); err != nil {
			return nil, err
		}
		return externalAccountTokenSource(ctx, a.External.config())
	case a.AccessToken != "":
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.AccessToken}), nil
	case a.Credentials != "":
		content, err := credentialsContent(a.Credentials)
		if err != nil {
			return nil, err
		}
		var header struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(content, &header); err != nil || header.Type == "" {
			return nil, fmt.Errorf("credentials are neither a readable file nor JSON with a \"type\" field")
		}
		creds, err := google.CredentialsFromJSONWithType(ctx, content, google.CredentialsType(header.Type), Scopes...)
		if err != nil {
			// The error from the library never includes the key material.
			return nil, fmt.Errorf("reading %s credentials: %w", header.Type, err)
		}
		return creds.TokenSource, nil
	default:
		creds, err := google.FindDefaultCredentials(ctx, Scopes...)
		if err != nil {
			return nil, fmt.Errorf("no credentials configured and Application Default Credentials are not available: %w", err)
		}
		return creds.TokenSource, nil
	}
}

// credentialsContent accepts JSON content as is and reads anything else as a file path.
func credentialsContent(credentials string) ([]byte, error) {
	if strings.HasPrefix(strings.TrimSpace(credentials), "{") {
		return []byte(credentials), nil
	}
	content, err := os.ReadFile(credentials)
	if err != nil {
		return nil, fmt.Errorf("reading credentials file: %w", err)
	}
	return content, nil
}
