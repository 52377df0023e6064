package kube

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// The add-on is reported on before its CRDs exist (the emulator creates them testRayCRDDelay
// later, as GKE does some time later): KubeRay is not ready at first, a wait that ends before
// them times out naming the missing CRDs, a longer one sees them established.
func TestKubeRay(t *testing.T) {
	ctx := testwait.Context(t)
	c := env.client

	// Start from the add-on off, whatever ran before (an install may be pending).
	setRayOperator(t, false)
	// Gone, not only no longer served: a CRD still terminating refuses a dry run with another error.
	testwait.For(t, "the KubeRay CRDs to go once the add-on is disabled", func() bool {
		for _, name := range KubeRayCRDs {
			err := c.discovery.Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", name).Do(ctx).Error()
			if !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})

	// The emulator holds the CRDs back until released below, so that what is checked before them
	// does not race their coming, however slow the machine.
	setRayCRDDelay(ctx, t, 24*time.Hour)
	released := false
	t.Cleanup(func() {
		if !released {
			setRayCRDDelay(ctx, t, testRayCRDDelay)
			setRayOperator(t, false) // so that the next enabling installs them
		}
	})
	setRayOperator(t, true)
	st, err := c.KubeRayStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ready || len(st.Established) != 0 || !reflect.DeepEqual(st.Missing, KubeRayCRDs) {
		t.Fatalf("KubeRayStatus right after enabling the add-on = %+v, want not ready with every CRD missing", st)
	}

	// Creating a RayCluster now fails with a message that says why.
	err = c.DryRunRayCluster(ctx, "", []byte(validRayClusterYAML))
	if err == nil || !strings.Contains(err.Error(), "does not serve rayclusters.ray.io/v1") {
		t.Errorf("DryRunRayCluster before the CRDs exist: error = %v, want one saying rayclusters.ray.io/v1 is not served", err)
	}

	// The wait's deadline comes as it reads the CRDs a second time: it has read them once.
	short := newExpiringContext(ctx)
	var reads atomic.Int32
	observed := clientObserving(t, func(r *http.Request) {
		if r.URL.Path == "/apis/"+kubeRayGroupVersion && reads.Add(1) == 2 {
			short.expire()
		}
	})
	start := time.Now()
	st, err = observed.WaitForKubeRay(short, testPoll)
	if err == nil {
		t.Fatalf("WaitForKubeRay that ends before the CRDs succeeded: %+v", st)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitForKubeRay timeout error %q does not wrap context.DeadlineExceeded", err)
	}
	if !regexp.MustCompile(`KubeRay is not ready after waiting [0-9.]+m?s: CRDs rayclusters\.ray\.io, rayjobs\.ray\.io, rayservices\.ray\.io not established`).MatchString(err.Error()) {
		t.Errorf("WaitForKubeRay timeout error %q should say how long it waited and name the three CRDs", err)
	}
	if st.Ready || len(st.Missing) != 3 {
		t.Errorf("WaitForKubeRay on timeout returned status %+v, want the last one read (3 missing)", st)
	}
	t.Logf("timeout after %s: %v", time.Since(start).Round(time.Millisecond), err)

	// Released: enabled again, the add-on gets its CRDs testRayCRDDelay later.
	setRayCRDDelay(ctx, t, testRayCRDDelay)
	setRayOperator(t, false)
	released = true
	// Before the request: the emulator's delay starts once the operation is done, later still.
	start = time.Now()
	setRayOperator(t, true)
	st, err = c.WaitForKubeRay(ctx, testPoll)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || !reflect.DeepEqual(st.Established, KubeRayCRDs) || len(st.Missing) != 0 {
		t.Errorf("WaitForKubeRay = %+v, want ready with every CRD established", st)
	}
	// A lower bound: a busy machine only sees them later.
	if waited := time.Since(start); waited < testRayCRDDelay {
		t.Errorf("KubeRay was ready %s after the add-on was enabled; the emulator installs the CRDs after %s", waited, testRayCRDDelay)
	}

	// The read carries the caller's context: a cancelled one ends it at once.
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	if _, err := c.KubeRayStatus(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("KubeRayStatus with a cancelled context: error %v, want context.Canceled", err)
	}
}

// setRayCRDDelay sets how long after the add-on is next enabled the emulator creates the test
// cluster's KubeRay CRDs.
func setRayCRDDelay(ctx context.Context, t *testing.T, d time.Duration) {
	t.Helper()
	if err := env.emu.SetClusterLatencies(ctx, testClusterName(), map[string]time.Duration{emulator.RayCRDsLatency: d}); err != nil {
		t.Fatal(err)
	}
}
