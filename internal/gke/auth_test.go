package gke

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

const (
	testAudience       = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/hcp/providers/tfc"
	testServiceAccount = "terraform@p.iam.gserviceaccount.com"
	testIdentityToken  = "eyJhbGciOiJSUzI1NiJ9.workload.signature"
)

// loopbackGoogle is a TLS Security Token Service and IAM Credentials API on a loopback address.
// It exchanges testIdentityToken for "federated-token" and answers generateAccessToken, for a
// request authenticated by any bearer token, with "sa-token:" and that bearer token.
type loopbackGoogle struct {
	*httptest.Server
	mu       sync.Mutex
	exchange map[string]string // the last STS request's form
	generate []string          // the last generateAccessToken's delegates
	calls    []string
}

func newLoopbackGoogle(t *testing.T) *loopbackGoogle {
	g := &loopbackGoogle{}
	g.Server = httptest.NewTLSServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

func (g *loopbackGoogle) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/v1/token":
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g.exchange = map[string]string{}
		for k := range r.PostForm {
			g.exchange[k] = r.PostForm.Get(k)
		}
		if g.exchange["subject_token"] != testIdentityToken || g.exchange["audience"] != testAudience {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error": "invalid_grant", "error_description": "the subject token or audience is not accepted"}`)
			return
		}
		fmt.Fprint(w, `{"access_token": "federated-token", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer", "expires_in": 3600}`)
	case strings.HasSuffix(r.URL.Path, ":generateAccessToken"):
		var body struct {
			Delegates []string `json:"delegates"`
			Scope     []string `json:"scope"`
		}
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !ok || len(body.Scope) == 0 {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error": {"code": 401, "message": "unauthenticated or no scope"}}`)
			return
		}
		g.generate = body.Delegates
		fmt.Fprintf(w, `{"accessToken": "sa-token:%s", "expireTime": %q}`, bearer, time.Now().Add(time.Hour).Format(time.RFC3339))
	default:
		http.NotFound(w, r)
	}
}

// trusting is a context whose HTTP client trusts the loopback server's CA, and only it: TLS is
// verified as it is against Google.
func (g *loopbackGoogle) trusting() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, g.Client())
}

func (g *loopbackGoogle) impersonationURL(serviceAccount string) string {
	return g.URL + "/v1/projects/-/serviceAccounts/" + serviceAccount + ":generateAccessToken"
}

