// Package kube is the only code that talks to a GKE cluster's own Kubernetes API server: it
// builds a client from what the GKE API reports about a cluster (endpoint and CA certificate) and
// the Google access token the provider already holds, waits for the KubeRay CRDs that the Ray
// Operator add-on installs, lists the hosts of a TPU slice in worker order, cordons and drains
// them, applies RayClusters, follows them and their Pods with watches (never by listing each
// poll), and asks the API server to validate a RayCluster with a server-side dry run.
//
// TLS is always verified against the cluster's CA, and the access token never appears in an error
// or a log line: it only travels in the Authorization header.
package kube

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/raytpu/terraform-provider-raytpu/internal/netfail"
)

// Cluster is how to reach one cluster's API server, as the GKE API describes it.
type Cluster struct {
	// Endpoint is Cluster.endpoint as GKE returns it: an IP address or host, optionally with a
	// port ("34.1.2.3", "127.0.0.1:6443"). HTTPS is implied; an explicit "https://" is accepted,
	// any other scheme is refused.
	Endpoint string
	// CACertificateBase64 is Cluster.masterAuth.clusterCaCertificate as GKE returns it: the
	// base64 encoding of one or more PEM certificates. The API server's certificate must chain to
	// it. (PEM text that is not base64-encoded is accepted too.)
	CACertificateBase64 string
	// PublicCA says the endpoint presents a publicly trusted certificate, as GKE's DNS-based
	// control plane endpoint does: it is verified against the system's roots, and
	// CACertificateBase64 must be empty.
	PublicCA bool
	// TokenSource yields the Google OAuth2 access token sent as the bearer token. Tokens are
	// cached until they expire and fetched again after the API server answers 401.
	TokenSource oauth2.TokenSource
	// UserAgent is sent with every request; empty means DefaultUserAgent.
	UserAgent string
	// onRequest, when set, sees every request before it is sent (the package's tests count them).
	onRequest func(*http.Request)
}

// DefaultUserAgent is the User-Agent of requests when Cluster.UserAgent is empty.
const DefaultUserAgent = "terraform-provider-raytpu"

// requestTimeout bounds one HTTP request; waits are bounded by their context instead.
const requestTimeout = 30 * time.Second

// Client talks to one cluster's Kubernetes API server. It is safe for concurrent use.
type Client struct {
	host string // https://host:port, for messages
	http *http.Client
	core corev1client.CoreV1Interface
	apps appsv1client.AppsV1Interface
	rbac rbacv1client.RbacV1Interface
	// coreWatch is core without requestTimeout, for watches: they stay open for minutes, ended
	// by the API server (TimeoutSeconds) or their context.
	coreWatch corev1client.CoreV1Interface
	// discovery reads the API server's discovery documents; its requests carry the caller's
	// context, which client-go's DiscoveryClient methods do not.
	discovery rest.Interface
	dynamic   dynamic.Interface
	// dynamicWatch is dynamic without requestTimeout, for watches, as coreWatch is.
	dynamicWatch dynamic.Interface
}

// NewClient checks c and returns a client for the cluster. It does not contact the cluster.
func NewClient(c Cluster) (*Client, error) {
	host, err := parseEndpoint(c.Endpoint)
	if err != nil {
		return nil, err
	}
	var caPEM []byte
	switch {
	case c.PublicCA && strings.TrimSpace(c.CACertificateBase64) != "":
		return nil, errors.New("kube: a cluster CA certificate was given for an endpoint with a publicly trusted certificate")
	case !c.PublicCA:
		if caPEM, err = decodeCA(c.CACertificateBase64); err != nil {
			return nil, err
		}
	}
	if c.TokenSource == nil {
		return nil, errors.New("kube: no token source: the cluster's API server needs the Google access token")
	}
	ua := c.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	cfg := &rest.Config{
		Host:            host,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		// The token goes in the Authorization header only; rest.Config never holds it, so no
		// dump of the config can show it.
		WrapTransport:  transport.ResettableTokenSourceWrapTransport(transport.NewCachedTokenSource(netfail.Tokens(c.TokenSource))),
		UserAgent:      ua,
		Timeout:        requestTimeout,
		QPS:            20,
		Burst:          40,
		WarningHandler: rest.NoWarnings{},
	}
	if c.onRequest != nil {
		tokens := cfg.WrapTransport
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return tokens(observedTransport{rt, c.onRequest})
		}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: building the HTTP client for %s: %w", host, err)
	}
	kc := &Client{host: host, http: hc}
	if kc.core, err = corev1client.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, fmt.Errorf("kube: building the core client for %s: %w", host, err)
	}
	if kc.apps, err = appsv1client.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, fmt.Errorf("kube: building the apps client for %s: %w", host, err)
	}
	if kc.rbac, err = rbacv1client.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, fmt.Errorf("kube: building the RBAC client for %s: %w", host, err)
	}
	// The same transport (connections, token) with no overall timeout: an http.Client's Timeout
	// also bounds reading the body, which would cut every watch after requestTimeout.
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	if kc.coreWatch, err = corev1client.NewForConfigAndClient(watchCfg, &http.Client{Transport: hc.Transport}); err != nil {
		return nil, fmt.Errorf("kube: building the watch client for %s: %w", host, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("kube: building the discovery client for %s: %w", host, err)
	}
	kc.discovery = disc.RESTClient()
	if kc.dynamic, err = dynamic.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, fmt.Errorf("kube: building the dynamic client for %s: %w", host, err)
	}
	if kc.dynamicWatch, err = dynamic.NewForConfigAndClient(watchCfg, &http.Client{Transport: hc.Transport}); err != nil {
		return nil, fmt.Errorf("kube: building the dynamic watch client for %s: %w", host, err)
	}
	return kc, nil
}

