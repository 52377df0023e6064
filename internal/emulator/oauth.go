package emulator

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
)

// Google's OAuth 2.0 token endpoint (oauth2.googleapis.com/token), as far as the refresh token
// grant goes: the grant of the authorized_user credentials that `gcloud auth
// application-default login` writes for Application Default Credentials. A credentials file whose
// token_uri is TokenURL exchanges RefreshToken for the emulator's access token; any other refresh
// token is one Google no longer honours, revoked or expired, and gets Google's answer.
//
// Sources: RFC 6749 §6 (the refresh request: grant_type=refresh_token, refresh_token) and §5.1,
// §5.2 (the JSON answers; invalid_grant for a grant that is "invalid, expired, revoked");
// Google's own text for a revoked or expired refresh token, "Token has been expired or revoked."
// (quoted from Google's token endpoint in googleworkspace/python-samples#1644 and
// GeneralTask/task-manager#2169).

// tokenPath is where the token endpoint is served.
const tokenPath = "/token"

// TokenURL is the emulator's OAuth 2.0 token endpoint, for the token_uri of a credentials file.
func (e *Emulator) TokenURL() string { return e.endpoint + tokenPath }

// RefreshToken is the refresh token the token endpoint exchanges for Token(); it is derived from
// the token, so it stays the same as long as the token does.
func (e *Emulator) RefreshToken() string {
	sum := sha256.Sum256([]byte("refresh:" + e.token))
	return "1//" + hex.EncodeToString(sum[:16])
}

// serveToken answers a token request as Google's token endpoint does.
func (e *Emulator) serveToken(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, body map[string]any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		answer(http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": "Bad Request"})
		return
	}
	if grant := r.PostForm.Get("grant_type"); grant != "refresh_token" {
		answer(http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type", "error_description": "Invalid grant_type: " + grant})
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("refresh_token")), []byte(e.RefreshToken())) != 1 {
		answer(http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
		return
	}
	answer(http.StatusOK, map[string]any{
		"access_token": e.token, "expires_in": 3599, "token_type": "Bearer",
		"scope": r.PostForm.Get("scope"),
	})
}
