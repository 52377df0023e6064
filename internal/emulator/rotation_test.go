package emulator

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIPAndCredentialRotation: after startIpRotation with rotateCredentials the cluster has a new
// endpoint and a new CA, its nodes are still there, and the old endpoint no longer answers.
func TestIPAndCredentialRotation(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	name := testLocation + "/clusters/rotating"
	mustSucceed(t, c)(c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
		Name: "rotating", NodePools: []*containerpb.NodePool{cpuPool("system")},
	}}))
	t.Cleanup(func() { mustSucceed(t, c)(c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: name})) })
	before, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	oldKube, _ := kubeFor(t, before)
	mustSucceed(t, c)(c.StartIPRotation(ctx, &containerpb.StartIPRotationRequest{Name: name, RotateCredentials: true}))
	after, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if after.Endpoint == before.Endpoint || after.MasterAuth.ClusterCaCertificate == before.MasterAuth.ClusterCaCertificate {
		t.Fatalf("after the rotation: endpoint %s (was %s), CA changed %t", after.Endpoint, before.Endpoint,
			after.MasterAuth.ClusterCaCertificate != before.MasterAuth.ClusterCaCertificate)
	}
	newKube, _ := kubeFor(t, after)
	nodes, err := newKube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes through the new endpoint and CA: %d, %v", len(nodes.Items), err)
	}
	if _, err := oldKube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("the old endpoint still answers after the rotation")
	}
	mustSucceed(t, c)(c.CompleteIPRotation(ctx, &containerpb.CompleteIPRotationRequest{Name: name}))
}
