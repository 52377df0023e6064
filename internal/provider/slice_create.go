package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// Create creates the slice on the first of its capacity choices that GKE can give it: its own
// settings, then each fallback entry, moving on only when GKE answers with a stockout or an
// exhausted quota, and only once the failed attempt's node pool is deleted.
func (r *sliceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, sliceTimeouts.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	s, diags := resolveShape(plan.shape())
	resp.Diagnostics.Append(diags...)
	if s == nil || resp.Diagnostics.HasError() {
		return
	}
	if plan.Name.IsUnknown() || plan.Name.IsNull() {
		plan.Name = types.StringValue(generatedName(plan.NamePrefix.ValueString()))
		resp.Diagnostics.Append(plan.deriveOutputs(ctx, s)...)
	}
	clusterID, _ := gke.ParseClusterID(plan.Cluster.ValueString())
	id := gke.NodePoolID{Cluster: clusterID, Name: plan.Name.ValueString()}
	r.data.reservations.creating(clusterID.Name + "/" + id.Name)
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError("Error Creating Slice", fmt.Sprintf("creating raytpu_slice (%s): ", id)+fmt.Sprintf(format, args...))
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		fail("%s", err)
		return
	}
	cluster, err := client.GetCluster(ctx, clusterID)
	if err != nil {
		fail("reading the cluster: %s", gke.WithAdvice(err))
		return
	}
	if plan.Zone.IsUnknown() || plan.Zone.IsNull() {
		zone, ok := clusterID.Zone()
		if !ok {
			resp.Diagnostics.Append(missingZone(clusterID, s))
			return
		}
		plan.Zone = types.StringValue(zone)
	}
	choices, diags := plan.capacityChoices(ctx)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(zoneRegionCheck(choices, clusterID)...)
	resp.Diagnostics.Append(checkManagement(plan, channelName(cluster), choices[0].flexible())...)
	// Resolved again here: at plan time the cluster may not have existed yet.
	version, d := r.resolveNodeVersion(ctx, client, clusterID, cluster, plan.NodeVersion, s, slices.ContainsFunc(choices, capacityChoice.flexible))
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.CurrentNodeVersion = types.StringValue(version)
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		fail("%s", err)
		return
	}
	defer unlock()
	ownPolicy, diags := r.placeSlice(ctx, client, &plan, s, id)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	access := accessOf(cluster)
	var failed []failedAttempt
	planned := plan // as planned: an attempt records its pool in plan, with what is not known yet null
	for i, choice := range choices {
		pool, diags := expandNodePool(ctx, planned, s, choice)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		plan.CapacityUsed = capacityUsedObject(choice, i)
		a := r.createOn(ctx, client, access, id, pool, &plan, resp)
		if a.err == nil {
			unlock()
			r.finishCreate(ctx, client, access, id, s, &plan, a, failed, resp)
			return
		}
		if a.kept {
			fail("%s", a.err)
			return
		}
		shortage, isShortage := gke.CapacityShortage(a.err)
		failed = append(failed, failedAttempt{choice: choice, shortage: shortage, err: a.err, started: a.started})
		if !isShortage {
			break
		}
	}
	if ownPolicy {
		resp.Diagnostics.Append(deleteOwnWorkloadPolicy(ctx, client, id, plan.PlacementPolicyName.ValueString())...)
	}
	fail("%s", attemptsError(failed))
}

// failedAttempt is a capacity choice GKE could not give the slice.
type failedAttempt struct {
	choice   capacityChoice
	shortage gke.Shortage
	err      error
	started  bool // GKE started the node pool, since deleted
}

// attemptsError explains failed attempts: the one error as it is, or every attempt and its reason.
func attemptsError(failed []failedAttempt) string {
	if len(failed) == 1 {
		if !failed[0].started {
			return gke.WithAdvice(failed[0].err)
		}
		return gke.WithAdvice(failed[0].err) + "\n\nNothing was left behind: the node pool GKE started was deleted."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "none of the slice's capacity choices gave it its TPUs (%d tried):", len(failed))
	for i, f := range failed {
		fmt.Fprintf(&b, "\n  %d. %s", i+1, f)
	}
	b.WriteString("\n\nNothing was left behind: each node pool GKE started was deleted before the next attempt.")
	if advice := gke.Advice(failed[len(failed)-1].err); advice != "" {
		b.WriteString(" " + advice)
	}
	return b.String()
}

func (f failedAttempt) String() string {
	why := "refused"
	if f.shortage != "" {
		why = string(f.shortage)
	}
	message, _, _ := strings.Cut(gke.WithAdvice(f.err), "\n")
	return fmt.Sprintf("%s: %s: %s", f.choice, why, message)
}

// attemptResult is how one creation attempt ended. Without err, GKE created the pool (created),
// whose hosts are being waited for (hosts, nil for no wait). With kept, the pool lives on (its
// wait ended early, or its failed creation could not be deleted: cleanupErr), so no other attempt
// may follow.
type attemptResult struct {
	created    *containerpb.NodePool
	hosts      *hostWait
	err        error
	started    bool
	kept       bool
	cleanupErr error
}

