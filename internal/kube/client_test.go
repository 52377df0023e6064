package kube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/raytpu/terraform-provider-raytpu/internal/netfail"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// selfSignedCA returns a fresh CA certificate as PEM, unrelated to any cluster.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "not-the-cluster-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestNewClientEndpoint(t *testing.T) {
	ca := base64.StdEncoding.EncodeToString(selfSignedCA(t))
	for _, tc := range []struct {
		endpoint string
		host     string // "" means an error containing errPart
		errPart  string
	}{
		{endpoint: "34.1.2.3", host: "https://34.1.2.3"},
		{endpoint: "127.0.0.1:6443", host: "https://127.0.0.1:6443"},
		{endpoint: " https://34.1.2.3:443/ ", host: "https://34.1.2.3:443"},
		{endpoint: "gke.example.com", host: "https://gke.example.com"},
		{endpoint: "2001:db8::1", host: "https://[2001:db8::1]"},
		{endpoint: "[::1]:6443", host: "https://[::1]:6443"},
		{endpoint: "", errPart: "endpoint is empty"},
		{endpoint: "http://34.1.2.3", errPart: "only reached over https"},
		{endpoint: "34.1.2.3/api", errPart: "not a host or host:port"},
		{endpoint: "user@34.1.2.3", errPart: "not a host or host:port"},
		{endpoint: "34.1.2.3:99999", errPart: "invalid port"},
		{endpoint: "34.1.2.3:0", errPart: "invalid port"},
	} {
		c, err := NewClient(Cluster{Endpoint: tc.endpoint, CACertificateBase64: ca, TokenSource: staticToken("t")})
		if tc.host == "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("NewClient(endpoint %q) error = %v, want one containing %q", tc.endpoint, err, tc.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewClient(endpoint %q): %v", tc.endpoint, err)
			continue
		}
		if c.Host() != tc.host {
			t.Errorf("NewClient(endpoint %q).Host() = %q, want %q", tc.endpoint, c.Host(), tc.host)
		}
		c.Close()
	}
}

func TestNewClientCA(t *testing.T) {
	caPEM := selfSignedCA(t)
	b64 := base64.StdEncoding.EncodeToString(caPEM)
	for _, tc := range []struct {
		name, ca string
		errPart  string // "" means accepted
	}{
		{name: "as GKE returns it", ca: b64},
		{name: "with line breaks", ca: b64[:40] + "\n" + b64[40:]},
		{name: "unpadded", ca: strings.TrimRight(b64, "=")},
		{name: "plain PEM", ca: string(caPEM)},
		{name: "empty", ca: "", errPart: "is empty"},
		{name: "not base64", ca: "not base64!", errPart: "is not base64"},
		{name: "not PEM", ca: base64.StdEncoding.EncodeToString([]byte("hello")), errPart: "holds no PEM certificate"},
		{name: "a key, not a certificate", ca: base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}})), errPart: "holds no PEM certificate"},
		{name: "garbled certificate", ca: base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}})), errPart: "unreadable certificate"},
	} {
		c, err := NewClient(Cluster{Endpoint: "34.1.2.3", CACertificateBase64: tc.ca, TokenSource: staticToken("t")})
		switch {
		case tc.errPart == "" && err != nil:
			t.Errorf("%s: NewClient: %v", tc.name, err)
		case tc.errPart != "" && (err == nil || !strings.Contains(err.Error(), tc.errPart)):
			t.Errorf("%s: NewClient error = %v, want one containing %q", tc.name, err, tc.errPart)
		case tc.errPart != "" && !strings.Contains(err.Error(), "masterAuth.clusterCaCertificate"):
			t.Errorf("%s: NewClient error %q does not name masterAuth.clusterCaCertificate", tc.name, err)
		}
		if c != nil {
			c.Close()
		}
	}
}

func TestNewClientNeedsTokenSource(t *testing.T) {
	_, err := NewClient(Cluster{Endpoint: "34.1.2.3", CACertificateBase64: base64.StdEncoding.EncodeToString(selfSignedCA(t))})
	if err == nil || !strings.Contains(err.Error(), "token source") {
		t.Fatalf("NewClient without a token source: error = %v", err)
	}
}

