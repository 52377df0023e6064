package emulator

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// authorizedUser is an authorized_user credentials file, as gcloud writes it for Application
// Default Credentials, pointed at the emulator's token endpoint.
func authorizedUser(refreshToken string) []byte {
	return fmt.Appendf(nil, `{"type": "authorized_user", "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
  "client_secret": "not-a-secret", "refresh_token": %q, "token_uri": %q}`, refreshToken, testEmu.TokenURL())
}

func TestTokenEndpointRefreshesAndRefusesRevokedTokens(t *testing.T) {
	creds, err := google.CredentialsFromJSONWithType(context.Background(), authorizedUser(testEmu.RefreshToken()), google.AuthorizedUser, "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil || tok.AccessToken != testEmu.Token() {
		t.Fatalf("token for the emulator's refresh token = %v, %v; want the emulator's token", tok, err)
	}
	// The token works on the GKE API.
	if _, err := restClient(t, tok.AccessToken).ListClusters(testCtx(t), &containerpb.ListClustersRequest{Parent: testLocation}); err != nil {
		t.Fatalf("ListClusters with the refreshed token: %v", err)
	}

	creds, err = google.CredentialsFromJSONWithType(context.Background(), authorizedUser("1//revoked"), google.AuthorizedUser, "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		t.Fatal(err)
	}
	_, err = creds.TokenSource.Token()
	var rerr *oauth2.RetrieveError
	if !errors.As(err, &rerr) || rerr.Response.StatusCode != 400 || rerr.ErrorCode != "invalid_grant" ||
		rerr.ErrorDescription != "Token has been expired or revoked." {
		t.Fatalf("token for a revoked refresh token = %v, want Google's 400 invalid_grant", err)
	}
}
