package provider

import (
	"context"
	"encoding/json"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// clusterAccess is how the provider reaches a cluster's Kubernetes API server, chosen from what GKE
// reports (accessOf). A slice keeps it in its private state, so that a refresh costs no GKE call
// for it.
type clusterAccess struct {
	Endpoint      string `json:"endpoint"`
	CACertificate string `json:"ca_certificate,omitempty"`
	// PublicCA marks GKE's DNS-based endpoint, whose certificate is publicly trusted.
	PublicCA bool `json:"public_ca,omitempty"`
}

// accessOf picks the endpoint to reach cluster's API server by: GKE's DNS-based endpoint when it
// accepts external traffic (controlPlaneEndpointsConfig.dnsEndpointConfig: "accessible from the
// public internet" and authorized by IAM, so it works from wherever Terraform runs, private
// clusters and HCP Terraform runners included), else the IP endpoint with the cluster's CA.
func accessOf(cluster *containerpb.Cluster) clusterAccess {
	dns := cluster.GetControlPlaneEndpointsConfig().GetDnsEndpointConfig()
	if dns.GetEndpoint() != "" && dns.GetAllowExternalTraffic() {
		return clusterAccess{Endpoint: dns.GetEndpoint(), PublicCA: true}
	}
	return clusterAccess{Endpoint: cluster.GetEndpoint(), CACertificate: cluster.GetMasterAuth().GetClusterCaCertificate()}
}

const privateClusterKey = "cluster_access"

// privateAccess reads the access a slice keeps in its private state; ok is false when it has none.
func privateAccess(ctx context.Context, private interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
}) (clusterAccess, bool, diag.Diagnostics) {
	data, diags := private.GetKey(ctx, privateClusterKey)
	var a clusterAccess
	if len(data) == 0 || json.Unmarshal(data, &a) != nil || a.Endpoint == "" {
		return clusterAccess{}, false, diags
	}
	return a, true, diags
}

// keepAccess writes access into a slice's private state.
func keepAccess(ctx context.Context, private interface {
	SetKey(context.Context, string, []byte) diag.Diagnostics
}, access clusterAccess) diag.Diagnostics {
	data, _ := json.Marshal(access)
	return private.SetKey(ctx, privateClusterKey, data)
}

func kubeClient(client *gke.Client, access clusterAccess) (*kube.Client, error) {
	return kube.NewClient(kube.Cluster{
		Endpoint:            access.Endpoint,
		CACertificateBase64: access.CACertificate,
		PublicCA:            access.PublicCA,
		TokenSource:         client.TokenSource(),
	})
}