// observedTransport hands each request to observe before sending it.
type observedTransport struct {
	rt      http.RoundTripper
	observe func(*http.Request)
}

func (t observedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.observe(r)
	return t.rt.RoundTrip(r)
}

// Host is the API server's URL (https://host[:port]).
func (c *Client) Host() string { return c.host }

// Close releases the client's idle connections. The client must not be used afterwards.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// parseEndpoint turns a GKE endpoint into an https URL with no path.
func parseEndpoint(endpoint string) (string, error) {
	e := strings.TrimSpace(endpoint)
	if e == "" {
		return "", errors.New("kube: the cluster endpoint is empty (the cluster may still be provisioning)")
	}
	if scheme, after, ok := strings.Cut(e, "://"); ok {
		if !strings.EqualFold(scheme, "https") {
			return "", fmt.Errorf("kube: cluster endpoint %q: the API server is only reached over https, not %s", endpoint, scheme)
		}
		e = after
	}
	e = strings.TrimSuffix(e, "/")
	// A bare IPv6 address has colons but no brackets.
	if ip := net.ParseIP(e); ip != nil && ip.To4() == nil {
		e = "[" + e + "]"
	}
	u, err := url.Parse("https://" + e)
	if err != nil {
		return "", fmt.Errorf("kube: cluster endpoint %q is not a host or host:port: %w", endpoint, err)
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("kube: cluster endpoint %q is not a host or host:port (like 34.1.2.3 or 127.0.0.1:6443)", endpoint)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("kube: cluster endpoint %q has an invalid port %q", endpoint, p)
		}
	}
	return "https://" + u.Host, nil
}

// decodeCA decodes masterAuth.clusterCaCertificate and checks that it holds at least one
// certificate, so that a wrong value fails here rather than as a TLS error later.
func decodeCA(b64 string) ([]byte, error) {
	s := strings.TrimSpace(b64)
	if s == "" {
		return nil, errors.New("kube: the cluster CA certificate (masterAuth.clusterCaCertificate) is empty")
	}
	var pemBytes []byte
	if strings.HasPrefix(s, "-----BEGIN") {
		pemBytes = []byte(s)
	} else {
		// GKE uses standard padded base64; tolerate line breaks and missing padding.
		compact := strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, s)
		var err error
		if pemBytes, err = base64.StdEncoding.DecodeString(compact); err != nil {
			if pemBytes, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(compact, "=")); err != nil {
				return nil, fmt.Errorf("kube: the cluster CA certificate (masterAuth.clusterCaCertificate) is not base64: %w", err)
			}
		}
	}
	n := 0
	remaining := pemBytes
	for {
		var block *pem.Block
		block, remaining = pem.Decode(remaining)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, fmt.Errorf("kube: the cluster CA certificate (masterAuth.clusterCaCertificate) has an unreadable certificate: %w", err)
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("kube: the cluster CA certificate (masterAuth.clusterCaCertificate) holds no PEM certificate")
	}
	return pemBytes, nil
}

// Reach checks that the API server answers with the client's credentials (GET /version), retrying
// network trouble every poll (DefaultPollInterval when ≤ 0) until ctx ends. A refused certificate
// or token fails at once.
func (c *Client) Reach(ctx context.Context, poll time.Duration) error {
	err := waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		err := c.core.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
		return err == nil, c.explain(err)
	}, func(waited time.Duration) string {
		return fmt.Sprintf("kube: the API server at %s did not answer within %s", c.host, waited)
	})
	if err != nil {
		return &notObserved{err}
	}
	return nil
}
