package provider

import (
	"context"
	"encoding/json"
	"fmt"

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

// clusterKube returns a client for the API server of the cluster clusterID (a cluster id
// attribute's value) and the cluster as GKE reports it. gone is true when the cluster does not
// exist; otherwise a nil client comes with an error in diags.
func clusterKube(ctx context.Context, client *gke.Client, clusterID, action string, diags *diag.Diagnostics) (k *kube.Client, cluster *containerpb.Cluster, gone bool) {
	id, err := gke.ParseClusterID(clusterID)
	if err != nil {
		diags.AddAttributeError(pathClusterID, "Invalid Cluster ID", err.Error()+".")
		return nil, nil, false
	}
	cluster, err = client.GetCluster(ctx, id)
	if gke.IsNotFound(err) {
		return nil, nil, true
	}
	if err != nil {
		diags.AddError("Error Reading Cluster", fmt.Sprintf("%s: reading cluster %s: %s", action, id, gke.WithAdvice(err)))
		return nil, nil, false
	}
	if k, err = kubeClient(client, accessOf(cluster)); err != nil {
		diags.AddError("Kubernetes Client Error", fmt.Sprintf("%s: %s", action, err))
		return nil, nil, false
	}
	return k, cluster, false
}
