package emulator

import (
	"path"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	gcontainer "google.golang.org/api/container/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

func TestParseLegacyRoutes(t *testing.T) {
	z := "/v1/projects/p/zones/us-central2-b"
	name := func(c, np, op string) resourceName {
		return resourceName{Project: "p", Location: "us-central2-b", Cluster: c, NodePool: np, Operation: op}
	}
	for _, tc := range []struct {
		method, path, rpc string
		name              resourceName
	}{
		{"GET", z + "/serverconfig", "GetServerConfig", name("", "", "")},
		{"GET", z + "/clusters", "ListClusters", name("", "", "")},
		{"POST", z + "/clusters", "CreateCluster", name("", "", "")},
		{"GET", z + "/clusters/c", "GetCluster", name("c", "", "")},
		{"PUT", z + "/clusters/c", "UpdateCluster", name("c", "", "")},
		{"DELETE", z + "/clusters/c", "DeleteCluster", name("c", "", "")},
		{"POST", z + "/clusters/c/addons", "SetAddonsConfig", name("c", "", "")},
		{"POST", z + "/clusters/c/legacyAbac", "SetLegacyAbac", name("c", "", "")},
		{"POST", z + "/clusters/c/locations", "SetLocations", name("c", "", "")},
		{"POST", z + "/clusters/c/logging", "SetLoggingService", name("c", "", "")},
		{"POST", z + "/clusters/c/master", "UpdateMaster", name("c", "", "")},
		{"POST", z + "/clusters/c/monitoring", "SetMonitoringService", name("c", "", "")},
		{"POST", z + "/clusters/c/resourceLabels", "SetLabels", name("c", "", "")},
		{"POST", z + "/clusters/c:setMaintenancePolicy", "SetMaintenancePolicy", name("c", "", "")},
		{"POST", z + "/clusters/c:setMasterAuth", "SetMasterAuth", name("c", "", "")},
		{"POST", z + "/clusters/c:setNetworkPolicy", "SetNetworkPolicy", name("c", "", "")},
		{"POST", z + "/clusters/c:startIpRotation", "StartIPRotation", name("c", "", "")},
		{"POST", z + "/clusters/c:completeIpRotation", "CompleteIPRotation", name("c", "", "")},
		{"GET", z + "/clusters/c/nodePools", "ListNodePools", name("c", "", "")},
		{"POST", z + "/clusters/c/nodePools", "CreateNodePool", name("c", "", "")},
		{"GET", z + "/clusters/c/nodePools/n", "GetNodePool", name("c", "n", "")},
		{"DELETE", z + "/clusters/c/nodePools/n", "DeleteNodePool", name("c", "n", "")},
		{"POST", z + "/clusters/c/nodePools/n/autoscaling", "SetNodePoolAutoscaling", name("c", "n", "")},
		{"POST", z + "/clusters/c/nodePools/n/setManagement", "SetNodePoolManagement", name("c", "n", "")},
		{"POST", z + "/clusters/c/nodePools/n/setSize", "SetNodePoolSize", name("c", "n", "")},
		{"POST", z + "/clusters/c/nodePools/n/update", "UpdateNodePool", name("c", "n", "")},
		{"POST", z + "/clusters/c/nodePools/n:rollback", "RollbackNodePoolUpgrade", name("c", "n", "")},
		{"GET", z + "/operations", "ListOperations", name("", "", "")},
		{"GET", z + "/operations/o", "GetOperation", name("", "", "o")},
		{"POST", z + "/operations/o:cancel", "CancelOperation", name("", "", "o")},
		// The locations form has the same verbs after a colon.
		{"POST", "/v1/projects/p/locations/us-central2-b/clusters/c:setLogging", "SetLoggingService", name("c", "", "")},
		{"POST", "/v1/projects/p/locations/us-central2-b/clusters/c:updateMaster", "UpdateMaster", name("c", "", "")},
		{"POST", "/v1/projects/p/locations/us-central2-b/clusters/c/nodePools/n:setAutoscaling", "SetNodePoolAutoscaling", name("c", "n", "")},
		{"POST", "/v1/projects/p/locations/us-central2-b/clusters/c/nodePools/n:completeUpgrade", "CompleteNodePoolUpgrade", name("c", "n", "")},
	} {
		rt, err := parseRoute(tc.method, tc.path)
		if err != nil || rt.rpc != tc.rpc || rt.name != tc.name {
			t.Errorf("%s %s: got %+v %v, want %s %+v", tc.method, tc.path, rt, err, tc.rpc, tc.name)
		}
	}
	for _, bad := range []struct{ method, path string }{
		{"GET", z + "/serverConfig"}, {"POST", "/v1/projects/p/locations/l/clusters/c/addons"},
		{"GET", z + "/clusters/c/addons"}, {"POST", z + "/clusters/c/nodePools/n/x"},
	} {
		if _, err := parseRoute(bad.method, bad.path); err == nil {
			t.Errorf("%s %s: routed", bad.method, bad.path)
		}
	}
}

// TestLegacyZonalPaths drives node pools and cluster settings through the zonal (legacy) paths of
// google.golang.org/api/container/v1 (Projects.Zones), and the setters through both forms.
func TestLegacyZonalPaths(t *testing.T) {
	sharedCluster(t)
	ctx := testCtx(t)
	d := discoveryClient(t)
	zones := d.Projects.Zones
	wait := func(op *gcontainer.Operation, err error) *gcontainer.Operation {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for op.Status != "DONE" {
			time.Sleep(25 * time.Millisecond)
			if op, err = zones.Operations.Get(testProject, testZone, op.Name).Do(); err != nil {
				t.Fatal(err)
			}
		}
		if op.Error != nil {
			t.Fatalf("operation %s failed: %+v", op.Name, op.Error)
		}
		return op
	}

	sc, err := zones.GetServerconfig(testProject, testZone).Do()
	if err != nil || sc.DefaultClusterVersion != rules.DefaultVersion || len(sc.ValidMasterVersions) == 0 {
		t.Fatalf("serverconfig: %+v %v", sc, err)
	}
	list, err := zones.Clusters.List(testProject, testZone).Do()
	if err != nil || len(list.Clusters) == 0 {
		t.Fatalf("clusters: %+v %v", list, err)
	}
	cl, err := zones.Clusters.Get(testProject, testZone, sharedClusterID).Do()
	if err != nil || cl.Name != sharedClusterID || cl.Location != testZone {
		t.Fatalf("cluster: %+v %v", cl, err)
	}

	op := wait(zones.Clusters.NodePools.Create(testProject, testZone, sharedClusterID, &gcontainer.CreateNodePoolRequest{
		NodePool: &gcontainer.NodePool{Name: "zonal", InitialNodeCount: 1, Config: &gcontainer.NodeConfig{MachineType: "e2-standard-4"}}}).Do())
	if op.OperationType != "CREATE_NODE_POOL" {
		t.Fatalf("create operation %+v", op)
	}
	np, err := zones.Clusters.NodePools.Get(testProject, testZone, sharedClusterID, "zonal").Do()
	if err != nil || np.Status != "RUNNING" {
		t.Fatalf("pool: %+v %v", np, err)
	}
	op = wait(zones.Clusters.NodePools.SetSize(testProject, testZone, sharedClusterID, "zonal", &gcontainer.SetNodePoolSizeRequest{NodeCount: 3}).Do())
	if op.OperationType != "SET_NODE_POOL_SIZE" {
		t.Fatalf("setSize operation %+v", op)
	}
	igm, err := computeClient(t).InstanceGroupManagers.Get(testProject, testZone, path.Base(np.InstanceGroupUrls[0])).Do()
	if err != nil || igm.TargetSize != 3 {
		t.Fatalf("the resized pool's manager: %+v %v", igm, err)
	}
	wait(zones.Clusters.NodePools.Autoscaling(testProject, testZone, sharedClusterID, "zonal", &gcontainer.SetNodePoolAutoscalingRequest{
		Autoscaling: &gcontainer.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 5}}).Do())
	op = wait(zones.Clusters.NodePools.SetManagement(testProject, testZone, sharedClusterID, "zonal", &gcontainer.SetNodePoolManagementRequest{
		Management: &gcontainer.NodeManagement{AutoUpgrade: true, AutoRepair: true}}).Do())
	if op.OperationType != "SET_NODE_POOL_MANAGEMENT" {
		t.Fatalf("setManagement operation %+v", op)
	}
	wait(zones.Clusters.NodePools.Update(testProject, testZone, sharedClusterID, "zonal", &gcontainer.UpdateNodePoolRequest{
		Labels: &gcontainer.NodeLabels{Labels: map[string]string{"team": "ray"}}}).Do())
	wait(zones.Clusters.NodePools.Rollback(testProject, testZone, sharedClusterID, "zonal", &gcontainer.RollbackNodePoolUpgradeRequest{}).Do())
	np, err = zones.Clusters.NodePools.Get(testProject, testZone, sharedClusterID, "zonal").Do()
	if err != nil || !np.Autoscaling.Enabled || np.Autoscaling.MaxNodeCount != 5 || !np.Management.AutoRepair || !np.Management.AutoUpgrade ||
		np.Config.Labels["team"] != "ray" || np.Status != "RUNNING" {
		t.Fatalf("pool after the zonal setters: %+v %+v %+v %v", np.Autoscaling, np.Management, np.Config, err)
	}
	pools, err := zones.Clusters.NodePools.List(testProject, testZone, sharedClusterID).Do()
	if err != nil || len(pools.NodePools) < 2 {
		t.Fatalf("pools: %+v %v", pools, err)
	}

	// Cluster settings, zonal and locations forms.
	wait(zones.Clusters.Logging(testProject, testZone, sharedClusterID, &gcontainer.SetLoggingServiceRequest{LoggingService: "none"}).Do())
	wait(zones.Clusters.Monitoring(testProject, testZone, sharedClusterID, &gcontainer.SetMonitoringServiceRequest{MonitoringService: "none"}).Do())
	wait(zones.Clusters.LegacyAbac(testProject, testZone, sharedClusterID, &gcontainer.SetLegacyAbacRequest{Enabled: true}).Do())
	wait(zones.Clusters.SetNetworkPolicy(testProject, testZone, sharedClusterID, &gcontainer.SetNetworkPolicyRequest{
		NetworkPolicy: &gcontainer.NetworkPolicy{Enabled: true, Provider: "CALICO"}}).Do())
	// The policy's current resourceVersion goes with the change, as GKE's API reference asks.
	cl, err = zones.Clusters.Get(testProject, testZone, sharedClusterID).Do()
	if err != nil {
		t.Fatal(err)
	}
	wait(d.Projects.Locations.Clusters.SetMaintenancePolicy(testLocation+"/clusters/"+sharedClusterID, &gcontainer.SetMaintenancePolicyRequest{
		MaintenancePolicy: &gcontainer.MaintenancePolicy{ResourceVersion: cl.MaintenancePolicy.ResourceVersion, Window: &gcontainer.MaintenanceWindow{
			DailyMaintenanceWindow: &gcontainer.DailyMaintenanceWindow{StartTime: "03:00"}}}}).Do())
	wait(d.Projects.Locations.Clusters.Update(testLocation+"/clusters/"+sharedClusterID, &gcontainer.UpdateClusterRequest{Update: &gcontainer.ClusterUpdate{
		DesiredLoggingConfig: &gcontainer.LoggingConfig{ComponentConfig: &gcontainer.LoggingComponentConfig{EnableComponents: []string{"SYSTEM_COMPONENTS"}}},
		DesiredNodePoolId:    "zonal", DesiredNodePoolAutoscaling: &gcontainer.NodePoolAutoscaling{Enabled: true, MinNodeCount: 0, MaxNodeCount: 4},
	}}).Do())
	cl, err = zones.Clusters.Get(testProject, testZone, sharedClusterID).Do()
	if err != nil || cl.LoggingService != "none" || cl.MonitoringService != "none" || !cl.LegacyAbac.Enabled || !cl.NetworkPolicy.Enabled ||
		cl.MaintenancePolicy.Window.DailyMaintenanceWindow.StartTime != "03:00" || cl.MaintenancePolicy.ResourceVersion == "" ||
		len(cl.LoggingConfig.ComponentConfig.EnableComponents) != 1 {
		t.Fatalf("cluster after the setters: %+v %v", cl, err)
	}
	for _, p := range cl.NodePools {
		if p.Name == "zonal" && p.Autoscaling.MaxNodeCount != 4 {
			t.Fatalf("desiredNodePoolAutoscaling: %+v", p.Autoscaling)
		}
	}
	ops, err := zones.Operations.List(testProject, testZone).Do()
	if err != nil || len(ops.Operations) == 0 {
		t.Fatalf("operations: %+v %v", ops, err)
	}

	// The gapic client's setters use the locations form.
	c := restClient(t, testEmu.Token())
	mustSucceed(t, c)(c.SetLoggingService(ctx, &containerpb.SetLoggingServiceRequest{Name: testLocation + "/clusters/" + sharedClusterID,
		LoggingService: "logging.googleapis.com/kubernetes"}))
	mustSucceed(t, c)(c.SetMonitoringService(ctx, &containerpb.SetMonitoringServiceRequest{Name: testLocation + "/clusters/" + sharedClusterID,
		MonitoringService: "monitoring.googleapis.com/kubernetes"}))
	mustSucceed(t, c)(c.SetLegacyAbac(ctx, &containerpb.SetLegacyAbacRequest{Name: testLocation + "/clusters/" + sharedClusterID}))
	if err := c.CompleteNodePoolUpgrade(ctx, &containerpb.CompleteNodePoolUpgradeRequest{Name: testLocation + "/clusters/" + sharedClusterID + "/nodePools/zonal"}); err != nil {
		t.Fatal(err)
	}
	wait(zones.Clusters.NodePools.Delete(testProject, testZone, sharedClusterID, "zonal").Do())
	if _, err := zones.Clusters.NodePools.Get(testProject, testZone, sharedClusterID, "zonal").Do(); err == nil {
		t.Fatal("the deleted pool is still there")
	}
}
