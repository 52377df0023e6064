package emulator

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook/tpuwebhooktest"
)

// Every cluster after the first that installs the KubeRay CRDs gets copies of that cluster's stored
// CRDs: the same schema, served and Established, each with its own uid and creation time.
func TestLaterClustersGetCopiesOfTheKubeRayCRDs(t *testing.T) {
	_, _, _, first := sharedKube(t)
	waitRayClusterServed(t, first)
	started := time.Now().Add(-time.Second)
	_, _, ec, _, second := rayTestCluster(t, "crd-copies")
	testEmu.crdTemplates.mu.Lock()
	templates := len(testEmu.crdTemplates.crd)
	testEmu.crdTemplates.mu.Unlock()
	if templates != len(kubeproc.KubeRayCRDFiles) {
		t.Fatalf("%d CRD templates kept, want %d", templates, len(kubeproc.KubeRayCRDFiles))
	}
	ctx := testCtx(t)
	for _, f := range kubeproc.KubeRayCRDFiles {
		name := crdNameOfFile(f)
		a, err := first.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := second.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a.GetUID() == b.GetUID() || b.GetCreationTimestamp().Time.Before(started) || !crdEstablished(b) {
			t.Errorf("CRD %s of the second cluster: uid %s (the first's %s), created %s, established %v", name,
				b.GetUID(), a.GetUID(), b.GetCreationTimestamp(), crdEstablished(b))
		}
		if b.GetDeletionTimestamp() != nil || len(b.GetFinalizers()) > 0 {
			t.Errorf("CRD %s of the second cluster is being deleted (%v, finalizers %v)", name, b.GetDeletionTimestamp(), b.GetFinalizers())
		}
	}
	// The copies serve: the second cluster lists and creates Ray objects.
	if err := createRayCluster(ctx, second, tpuwebhooktest.RayCluster("served", "tpu", 1, 1, 4, "2x2")); err != nil {
		t.Fatal(err)
	}
	if ec.runtimeOf() == nil {
		t.Fatal("the second cluster has no runtime")
	}
}