// A client that trusts another CA than the cluster's refuses the API server, and a wait ends at
// once instead of retrying until its deadline.
func TestWrongCA(t *testing.T) {
	var requests atomic.Int32
	cl := clusterFor(env.cluster, staticToken(env.emu.Token()))
	cl.CACertificateBase64 = base64.StdEncoding.EncodeToString(selfSignedCA(t))
	cl.onRequest = func(*http.Request) { requests.Add(1) }
	c := testClient(t, cl)

	_, err := c.SliceHosts(testwait.Context(t), poolSlice)
	if err == nil {
		t.Fatal("SliceHosts with the wrong CA succeeded")
	}
	if !netfail.TLSVerification(err) || !strings.Contains(err.Error(), "does not trust") || !strings.Contains(err.Error(), "masterAuth.clusterCaCertificate") {
		t.Errorf("SliceHosts with the wrong CA: error %q should say the cluster CA does not trust the certificate", err)
	}

	requests.Store(0)
	_, err = c.WaitForKubeRay(testwait.Context(t), testPoll)
	if err == nil || !netfail.TLSVerification(err) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitForKubeRay with the wrong CA: error = %v, want a TLS verification error", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("WaitForKubeRay with the wrong CA made %d requests; a certificate error must end the wait", n)
	}
}

// A token the API server does not accept gives 401, said plainly, never echoing the token, and
// ends a wait at once.
func TestWrongToken(t *testing.T) {
	const bad = "ya29.not-the-right-token"
	var requests atomic.Int32
	cl := clusterFor(env.cluster, staticToken(bad))
	cl.onRequest = func(*http.Request) { requests.Add(1) }
	c := testClient(t, cl)

	_, err := c.KubeRayStatus(testwait.Context(t))
	if err == nil || !apierrors.IsUnauthorized(err) || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Fatalf("KubeRayStatus with a wrong token: error = %v, want 401 Unauthorized", err)
	}
	if strings.Contains(err.Error(), bad) {
		t.Errorf("the error shows the token: %v", err)
	}

	requests.Store(0)
	_, err = c.WaitForSliceHosts(testwait.Context(t), poolSlice, 4, testPoll)
	if err == nil || !apierrors.IsUnauthorized(err) {
		t.Errorf("WaitForSliceHosts with a wrong token: error = %v, want 401", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("WaitForSliceHosts with a wrong token made %d requests; a 401 must end the wait", n)
	}
}

// countingSource counts Token calls and hands out tokens that expire far in the future.
type countingSource struct {
	calls atomic.Int32
	token string
	err   error
}

func (s *countingSource) Token() (*oauth2.Token, error) {
	s.calls.Add(1)
	if s.err != nil {
		return nil, s.err
	}
	return &oauth2.Token{AccessToken: s.token, Expiry: time.Now().Add(time.Hour)}, nil
}

// The token is fetched once and reused while it is valid.
func TestTokenCached(t *testing.T) {
	src := &countingSource{token: env.emu.Token()}
	c := testClient(t, clusterFor(env.cluster, src))
	for range 3 {
		if _, err := c.SliceHosts(testwait.Context(t), poolSlice); err != nil {
			t.Fatal(err)
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("the token source was called %d times for 3 requests, want 1", n)
	}
}

// A token source that fails (no credentials) fails the call with its reason and ends a wait.
func TestTokenSourceError(t *testing.T) {
	src := &countingSource{err: errors.New("could not find default credentials")}
	c := testClient(t, clusterFor(env.cluster, src))
	_, err := c.WaitForSliceHosts(testwait.Context(t), poolSlice, 4, testPoll)
	if err == nil || !strings.Contains(err.Error(), "getting the Google access token: could not find default credentials") {
		t.Fatalf("WaitForSliceHosts with a failing token source: error = %v", err)
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("WaitForSliceHosts with a failing token source asked it %d times; it must not retry", n)
	}
}
