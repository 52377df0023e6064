package kube

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The add-on is reported on before its CRDs exist (the emulator creates them testRayCRDDelay
// later, as GKE does some time later): KubeRay is not ready at first, a wait shorter than the gap
// times out naming the missing CRDs, a longer one sees them established.
func TestKubeRay(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	c := env.client

	// Start from the add-on off, whatever ran before.
	if st, err := c.KubeRayStatus(ctx); err != nil {
		t.Fatal(err)
	} else if len(st.Missing) != len(KubeRayCRDs) {
		setRayOperator(t, false)
		if err := pollFor(ctx, func() bool {
			st, err := c.KubeRayStatus(ctx)
			return err == nil && len(st.Established) == 0
		}); err != nil {
			t.Fatalf("the KubeRay CRDs stay after the add-on is disabled: %v", err)
		}
	}

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

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	st, err = c.WaitForKubeRay(short, testPoll)
	if err == nil {
		t.Fatalf("WaitForKubeRay with 300ms before CRDs that come after %s succeeded: %+v", testRayCRDDelay, st)
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

	st, err = c.WaitForKubeRay(ctx, testPoll)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || !reflect.DeepEqual(st.Established, KubeRayCRDs) || len(st.Missing) != 0 {
		t.Errorf("WaitForKubeRay = %+v, want ready with every CRD established", st)
	}
	if waited := time.Since(start); waited < testRayCRDDelay-500*time.Millisecond {
		t.Errorf("KubeRay was ready %s after the add-on was enabled; the emulator installs the CRDs after %s", waited, testRayCRDDelay)
	}

	// The read carries the caller's context: a cancelled one ends it at once.
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	if _, err := c.KubeRayStatus(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("KubeRayStatus with a cancelled context: error %v, want context.Canceled", err)
	}
}

// pollFor checks cond every testPoll until it holds or ctx ends.
func pollFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(testPoll):
		}
	}
	return nil
}
