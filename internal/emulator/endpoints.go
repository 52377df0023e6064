package emulator

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
)

// How a cluster's control plane is reached, as GKE models it (containerpb
// ControlPlaneEndpointsConfig, PrivateClusterConfig):
//
//   - IP endpoints (ipEndpointsConfig): the public endpoint, Cluster.endpoint, is the
//     kube-apiserver at 127.0.0.1:PORT, with the cluster's own CA (masterAuth.clusterCaCertificate).
//     The private endpoint ("the internal IP address of this cluster's control plane") is an
//     address nobody reaches from the machine the emulator runs on: unreachableEndpoint, where a
//     connection is refused at once. A private cluster (privateClusterConfig.enablePrivateEndpoint,
//     or ipEndpointsConfig.enablePublicEndpoint false) reports it as its endpoint and has no public
//     endpoint; with ipEndpointsConfig.enabled false the cluster has no IP endpoint at all.
//   - The DNS-based endpoint (dnsEndpointConfig): GKE gives every cluster one ("Always present",
//     containerpb DNSEndpointConfig.endpoint; "available today on every cluster", Google Cloud
//     blog "A new flexible DNS-based approach for accessing the GKE control plane", 2024-11-11),
//     "accessible from any network that can reach Google Cloud APIs", served by a Google front end
//     with a publicly trusted certificate, authorized by IAM (container.clusters.connect) and
//     open to user traffic only with allowExternalTraffic. The emulator cannot serve DNS names:
//     its DNS endpoint is "localhost:PORT", the same kube-apiserver reached by the name localhost,
//     which presents (by SNI, kube-apiserver --tls-sni-cert-key) a certificate of an emulator-wide
//     "public" CA (DNSEndpointCAPEM; trust it as a public root, e.g. with SSL_CERT_FILE), and
//     takes the emulator's token (the Google access token GKE's front end would check). Without
//     allowExternalTraffic the kube-apiserver has no certificate for localhost, so the DNS endpoint
//     refuses TLS. Turning allowExternalTraffic on or off restarts the kube-apiserver during the
//     update, as the new certificate needs.

// unreachableEndpoint is the emulator's private endpoint: loopback port 1, where nothing listens
// (binding it needs privileges nobody uses it for), so a connection is refused at once.
const unreachableEndpoint = "127.0.0.1:1"

// dnsEndpointHost is the host name of every DNS-based endpoint.
const dnsEndpointHost = "localhost"

// dnsEndpointPKI is the emulator-wide CA of the DNS-based endpoints and its certificate for
// localhost, kept in <state>/dns-endpoint/ (so a stateful emulator keeps trusting clients).
type dnsEndpointPKI struct {
	caPEM    []byte
	caFile   string
	certFile string
	keyFile  string
}

