package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// testClientset reaches the API server of an emulated cluster with client-go itself, to look at
// and change what raytpu's kube package does not expose.
func testClientset(t *testing.T, cluster string) kubernetes.Interface {
	t.Helper()
	cl, err := testGKEClient(t).GetCluster(context.Background(), gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := base64.StdEncoding.DecodeString(cl.GetMasterAuth().GetClusterCaCertificate())
	if err != nil {
		t.Fatal(err)
	}
	k, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + cl.GetEndpoint(), BearerToken: testEmulator.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rayPodsOf lists the Pods of a RayCluster's group in namespace default ("" for the head).
func rayPodsOf(t *testing.T, cluster, name, group string) []corev1.Pod {
	t.Helper()
	sel := "ray.io/cluster=" + name + ",ray.io/node-type=head"
	if group != "" {
		sel = "ray.io/cluster=" + name + ",ray.io/group=" + group
	}
	pods, err := testClientset(t, cluster).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// createServiceAccountOutOfBand makes a ServiceAccount in namespace default, as a user would with
// kubectl before the RayCluster that names it.
func createServiceAccountOutOfBand(t *testing.T, cluster, name string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
		Annotations: map[string]string{"iam.gke.io/gcp-service-account": fmt.Sprintf("%s@%s.iam.gserviceaccount.com", name, testProject)}}}
	if _, err := testClientset(t, cluster).CoreV1().ServiceAccounts("default").Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// envOf is the value of a variable of a Pod's Ray container ("" when unset).
func envOf(p corev1.Pod, name string) string {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