// externalAccountFile is an external_account credential configuration such as HCP Terraform
// writes for dynamic provider credentials, its subject token in tokenFile.
func (g *loopbackGoogle) externalAccountFile(tokenFile string) string {
	config, _ := json.Marshal(map[string]any{
		"type":                              "external_account",
		"audience":                          testAudience,
		"subject_token_type":                "urn:ietf:params:oauth:token-type:jwt",
		"token_url":                         g.URL + "/v1/token",
		"service_account_impersonation_url": g.impersonationURL(testServiceAccount),
		"credential_source":                 map[string]any{"file": tokenFile},
	})
	return string(config)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func token(t *testing.T, ctx context.Context, a Auth) string {
	t.Helper()
	ts, err := a.TokenSource(ctx)
	if err != nil {
		t.Fatalf("TokenSource: %v", err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	return tok.AccessToken
}

// TestAuth_externalAccount exchanges an external_account credential configuration, given as a
// file and as JSON content, at the STS and IAM endpoints it names.
func TestAuth_externalAccount(t *testing.T) {
	g := newLoopbackGoogle(t)
	config := g.externalAccountFile(writeFile(t, "identity-token", testIdentityToken))
	for name, credentials := range map[string]string{
		"file": writeFile(t, "gcp-credentials.json", config),
		"json": config,
	} {
		t.Run(name, func(t *testing.T) {
			if got := token(t, g.trusting(), Auth{Credentials: credentials}); got != "sa-token:federated-token" {
				t.Errorf("access token %q, want the service account's, obtained with the federated token", got)
			}
			if g.exchange["subject_token_type"] != "urn:ietf:params:oauth:token-type:jwt" ||
				g.exchange["grant_type"] != "urn:ietf:params:oauth:grant-type:token-exchange" {
				t.Errorf("STS request %v is no token exchange of a JWT", g.exchange)
			}
		})
	}
}

// TestAuth_externalCredentials exchanges an identity token given as a value: the configuration it
// stands for names Google's STS and IAM Credentials, and, pointed at the loopback ones through
// those same fields, obtains the service account's token.
func TestAuth_externalCredentials(t *testing.T) {
	g := newLoopbackGoogle(t)
	e := ExternalCredentials{Audience: testAudience, ServiceAccountEmail: testServiceAccount, IdentityToken: testIdentityToken}
	cfg := e.config()
	if cfg.TokenURL != "https://sts.googleapis.com/v1/token" ||
		cfg.ServiceAccountImpersonationURL != "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/"+testServiceAccount+":generateAccessToken" {
		t.Errorf("external credentials exchange at %s and %s, want Google's STS and IAM Credentials", cfg.TokenURL, cfg.ServiceAccountImpersonationURL)
	}
	cfg.TokenURL, cfg.ServiceAccountImpersonationURL = g.URL+"/v1/token", g.impersonationURL(testServiceAccount)
	ts, err := externalAccountTokenSource(g.trusting(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "sa-token:federated-token" || g.exchange["audience"] != testAudience {
		t.Errorf("access token %q after an exchange of %v", tok.AccessToken, g.exchange)
	}
	// The same exchange with an identity token the pool does not accept fails, and says so
	// without repeating the token.
	cfg.SubjectTokenSupplier = identityToken("another.jwt.token")
	ts, _ = externalAccountTokenSource(g.trusting(), cfg)
	if _, err := ts.Token(); err == nil || !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), "another.jwt.token") {
		t.Errorf("exchange of a refused token: %v, want invalid_grant without the token", err)
	}
}

// TestAuth_verifiesTLS refuses the loopback STS to a client that does not trust its CA.
func TestAuth_verifiesTLS(t *testing.T) {
	g := newLoopbackGoogle(t)
	config := g.externalAccountFile(writeFile(t, "identity-token", testIdentityToken))
	ts, err := Auth{Credentials: config}.TokenSource(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Token(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("token from an untrusted server: %v, want a certificate error", err)
	}
}

// TestAuth_impersonationDelegates impersonates through a delegation chain, authenticated by the
// base credentials.
func TestAuth_impersonationDelegates(t *testing.T) {
	g := newLoopbackGoogle(t)
	base := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "base-token"})
	ts := newImpersonation(g.trusting(), base, g.impersonationURL("target@p.iam.gserviceaccount.com"),
		[]string{"first@p.iam.gserviceaccount.com", "projects/-/serviceAccounts/second@p.iam.gserviceaccount.com"})
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"projects/-/serviceAccounts/first@p.iam.gserviceaccount.com", "projects/-/serviceAccounts/second@p.iam.gserviceaccount.com"}
	if tok.AccessToken != "sa-token:base-token" || fmt.Sprint(g.generate) != fmt.Sprint(want) {
		t.Errorf("token %q with delegates %v, want sa-token:base-token with %v", tok.AccessToken, g.generate, want)
	}
	if got := IAMCredentialsURL("a@p.iam.gserviceaccount.com"); got != "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@p.iam.gserviceaccount.com:generateAccessToken" {
		t.Errorf("IAMCredentialsURL = %s", got)
	}
}

// TestExternalCredentials_check names each attribute that is wrong, and never the token.
func TestExternalCredentials_check(t *testing.T) {
	if err := (ExternalCredentials{Audience: testAudience, ServiceAccountEmail: testServiceAccount, IdentityToken: "x"}).Check(); err != nil {
		t.Errorf("valid external credentials: %v", err)
	}
	err := ExternalCredentials{Audience: "hcp.workload.identity", ServiceAccountEmail: "terraform", IdentityToken: " "}.Check()
	for _, want := range []string{`audience "hcp.workload.identity"`, `service_account_email "terraform"`, "identity_token is empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check() = %v, want it to say %s", err, want)
		}
	}
	if s := fmt.Sprintf("%v %#v", identityToken("secret.jwt"), identityToken("secret.jwt")); strings.Contains(s, "secret") {
		t.Errorf("an identity token formats as %q", s)
	}
}