func loadOrNewDNSEndpointPKI(dir string) (*dnsEndpointPKI, error) {
	p := &dnsEndpointPKI{
		caFile:   filepath.Join(dir, "ca.crt"),
		certFile: filepath.Join(dir, "localhost.crt"),
		keyFile:  filepath.Join(dir, "localhost.key"),
	}
	if b, err := os.ReadFile(p.caFile); err == nil {
		if _, err1 := os.Stat(p.certFile); err1 == nil {
			if _, err2 := os.Stat(p.keyFile); err2 == nil {
				p.caPEM = b
				return p, nil
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	now := time.Now()
	caKey, caCert, caDER, err := kubeproc.NewSelfSignedCA("raytpu emulator public CA (DNS-based endpoints)", now)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: kubeproc.RandomSerial(),
		Subject:      pkix.Name{CommonName: dnsEndpointHost},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{dnsEndpointHost},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyPEM, err := kubeproc.ECKeyPEM(key)
	if err != nil {
		return nil, err
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	for path, data := range map[string][]byte{
		p.certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		p.keyFile:  keyPEM,
		p.caFile:   p.caPEM, // last: its presence says the set is complete
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// DNSEndpointCAPEM is the PEM of the CA that signs the certificates of the clusters' DNS-based
// endpoints (dnsEndpointConfig.endpoint, localhost:PORT): the emulator's stand-in for the public
// roots that GKE's DNS endpoint certificates chain to.
func (e *Emulator) DNSEndpointCAPEM() []byte { return append([]byte(nil), e.dnsPKI.caPEM...) }

// DNSEndpointCAFile is the file holding DNSEndpointCAPEM, for SSL_CERT_FILE.
func (e *Emulator) DNSEndpointCAFile() string { return e.dnsPKI.caFile }

// DNSEndpointCA implements Controller.
func (e *Emulator) DNSEndpointCA(ctx context.Context) ([]byte, error) {
	return e.DNSEndpointCAPEM(), nil
}

// dnsAccess says whether the cluster takes user traffic over its DNS-based endpoint.
func dnsAccess(pb *containerpb.Cluster) bool {
	return pb.GetControlPlaneEndpointsConfig().GetDnsEndpointConfig().GetAllowExternalTraffic()
}

// sniFlag is the kube-apiserver flag that serves the DNS endpoint's certificate to clients that
// ask for localhost.
func (e *Emulator) sniFlag() string {
	return "--tls-sni-cert-key=" + e.dnsPKI.certFile + "," + e.dnsPKI.keyFile + ":" + dnsEndpointHost
}

// validateEndpoints refuses what the API docs call invalid: "It is invalid to specify both
// PrivateClusterConfig.enablePrivateEndpoint and [IPEndpointsConfig.enable_public_endpoint] at the
// same time" (containerpb IPEndpointsConfig.enable_public_endpoint), here when they contradict.
func validateEndpoints(pb *containerpb.Cluster) *apierr.Error {
	ip := pb.GetControlPlaneEndpointsConfig().GetIpEndpointsConfig()
	if pb.GetPrivateClusterConfig().GetEnablePrivateEndpoint() && ip.GetEnablePublicEndpoint() { //nolint:staticcheck // deprecated in the API, still sent by clients
		return apierr.Invalid("Cluster.private_cluster_config.enable_private_endpoint and " +
			"Cluster.control_plane_endpoints_config.ip_endpoints_config.enable_public_endpoint cannot both be set.")
	}
	if ip != nil && ip.Enabled != nil && !*ip.Enabled && !dnsAccess(pb) {
		return apierr.Invalid("Cluster.control_plane_endpoints_config: disabling the IP endpoints requires the DNS endpoint to " +
			"allow external traffic, or the control plane is unreachable.")
	}
	return nil
}

// refreshEndpoints sets the cluster's endpoint fields from its settings and its
// kube-apiserver's port (nothing before the kube-apiserver has started).
func refreshEndpoints(pb *containerpb.Cluster, port int) {
	if pb.ControlPlaneEndpointsConfig == nil {
		pb.ControlPlaneEndpointsConfig = &containerpb.ControlPlaneEndpointsConfig{}
	}
	cfg := pb.ControlPlaneEndpointsConfig
	if cfg.DnsEndpointConfig == nil {
		cfg.DnsEndpointConfig = &containerpb.ControlPlaneEndpointsConfig_DNSEndpointConfig{}
	}
	dns := cfg.DnsEndpointConfig
	if dns.AllowExternalTraffic == nil {
		dns.AllowExternalTraffic = proto.Bool(false)
	}
	if cfg.IpEndpointsConfig == nil {
		cfg.IpEndpointsConfig = &containerpb.ControlPlaneEndpointsConfig_IPEndpointsConfig{}
	}
	ip := cfg.IpEndpointsConfig
	if ip.Enabled == nil {
		ip.Enabled = proto.Bool(true)
	}
	private := pb.GetPrivateClusterConfig().GetEnablePrivateEndpoint() || (ip.EnablePublicEndpoint != nil && !*ip.EnablePublicEndpoint) //nolint:staticcheck // deprecated in the API, still sent by clients
	ip.EnablePublicEndpoint = proto.Bool(!private)
	if ip.GlobalAccess == nil {
		ip.GlobalAccess = proto.Bool(pb.GetPrivateClusterConfig().GetMasterGlobalAccessConfig().GetEnabled()) //nolint:staticcheck // deprecated in the API, still sent by clients
	}
	if port == 0 {
		return
	}
	public := "127.0.0.1:" + strconv.Itoa(port)
	dns.Endpoint = dnsEndpointHost + ":" + strconv.Itoa(port)
	switch {
	case !*ip.Enabled:
		ip.PublicEndpoint, ip.PrivateEndpoint, pb.Endpoint = "", "", ""
	case private:
		ip.PublicEndpoint, ip.PrivateEndpoint, pb.Endpoint = "", unreachableEndpoint, unreachableEndpoint
	default:
		ip.PublicEndpoint, ip.PrivateEndpoint, pb.Endpoint = public, unreachableEndpoint, public
	}
	if pc := pb.PrivateClusterConfig; pc != nil {
		pc.EnablePrivateEndpoint = private      //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		pc.PrivateEndpoint = ip.PrivateEndpoint //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		pc.PublicEndpoint = ip.PublicEndpoint   //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
}

// applyEndpointsUpdate applies desiredControlPlaneEndpointsConfig (the settings it gives),
// desiredPrivateClusterConfig and desiredEnablePrivateEndpoint.
func applyEndpointsUpdate(pb *containerpb.Cluster, u *containerpb.ClusterUpdate) {
	if v := u.DesiredPrivateClusterConfig; v != nil { //nolint:staticcheck // deprecated in the API, still sent by clients
		pb.PrivateClusterConfig = cloneMsg(v)
	}
	d := u.DesiredControlPlaneEndpointsConfig
	if d == nil && u.DesiredEnablePrivateEndpoint == nil { //nolint:staticcheck // deprecated in the API, still sent by clients
		return
	}
	refreshEndpoints(pb, 0) // makes sure the messages exist
	cfg := pb.ControlPlaneEndpointsConfig
	if v := u.DesiredEnablePrivateEndpoint; v != nil { //nolint:staticcheck // deprecated in the API, still sent by clients
		cfg.IpEndpointsConfig.EnablePublicEndpoint = proto.Bool(!*v)
		if pb.PrivateClusterConfig != nil {
			pb.PrivateClusterConfig.EnablePrivateEndpoint = *v //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		}
	}
	if dns := d.GetDnsEndpointConfig(); dns != nil {
		if dns.AllowExternalTraffic != nil {
			cfg.DnsEndpointConfig.AllowExternalTraffic = proto.Bool(*dns.AllowExternalTraffic)
		}
		if dns.EnableK8STokensViaDns != nil {
			cfg.DnsEndpointConfig.EnableK8STokensViaDns = proto.Bool(*dns.EnableK8STokensViaDns)
		}
		if dns.EnableK8SCertsViaDns != nil {
			cfg.DnsEndpointConfig.EnableK8SCertsViaDns = proto.Bool(*dns.EnableK8SCertsViaDns)
		}
	}
	if ip := d.GetIpEndpointsConfig(); ip != nil {
		t := cfg.IpEndpointsConfig
		if ip.Enabled != nil {
			t.Enabled = proto.Bool(*ip.Enabled)
		}
		if ip.EnablePublicEndpoint != nil {
			t.EnablePublicEndpoint = proto.Bool(*ip.EnablePublicEndpoint)
			if pb.PrivateClusterConfig != nil {
				pb.PrivateClusterConfig.EnablePrivateEndpoint = !*ip.EnablePublicEndpoint //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
			}
		}
		if ip.GlobalAccess != nil {
			t.GlobalAccess = proto.Bool(*ip.GlobalAccess)
		}
		if ip.AuthorizedNetworksConfig != nil {
			t.AuthorizedNetworksConfig = cloneMsg(ip.AuthorizedNetworksConfig)
		}
	}
}

// setDNSAccess restarts the cluster's kube-apiserver when the DNS endpoint's user traffic is
// turned on or off, so that it serves (or stops serving) the DNS endpoint's certificate.
func (e *Emulator) setDNSAccess(ctx context.Context, c *cluster, allow bool) *apierr.Error {
	if running, dns := c.k8s.serving(); running && dns == allow {
		return nil
	}
	c.stopAPIServer()
	if err := e.startClusterAPIWith(ctx, c, allow); err != nil {
		return apierr.New(codes.Internal, "Restarting the control plane for the DNS endpoint change: %v", err)
	}
	return nil
}
