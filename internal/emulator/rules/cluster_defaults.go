package rules

import (
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"
)

// FillClusterDefaults fills what GKE reports on a new cluster beyond the request, so that a
// client that reads the cluster back (terraform-provider-google's resourceContainerClusterRead
// sets every field it reads) finds what GKE would have said. The shape follows a recorded GKE
// response, GoogleCloudPlatform/k8s-config-connector@239fb579:pkg/test/resourcefixture/testdata/
// basic/container/v1beta1/containercluster/_http.log (GET .../clusters/cluster-sample-...):
// networkConfig.network and .subnetwork as resource paths, legacyAbac, networkPolicy,
// maintenancePolicy, masterAuthorizedNetworksConfig, binaryAuthorization, autopilot as empty
// objects, databaseEncryption DECRYPTED, shieldedNodes enabled, ipAllocationPolicy with
// useIpAliases and stackType IPV4, loggingConfig (SYSTEM_COMPONENTS, WORKLOADS),
// monitoringConfig (SYSTEM_COMPONENTS, managed Prometheus), securityPostureConfig BASIC,
// enterpriseConfig STANDARD, the add-ons GKE turns on (Compute Engine persistent disk CSI driver)
// and off (dashboard, network policy), and nodeConfig, the default pool's configuration.
func FillClusterDefaults(pb *containerpb.Cluster, project string, pools []*containerpb.NodePool) {
	region := ZoneRegion(pb.Location)
	if pb.NetworkConfig == nil {
		pb.NetworkConfig = &containerpb.NetworkConfig{}
	}
	// Cluster.network and .subnetwork read back as the names of the network and subnetwork,
	// whatever form was sent, and networkConfig holds their paths: "On output this shows the
	// network ID instead of the name" (containerpb Cluster.network); recorded GKE answers in
	// k8s-config-connector@cdb85ecf (containercluster-dataplanev2/_http.log: sent
	// projects/P/global/networks/N, read "network": "N"); terraform-provider-google reads the
	// paths from networkConfig and compares either form with CompareSelfLinkOrResourceName.
	nc := pb.NetworkConfig
	if nc.Network == "" {
		nc.Network = resourcePath(pb.Network, "projects/"+project+"/global/networks/")
	}
	if nc.Subnetwork == "" {
		nc.Subnetwork = resourcePath(pb.Subnetwork, "projects/"+project+"/regions/"+region+"/subnetworks/")
	}
	pb.Network, pb.Subnetwork = lastSegment(nc.Network), lastSegment(nc.Subnetwork)
	if nc.DatapathProvider == containerpb.DatapathProvider_DATAPATH_PROVIDER_UNSPECIFIED {
		nc.DatapathProvider = containerpb.DatapathProvider_LEGACY_DATAPATH
	}
	if nc.DefaultSnatStatus == nil {
		nc.DefaultSnatStatus = &containerpb.DefaultSnatStatus{}
	}
	if pb.LegacyAbac == nil {
		pb.LegacyAbac = &containerpb.LegacyAbac{}
	}
	if pb.NetworkPolicy == nil {
		pb.NetworkPolicy = &containerpb.NetworkPolicy{}
	}
	if pb.MaintenancePolicy == nil {
		pb.MaintenancePolicy = &containerpb.MaintenancePolicy{Window: &containerpb.MaintenanceWindow{}}
	}
	if pb.MasterAuthorizedNetworksConfig == nil { //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		pb.MasterAuthorizedNetworksConfig = &containerpb.MasterAuthorizedNetworksConfig{} //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
	if pb.BinaryAuthorization == nil {
		pb.BinaryAuthorization = &containerpb.BinaryAuthorization{}
	}
	if pb.Autopilot == nil {
		pb.Autopilot = &containerpb.Autopilot{}
	}
	if pb.DatabaseEncryption == nil || pb.DatabaseEncryption.State == containerpb.DatabaseEncryption_UNKNOWN {
		if pb.DatabaseEncryption == nil {
			pb.DatabaseEncryption = &containerpb.DatabaseEncryption{}
		}
		pb.DatabaseEncryption.State = containerpb.DatabaseEncryption_DECRYPTED
	}
	if pb.ShieldedNodes == nil {
		pb.ShieldedNodes = &containerpb.ShieldedNodes{Enabled: true}
	}
	if pb.IpAllocationPolicy == nil {
		pb.IpAllocationPolicy = &containerpb.IPAllocationPolicy{UseIpAliases: true}
	}
	if ip := pb.IpAllocationPolicy; ip.UseIpAliases {
		if ip.StackType == containerpb.StackType_STACK_TYPE_UNSPECIFIED {
			ip.StackType = containerpb.StackType_IPV4
		}
		if ip.ClusterIpv4CidrBlock == "" {
			ip.ClusterIpv4CidrBlock = pb.ClusterIpv4Cidr
		}
		if ip.ServicesIpv4CidrBlock == "" {
			ip.ServicesIpv4CidrBlock = pb.ServicesIpv4Cidr
		}
		ip.ClusterIpv4Cidr = ip.ClusterIpv4CidrBlock   //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		ip.ServicesIpv4Cidr = ip.ServicesIpv4CidrBlock //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		if pb.DefaultMaxPodsConstraint == nil {
			pb.DefaultMaxPodsConstraint = &containerpb.MaxPodsConstraint{MaxPodsPerNode: 110}
		}
		if ip.ClusterSecondaryRangeName == "" {
			ip.ClusterSecondaryRangeName = clusterPodRangeName(pb)
		}
		for _, np := range pools {
			SetPodRange(np, pb)
		}
	}
	if pb.LoggingConfig == nil {
		pb.LoggingConfig = &containerpb.LoggingConfig{ComponentConfig: &containerpb.LoggingComponentConfig{
			EnableComponents: []containerpb.LoggingComponentConfig_Component{
				containerpb.LoggingComponentConfig_SYSTEM_COMPONENTS, containerpb.LoggingComponentConfig_WORKLOADS},
		}}
	}
	if pb.MonitoringConfig == nil {
		pb.MonitoringConfig = &containerpb.MonitoringConfig{
			ComponentConfig: &containerpb.MonitoringComponentConfig{EnableComponents: []containerpb.MonitoringComponentConfig_Component{
				containerpb.MonitoringComponentConfig_SYSTEM_COMPONENTS}},
			ManagedPrometheusConfig:             &containerpb.ManagedPrometheusConfig{Enabled: true},
			AdvancedDatapathObservabilityConfig: &containerpb.AdvancedDatapathObservabilityConfig{},
		}
	}
	if pb.SecurityPostureConfig == nil {
		pb.SecurityPostureConfig = &containerpb.SecurityPostureConfig{
			Mode:              containerpb.SecurityPostureConfig_BASIC.Enum(),
			VulnerabilityMode: containerpb.SecurityPostureConfig_VULNERABILITY_MODE_UNSPECIFIED.Enum(),
		}
	}
	if pb.EnterpriseConfig == nil { //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		pb.EnterpriseConfig = &containerpb.EnterpriseConfig{ClusterTier: containerpb.EnterpriseConfig_STANDARD} //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
	a := pb.AddonsConfig
	if a.GcePersistentDiskCsiDriverConfig == nil {
		a.GcePersistentDiskCsiDriverConfig = &containerpb.GcePersistentDiskCsiDriverConfig{Enabled: true}
	}
	if a.KubernetesDashboard == nil { //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		a.KubernetesDashboard = &containerpb.KubernetesDashboard{Disabled: true} //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
	if a.NetworkPolicyConfig == nil {
		a.NetworkPolicyConfig = &containerpb.NetworkPolicyConfig{Disabled: true}
	}
	if len(pools) > 0 && pools[0].Config != nil {
		pb.NodeConfig = proto.CloneOf(pools[0].Config) //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
}

// resourcePath turns a name into a resource path under prefix; a path stays as given and a URL
// (a self link, https://www.googleapis.com/compute/v1/projects/...) becomes its path.
func resourcePath(name, prefix string) string {
	if i := strings.Index(name, "/projects/"); strings.Contains(name, "://") && i >= 0 {
		return name[i+1:]
	}
	if name == "" || strings.Contains(name, "/") {
		return name
	}
	return prefix + name
}

// lastSegment is the name at the end of a resource path.
func lastSegment(path string) string { return path[strings.LastIndex(path, "/")+1:] }
