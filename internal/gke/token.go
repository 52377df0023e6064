package gke

import (
	"fmt"
	"time"
)

// AccessToken is a current OAuth2 access token of the client's credentials, the one raytpu itself
// sends to GKE and to clusters' Kubernetes API servers (what google_client_config's access_token
// is for the google provider). expiry is zero when the credentials do not say (a configured
// access_token). The error never holds key material.
func (c *Client) AccessToken() (token string, expiry time.Time, err error) {
	t, err := c.tokens.Token()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("obtaining an access token: %w", err)
	}
	if t.AccessToken == "" {
		return "", time.Time{}, fmt.Errorf("obtaining an access token: the credentials returned an empty token")
	}
	return t.AccessToken, t.Expiry, nil
}
