package emulator

import (
	"context"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubeAt is a client-go client for host, trusting caPEM, with the emulator's token.
func kubeAt(t *testing.T, host string, caPEM []byte) kubernetes.Interface {
	t.Helper()
	k, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + host, BearerToken: testEmu.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func listNodes(ctx context.Context, k kubernetes.Interface) (int, error) {
	nodes, err := k.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(nodes.Items), nil
}

// refused checks that a connection to addr is refused, as a closed port refuses it: at once, not
// left unanswered (which would end with the test's deadline).
func refused(t *testing.T, addr string) {
	t.Helper()
	var d net.Dialer
	conn, err := d.DialContext(testCtx(t), "tcp", addr)
	if err == nil {
		conn.Close()
		t.Fatalf("%s accepted a connection", addr)
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Fatalf("%s: want a connection refused, got %v", addr, err)
	}
}

// TestDNSEndpointAndPrivateClusters: every cluster reports a DNS-based endpoint, served (by SNI,
// with the emulator's public CA) only when it allows external traffic; a private cluster's
// reported endpoint refuses connections, so it is reachable by its DNS endpoint alone.
func TestDNSEndpointAndPrivateClusters(t *testing.T) {
	cluster, c, _, _ := sharedKube(t)
	ctx := testCtx(t)
	ctl := NewClient(testEmu.Endpoint(), testEmu.Token())
	publicCA, err := ctl.DNSEndpointCA(ctx)
	if err != nil || string(publicCA) != string(testEmu.DNSEndpointCAPEM()) || !strings.Contains(string(publicCA), "BEGIN CERTIFICATE") {
		t.Fatalf("the DNS endpoint CA over the control API: %v", err)
	}

	// A public cluster: IP endpoint open, DNS endpoint present but closed to user traffic.
	cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	clusterCA, _ := base64.StdEncoding.DecodeString(cl.MasterAuth.ClusterCaCertificate)
	cfg := cl.ControlPlaneEndpointsConfig
	port := strings.TrimPrefix(cl.Endpoint, "127.0.0.1:")
	if !strings.HasPrefix(cl.Endpoint, "127.0.0.1:") || cfg.DnsEndpointConfig.Endpoint != "localhost:"+port || cfg.DnsEndpointConfig.GetAllowExternalTraffic() ||
		!cfg.IpEndpointsConfig.GetEnabled() || !cfg.IpEndpointsConfig.GetEnablePublicEndpoint() || cfg.IpEndpointsConfig.PublicEndpoint != cl.Endpoint ||
		cfg.IpEndpointsConfig.PrivateEndpoint != unreachableEndpoint {
		t.Fatalf("public cluster endpoints: %s %v", cl.Endpoint, cfg)
	}
	if _, err := listNodes(ctx, kubeAt(t, cl.Endpoint, clusterCA)); err != nil {
		t.Fatalf("the public IP endpoint: %v", err)
	}
	if _, err := listNodes(ctx, kubeAt(t, cfg.DnsEndpointConfig.Endpoint, publicCA)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("the DNS endpoint of a cluster that does not allow external traffic: %v", err)
	}
	refused(t, cfg.IpEndpointsConfig.PrivateEndpoint)

	// A private cluster with DNS access.
	name := testLocation + "/clusters/private"
	_, err = c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "private", InitialNodeCount: 1, //nolint:staticcheck // deprecated in the API, still sent by clients
		PrivateClusterConfig: &containerpb.PrivateClusterConfig{EnablePrivateNodes: true, EnablePrivateEndpoint: true, MasterIpv4CidrBlock: "172.16.0.0/28"}, //nolint:staticcheck // deprecated in the API, still sent by clients
		ControlPlaneEndpointsConfig: &containerpb.ControlPlaneEndpointsConfig{
			DnsEndpointConfig: &containerpb.ControlPlaneEndpointsConfig_DNSEndpointConfig{AllowExternalTraffic: proto.Bool(true)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		mustSucceed(t, c)(c.DeleteCluster(context.Background(), &containerpb.DeleteClusterRequest{Name: name}))
	}()
	for cl.Name != "private" || cl.Status != containerpb.Cluster_RUNNING {
		time.Sleep(100 * time.Millisecond)
		if cl, err = c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	cfg = cl.ControlPlaneEndpointsConfig
	pcc := cl.PrivateClusterConfig
	if cl.Endpoint != unreachableEndpoint || cfg.IpEndpointsConfig.GetEnablePublicEndpoint() || cfg.IpEndpointsConfig.PublicEndpoint != "" ||
		cfg.IpEndpointsConfig.PrivateEndpoint != unreachableEndpoint || pcc.PrivateEndpoint != unreachableEndpoint || pcc.PublicEndpoint != "" || //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		pcc.MasterIpv4CidrBlock != "172.16.0.0/28" || !strings.HasPrefix(cfg.DnsEndpointConfig.Endpoint, "localhost:") || !cfg.DnsEndpointConfig.GetAllowExternalTraffic() {
		t.Fatalf("private cluster endpoints: %s %v %v", cl.Endpoint, cfg, pcc)
	}
	refused(t, cl.Endpoint)
	dns := cfg.DnsEndpointConfig.Endpoint
	if n, err := listNodes(ctx, kubeAt(t, dns, publicCA)); err != nil || n != 1 {
		t.Fatalf("the DNS endpoint with the public CA: %d nodes, %v", n, err)
	}
	privateCA, _ := base64.StdEncoding.DecodeString(cl.MasterAuth.ClusterCaCertificate)
	if _, err := listNodes(ctx, kubeAt(t, dns, privateCA)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("the DNS endpoint is not signed by the cluster CA: %v", err)
	}

	// Turning external traffic off closes the DNS endpoint (the kube-apiserver restarts within
	// the update).
	mustSucceed(t, c)(c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: name, Update: &containerpb.ClusterUpdate{
		DesiredControlPlaneEndpointsConfig: &containerpb.ControlPlaneEndpointsConfig{
			DnsEndpointConfig: &containerpb.ControlPlaneEndpointsConfig_DNSEndpointConfig{AllowExternalTraffic: proto.Bool(false)}}}}))
	cl, err = c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil || cl.ControlPlaneEndpointsConfig.DnsEndpointConfig.GetAllowExternalTraffic() || cl.ControlPlaneEndpointsConfig.DnsEndpointConfig.Endpoint == "" {
		t.Fatalf("after turning DNS access off: %v %v", cl.GetControlPlaneEndpointsConfig(), err)
	}
	if _, err := listNodes(ctx, kubeAt(t, cl.ControlPlaneEndpointsConfig.DnsEndpointConfig.Endpoint, publicCA)); err == nil {
		t.Fatal("the DNS endpoint still serves after allowExternalTraffic was turned off")
	}

	// Contradicting settings are refused.
	_, err = c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "contradiction", InitialNodeCount: 1, //nolint:staticcheck // deprecated in the API, still sent by clients
		PrivateClusterConfig: &containerpb.PrivateClusterConfig{EnablePrivateEndpoint: true}, //nolint:staticcheck // deprecated in the API, still sent by clients
		ControlPlaneEndpointsConfig: &containerpb.ControlPlaneEndpointsConfig{
			IpEndpointsConfig: &containerpb.ControlPlaneEndpointsConfig_IPEndpointsConfig{EnablePublicEndpoint: proto.Bool(true)}},
	}})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "cannot both be set")
}