// createOn requests pool and waits until GKE has created it. The pool is recorded in state as soon
// as GKE accepts it, so that an interrupted wait leaves it there; a creation that fails is deleted
// and removed from state before createOn returns, so that the next attempt starts from nothing.
func (r *sliceResource) createOn(ctx context.Context, client *gke.Client, access clusterAccess, id gke.NodePoolID, pool *containerpb.NodePool,
	plan *sliceResourceModel, resp *resource.CreateResponse) attemptResult {
	a := createNodePool(ctx, client, access, id, pool, plan.WaitForHosts.ValueBool(), func() {
		plan.ID = types.StringValue(id.String())
		plan.setLiveNull()
		if d := resp.State.Set(ctx, plan); d.HasError() {
			resp.Diagnostics.Append(d...)
		}
	})
	switch {
	case a.kept && a.cleanupErr != nil:
		a.err = fmt.Errorf("%s\n\nThe partly created node pool could not be deleted (%s); it stays in state and the next apply "+
			"replaces it", gke.WithAdvice(a.err), a.cleanupErr)
	case a.kept:
		a.err = fmt.Errorf("%w%s", a.err, keptInState)
	case a.err != nil && a.started:
		resp.State.RemoveResource(ctx)
	}
	return a
}

// createNodePool requests pool, calls accepted once GKE has accepted it, and waits until GKE has
// created it, watching its hosts meanwhile when waitForHosts (their turning Ready is what tells
// the wait that the pool is up, without polling the operation for it). A creation that fails is
// deleted before createNodePool returns; the caller holds the pool's lock.
func createNodePool(ctx context.Context, client *gke.Client, access clusterAccess, id gke.NodePoolID, pool *containerpb.NodePool,
	waitForHosts bool, accepted func()) attemptResult {
	op, err := client.CreateNodePool(ctx, id, pool)
	if gke.IsAlreadyExists(err) {
		op, err = adoptNodePool(ctx, client, id, pool, err)
	}
	if err != nil {
		return attemptResult{err: err}
	}
	accepted()
	var hosts *hostWait
	var hostsUp <-chan struct{}
	if waitForHosts && pool.GetInitialNodeCount() > 0 {
		hosts = startHostWait(ctx, client, access, id.Name, int(pool.GetInitialNodeCount())*max(len(pool.GetLocations()), 1))
		hostsUp = hosts.done
	}
	created, err := client.WaitForNodePoolCreation(ctx, id, op, hostsUp)
	if err == nil {
		return attemptResult{created: created, hosts: hosts, started: true}
	}
	hosts.stop()
	var opErr *gke.OperationError
	if !errors.As(err, &opErr) {
		return attemptResult{err: fmt.Errorf("waiting for the node pool: %s", gke.WithAdvice(err)), kept: true}
	}
	// Atomic: a failed creation may leave a pool in ERROR; delete it before reporting.
	if cleanup := deleteNodePool(ctx, client, id); cleanup != nil {
		return attemptResult{err: err, kept: true, cleanupErr: cleanup}
	}
	return attemptResult{err: err, started: true}
}

// finishCreate waits for the hosts of a created pool and records the slice as it runs.
func (r *sliceResource) finishCreate(ctx context.Context, client *gke.Client, access clusterAccess, id gke.NodePoolID, s *tpu.Slice,
	plan *sliceResourceModel, a attemptResult, failed []failedAttempt, resp *resource.CreateResponse) {
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError("Error Creating Slice", fmt.Sprintf("creating raytpu_slice (%s): ", id)+fmt.Sprintf(format, args...))
	}
	created := a.created
	if created.GetStatus() == containerpb.NodePool_ERROR {
		// Only an adopted pool whose creation was already over gets here with an error.
		fail("the node pool was created in the ERROR state: %s%s", created.GetStatusMessage(), keptInState) //nolint:staticcheck // deprecated in the API, still reported by GKE
		return
	}
	timeout, _ := time.ParseDuration(plan.HostWaitTimeout.ValueString())
	observed := true
	if err := a.hosts.result(ctx, timeout); err != nil {
		if !kube.CannotObserve(err) {
			fail("waiting for its %d hosts to be Ready Kubernetes nodes (host_wait_timeout %s after GKE created the node pool): %s%s",
				s.Hosts, plan.HostWaitTimeout.ValueString(), err, keptInState)
			return
		}
		observed = false
		resp.Diagnostics.AddWarning("Slice Hosts Not Observed", fmt.Sprintf("GKE reports %s created, but its hosts cannot be seen "+
			"in the cluster's Kubernetes API from here: %s. The slice is created and recorded; hosts, ready_hosts and healthy "+
			"stay unknown until a refresh reaches the API server. For a private cluster, let GKE's DNS-based control plane "+
			"endpoint accept external traffic, or run Terraform where the private endpoint is reachable.", id, err))
	}
	var listed []kube.Host
	if observed {
		var err error
		if listed, err = sliceHosts(ctx, client, access, created); err != nil {
			resp.Diagnostics.AddWarning("Slice Hosts Unknown", fmt.Sprintf("listing the hosts of raytpu_slice (%s): %s", id, err))
		}
	}
	resp.Diagnostics.Append(readPool(ctx, plan, created, listed)...)
	if len(failed) > 0 {
		var b strings.Builder
		for i, f := range failed {
			fmt.Fprintf(&b, "\n  %d. %s", i+1, f)
		}
		used := choiceOfPool(created)
		note := ""
		if used.flexible() {
			note = " It was created empty: its hosts come up when a workload asks for them and flex-start capacity is found."
		}
		resp.Diagnostics.AddWarning("Slice Created on Fallback Capacity", fmt.Sprintf("raytpu_slice (%s) came up on %s, attempt %d; "+
			"GKE could not give it the earlier choices:%s\n\nTheir node pools were deleted.%s", id, used, len(failed)+1, b.String(), note))
	}
	resp.Diagnostics.Append(keepAccess(ctx, resp.Private, access)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}
