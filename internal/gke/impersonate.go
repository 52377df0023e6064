package gke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// IAMCredentialsURL is the generateAccessToken method of a service account, as credential
// configurations carry it in service_account_impersonation_url.
func IAMCredentialsURL(serviceAccount string) string {
	return "https://iamcredentials.googleapis.com/v1/" + serviceAccountResource(serviceAccount) + ":generateAccessToken"
}

// serviceAccountResource is projects/-/serviceAccounts/EMAIL, for an email or a resource name.
func serviceAccountResource(serviceAccount string) string {
	if strings.HasPrefix(serviceAccount, "projects/") {
		return serviceAccount
	}
	return "projects/-/serviceAccounts/" + serviceAccount
}

// impersonation obtains a service account's access tokens with IAM Credentials
// generateAccessToken, authenticated by base, through the delegation chain of delegates. It is
// the exchange the google provider makes for impersonate_service_account and its delegates,
// written out so that the endpoint is the one a credential configuration names
// (service_account_impersonation_url) and the HTTP client is the context's.
type impersonation struct {
	ctx       context.Context
	base      oauth2.TokenSource
	url       string
	delegates []string
	scopes    []string
}

// newImpersonation returns a caching token source for the service account at url.
func newImpersonation(ctx context.Context, base oauth2.TokenSource, url string, delegates []string) oauth2.TokenSource {
	resources := make([]string, len(delegates))
	for i, d := range delegates {
		resources[i] = serviceAccountResource(d)
	}
	return oauth2.ReuseTokenSource(nil, &impersonation{ctx: ctx, base: base, url: url, delegates: resources, scopes: Scopes})
}

func (i *impersonation) Token() (*oauth2.Token, error) {
	body, err := json.Marshal(map[string]any{"delegates": i.delegates, "scope": i.scopes, "lifetime": "3600s"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(i.ctx, http.MethodPost, i.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("impersonating through %s: %w", i.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	// The client from the context (oauth2.HTTPClient), authenticated by the base credentials.
	resp, err := oauth2.NewClient(i.ctx, i.base).Do(req)
	if err != nil {
		return nil, fmt.Errorf("impersonating through %s: %w", i.url, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("impersonating through %s: reading the answer: %w", i.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		// IAM's error answers hold a message, never a token.
		return nil, fmt.Errorf("impersonating through %s: %s: %s", i.url, resp.Status, strings.TrimSpace(string(answer)))
	}
	var token struct {
		AccessToken string    `json:"accessToken"`
		ExpireTime  time.Time `json:"expireTime"`
	}
	if err := json.Unmarshal(answer, &token); err != nil || token.AccessToken == "" {
		return nil, fmt.Errorf("impersonating through %s: the answer holds no access token", i.url)
	}
	return &oauth2.Token{AccessToken: token.AccessToken, TokenType: "Bearer", Expiry: token.ExpireTime}, nil
}
