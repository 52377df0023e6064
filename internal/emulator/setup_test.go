package emulator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

func TestMissingBinariesSayWhatToRun(t *testing.T) {
	empty := t.TempDir()
	_, err := Start(context.Background(), Options{KubeBinDir: empty})
	if err == nil || !strings.Contains(err.Error(), "make tools") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("want an error naming `make tools`, got %v", err)
	}
	// Binaries without the CRDs are refused too.
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(empty, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Start(context.Background(), Options{KubeBinDir: empty})
	if err == nil || !strings.Contains(err.Error(), "ray.io_rayclusters.yaml") || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("want an error about the KubeRay CRDs, got %v", err)
	}
	if _, err := Start(context.Background(), Options{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a non-loopback address: %v", err)
	}
}

func TestCancelOperation(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	if err := testEmu.SetLatencies(ctx, map[string]time.Duration{"CREATE_NODE_POOL": 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resetControl(t) })
	op, err := c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: tpuPool("cancelled", "e2-standard-4", 1, nil)})
	if err != nil {
		t.Fatal(err)
	}
	name := testLocation + "/operations/" + op.Name
	if err := c.CancelOperation(ctx, &containerpb.CancelOperationRequest{Name: name}); err != nil {
		t.Fatal(err)
	}
	done, _ := waitOp(t, c, op)
	if done.Error == nil || done.Error.Code != 1 /* CANCELLED */ {
		t.Fatalf("cancelled operation ended with %v", done.Error)
	}
	np, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: cluster + "/nodePools/cancelled"})
	if err != nil || np.Status != containerpb.NodePool_ERROR {
		t.Fatalf("pool of a cancelled create: %v %v", np.GetStatus(), err)
	}
	err = c.CancelOperation(ctx, &containerpb.CancelOperationRequest{Name: name})
	wantGoogleError(t, err, 400, "FAILED_PRECONDITION", "already done")
	mustSucceed(t, c)(c.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: cluster + "/nodePools/cancelled"}))
}

// TestRayAddonToggle turns the add-on off and on again on a cluster: the CRDs go and come back,
// also when it is turned on again while the CRDs are still being deleted.
func TestRayAddonToggle(t *testing.T) {
	cluster, c, _, dyn := sharedKube(t)
	ctx := testCtx(t)
	waitRayClusterServed(t, dyn)
	setRay := func(on bool) *containerpb.Operation {
		return mustSucceed(t, c)(c.SetAddonsConfig(ctx, &containerpb.SetAddonsConfigRequest{Name: cluster, AddonsConfig: &containerpb.AddonsConfig{
			RayOperatorConfig: &containerpb.RayOperatorConfig{Enabled: on}}}))
	}
	if op := setRay(false); op.OperationType != containerpb.Operation_UPDATE_CLUSTER {
		t.Fatalf("setAddons operation type %s", op.OperationType)
	}
	setRay(true)
	waitRayClusterServed(t, dyn)
	setRay(false)
	// What the waits below saw last, logged should one give up.
	var crdErr error
	var installs []RayCRDInstall
	defer func() {
		if t.Failed() {
			t.Logf("last read of a CRD: %v; installs on record: %+v", crdErr, installs)
		}
	}()
	testwait.For(t, "the RayCluster CRD to go after disabling the add-on", func() bool {
		_, crdErr = dyn.Resource(crdGVR).Get(ctx, "rayclusters.ray.io", metav1.GetOptions{})
		return apierrors.IsNotFound(crdErr)
	})
	enabling := time.Now()
	setRay(true)
	waitRayClusterServed(t, dyn)
	// The install is over once all three CRDs are Established, which, on a busy machine, can be
	// well after RayCluster is served.
	for _, name := range []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io"} {
		testwait.For(t, "CRD "+name+" to be Established after the add-on was enabled", func() bool {
			var crd *unstructured.Unstructured
			crd, crdErr = dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			return crdErr == nil && crdEstablished(crd)
		})
	}

	// The install is on record, over the control API, from the add-on reported enabled to the
	// CRDs Established.
	ctl := NewClient(testEmu.Endpoint(), testEmu.Token())
	testwait.For(t, "an install of the KubeRay CRDs of "+cluster+" since the add-on was enabled on record", func() bool {
		var err error
		if installs, err = ctl.RayCRDInstalls(ctx); err != nil {
			t.Fatal(err)
		}
		last := RayCRDInstall{}
		for _, in := range installs {
			if in.Cluster == cluster {
				last = in
			}
		}
		return last.Start.After(enabling) && last.End.After(last.Start)
	})
}
