package emulator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// RayCRDsLatency is the SetLatencies key for the gap between enabling the Ray Operator add-on and
// its CRDs being created (Options.RayCRDDelay until set).
const RayCRDsLatency = "RAY_OPERATOR_CRDS"

// rayCRDDelay is the current gap between enabling the add-on and creating its CRDs.
func (e *Emulator) rayCRDDelay(c *cluster) time.Duration {
	if d, ok := e.ctl.rayCRDLatency(c.Key); ok {
		return d
	}
	switch {
	case e.opts.RayCRDDelay == 0:
		return DefaultRayCRDDelay
	case e.opts.RayCRDDelay < 0:
		return 0
	}
	return e.opts.RayCRDDelay
}

// scheduleRayLocked makes the cluster's KubeRay CRDs follow the Ray Operator add-on: created
// RayCRDDelay after it is enabled, removed when it is disabled. A change supersedes any change
// still in flight (including its waits), so quick toggles end in the last state asked for. The
// TPU webhook's registration comes and goes with the CRDs, and once they are served the add-on's
// part of the cluster's runtime (package clusterkube) waits for its first Ray object.
func (e *Emulator) scheduleRayLocked(c *cluster) {
	want := c.rayEnabled() && c.PB.Status != containerpb.Cluster_ERROR
	if want == c.rayTarget {
		return
	}
	c.rayTarget = want
	c.rayGen++
	gen := c.rayGen
	current := func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return c.rayGen == gen
	}
	delay := e.rayCRDDelay(c)
	if !want {
		delay = 0
	}
	enabled := time.Now()
	e.goBackground(func(ctx context.Context) {
		if !sleepCtx(ctx, delay) {
			return
		}
		c.rayMu.Lock()
		defer c.rayMu.Unlock()
		if !current() {
			return
		}
		// Retried until it succeeds or a newer add-on change supersedes it: GKE keeps
		// reconciling an enabled add-on, it does not give up after one failure.
		for {
			var err error
			if want {
				err = e.installRayAddon(ctx, c, current)
			} else {
				err = e.removeRayAddon(ctx, c, current)
			}
			if err == nil {
				break
			}
			if errors.Is(err, errSuperseded) {
				return
			}
			e.logf("cluster %s: KubeRay CRDs: %v (retrying)", c.Key, err)
			if !sleepCtx(ctx, time.Second) || !current() {
				return
			}
		}
		e.mu.Lock()
		if c.rayGen == gen {
			c.RayCRDs = want
			e.persistLocked()
		}
		e.mu.Unlock()
		if want && e.waitRayCRDsEstablished(ctx, c, current) == nil {
			e.ctl.recordRayCRDs(RayCRDInstall{Cluster: c.Key, Start: enabled, End: time.Now()})
			e.captureRayCRDs(ctx, c)
			e.mu.Lock()
			current := c.rayGen == gen
			e.mu.Unlock()
			if r := c.runtimeOf(); current && r != nil {
				r.ArmRay()
			}
		}
	})
}

// installRayAddon is what enabling the add-on puts in the cluster: the TPU webhook's
// registration, then the KubeRay CRDs.
func (e *Emulator) installRayAddon(ctx context.Context, c *cluster, current func() bool) error {
	if err := e.installTPUWebhook(ctx, c); err != nil {
		if errors.Is(err, errNoAPIServer) {
			return err
		}
		return fmt.Errorf("registering the TPU webhook: %w", err)
	}
	return e.installRayCRDs(ctx, c, current)
}

// removeRayAddon stops the cluster's ray-operator, unregisters the webhook and deletes the CRDs.
func (e *Emulator) removeRayAddon(ctx context.Context, c *cluster, current func() bool) error {
	if r := c.runtimeOf(); r != nil {
		r.DisarmRay()
	}
	if err := e.removeTPUWebhook(ctx, c); err != nil {
		return fmt.Errorf("unregistering the TPU webhook: %w", err)
	}
	return e.removeRayCRDs(ctx, c, current)
}
