package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*sliceResource)(nil)
	_ resource.ResourceWithImportState    = (*sliceResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sliceResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sliceResource)(nil)
)

// NewSliceResource returns raytpu_slice: one TPU slice as one GKE node pool.
func NewSliceResource() resource.Resource {
	return &sliceResource{}
}

type sliceResource struct {
	resourceBase
}

func (r *sliceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slice"
}

func (r *sliceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, 2*time.Hour, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	s, diags := resolveShape(plan.shape())
	resp.Diagnostics.Append(diags...)
	if s == nil || resp.Diagnostics.HasError() {
		return
	}
	clusterID, _ := gke.ParseClusterID(plan.Cluster.ValueString())
	id := gke.NodePoolID{Cluster: clusterID, Name: plan.Name.ValueString()}
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError("Error Creating Slice", fmt.Sprintf("creating raytpu_slice (%s): ", id)+fmt.Sprintf(format, args...))
	}
	client, err := r.data.gkeClient(ctx)
	if err != nil {
		fail("%s", err)
		return
	}
	cluster, err := r.data.cluster(ctx, client, clusterID)
	if err != nil {
		fail("reading the cluster: %s", gke.WithAdvice(err))
		return
	}
	// Resolved again here: at plan time the cluster may not have existed yet.
	version, d := r.resolveNodeVersion(ctx, client, clusterID, cluster, plan.NodeVersion, s, plan.QueuedProvisioning.ValueBool())
	resp.Diagnostics.Append(d...)
	if d.HasError() {
		return
	}
	plan.CurrentNodeVersion = types.StringValue(version)
	if plan.Zone.IsUnknown() || plan.Zone.IsNull() {
		zone, ok := clusterID.Zone()
		if !ok {
			resp.Diagnostics.AddAttributeError(path.Root("zone"), "Missing Zone",
				fmt.Sprintf("%s is a regional cluster: set zone to one of its zones that offers %s.", clusterID, s.Generation.DisplayName))
			return
		}
		plan.Zone = types.StringValue(zone)
	}
	pool, diags := expandNodePool(ctx, plan, s)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		fail("%s", err)
		return
	}
	defer unlock()
	op, err := client.CreateNodePool(ctx, id, pool)
	if gke.IsAlreadyExists(err) {
		op, err = adoptNodePool(ctx, client, id, pool, err)
	}
	if err != nil {
		fail("%s", gke.WithAdvice(err))
		return
	}
	// GKE accepted the pool: record it now, so that an interrupted wait leaves it in state.
	plan.ID = types.StringValue(id.String())
	plan.setLiveNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	// The hosts are watched while GKE creates the pool: their turning Ready is what tells the
	// wait that the pool is up, without polling the operation for it.
	access := accessOf(cluster)
	var hosts *hostWait
	var hostsUp <-chan struct{}
	if plan.WaitForHosts.ValueBool() && !plan.QueuedProvisioning.ValueBool() {
		hosts = startHostWait(ctx, client, access, id.Name, s.Hosts)
		defer hosts.stop()
		hostsUp = hosts.done
	}
	created, err := client.WaitForNodePoolCreation(ctx, id, op, hostsUp)
	if err != nil {
		var opErr *gke.OperationError
		if !errors.As(err, &opErr) {
			fail("waiting for the node pool: %s%s", gke.WithAdvice(err), keptInState)
			return
		}
		hosts.stop()
		// Atomic: a failed creation may leave a pool in ERROR; delete it before reporting.
		cleanup := deleteNodePool(ctx, client, id)
		if cleanup != nil {
			fail("%s\n\nThe partly created node pool could not be deleted (%s); it stays in state and the next apply replaces it.", gke.WithAdvice(err), cleanup)
			return
		}
		resp.State.RemoveResource(ctx)
		fail("%s\n\nNothing was left behind: the node pool GKE started was deleted.", gke.WithAdvice(err))
		return
	}
	unlock()
	if created.GetStatus() == containerpb.NodePool_ERROR {
		// Only an adopted pool whose creation was already over gets here with an error.
		fail("the node pool was created in the ERROR state: %s%s", created.GetStatusMessage(), keptInState) //nolint:staticcheck // deprecated in the API, still reported by GKE
		return
	}
	timeout, _ := time.ParseDuration(plan.HostWaitTimeout.ValueString())
	observed := true
	if err := hosts.result(ctx, timeout); err != nil {
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
	resp.Diagnostics.Append(readPool(ctx, &plan, created, listed)...)
	resp.Diagnostics.Append(keepAccess(ctx, resp.Private, access)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *sliceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state sliceResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, _ := gke.ParseNodePoolID(state.ID.ValueString())
	what := fmt.Sprintf("reading raytpu_slice (%s)", id)
	client := r.client(ctx, what, &resp.Diagnostics)
	if client == nil {
		return
	}
	pool, err := client.GetNodePool(ctx, id)
	if gke.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Error Reading Slice", fmt.Sprintf("%s: %s", what, gke.WithAdvice(err)))
		return
	}
	// How to reach the cluster's API server is kept in private state, so that a refresh costs one
	// GKE call per slice; it is looked up again when it no longer works (credentials or IP
	// rotated) or is missing.
	access, kept, diags := privateAccess(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	lookUp := func() bool {
		cluster, err := r.data.cluster(ctx, client, id.Cluster)
		if err != nil || accessOf(cluster) == access {
			return false
		}
		access = accessOf(cluster)
		resp.Diagnostics.Append(keepAccess(ctx, resp.Private, access)...)
		return true
	}
	if !kept {
		lookUp()
	}
	hosts, err := sliceHosts(ctx, client, access, pool)
	if err != nil && kept && kube.CannotObserve(err) && lookUp() {
		hosts, err = sliceHosts(ctx, client, access, pool)
	}
	if err != nil {
		resp.Diagnostics.AddWarning("Slice Hosts Unknown", fmt.Sprintf("listing the hosts of raytpu_slice (%s): %s", id, err))
	}
	resp.Diagnostics.Append(readPool(ctx, &state, pool, hosts)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *sliceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, 30*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, _ := gke.ParseNodePoolID(state.ID.ValueString())
	client := r.client(ctx, fmt.Sprintf("updating raytpu_slice (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	update := &containerpb.UpdateNodePoolRequest{Name: id.String()}
	changed := false
	if !plan.Labels.Equal(state.Labels) {
		labels := map[string]string{}
		resp.Diagnostics.Append(plan.Labels.ElementsAs(ctx, &labels, false)...)
		update.Labels, changed = &containerpb.NodeLabels{Labels: labels}, true
	}
	if !plan.ResourceLabels.Equal(state.ResourceLabels) {
		labels := map[string]string{}
		resp.Diagnostics.Append(plan.ResourceLabels.ElementsAs(ctx, &labels, false)...)
		update.ResourceLabels, changed = &containerpb.ResourceLabels{Labels: labels}, true
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if changed {
		err := mutateNodePool(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.UpdateNodePool(ctx, update)
		})
		if err != nil {
			resp.Diagnostics.AddError("Error Updating Slice", fmt.Sprintf("updating raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	// Ray settings and waits live in Terraform only; the live attributes keep their refreshed values.
	plan.ID = state.ID
	plan.Hosts, plan.ReadyHosts, plan.Status, plan.Healthy = state.Hosts, state.ReadyHosts, state.Status, state.Healthy
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *sliceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state sliceResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, time.Hour, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, err := gke.ParseNodePoolID(state.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice: %s", err))
		return
	}
	client := r.client(ctx, fmt.Sprintf("deleting raytpu_slice (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, err))
		return
	}
	defer unlock()
	if err := deleteNodePool(ctx, client, id); err != nil {
		resp.Diagnostics.AddError("Error Deleting Slice", fmt.Sprintf("deleting raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
	}
}

func (r *sliceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := gke.ParseNodePoolImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, map[string]any{
		"id": id.String(), "cluster": id.Cluster.String(), "name": id.Name,
		"wait_for_hosts": true, "host_wait_timeout": "10m", "replace_unhealthy": false,
	})
}

// sliceHosts lists the hosts of pool, as it runs (nil, nil while GKE has not created it yet).
func sliceHosts(ctx context.Context, client *gke.Client, access clusterAccess, pool *containerpb.NodePool) ([]kube.Host, error) {
	switch pool.GetStatus() {
	case containerpb.NodePool_RUNNING, containerpb.NodePool_RUNNING_WITH_ERROR, containerpb.NodePool_RECONCILING:
	default:
		return []kube.Host{}, nil
	}
	k, err := kubeClient(client, access)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return k.SliceHosts(ctx, pool.GetName())
}

// readPool copies pool, as GKE just reported it, into m, with its hosts as listed: nil when they
// could not be listed, which leaves hosts, ready_hosts and healthy unknown (null) rather than
// reporting a healthy slice as broken.
func readPool(ctx context.Context, m *sliceResourceModel, pool *containerpb.NodePool, hosts []kube.Host) diag.Diagnostics {
	diags := flattenNodePool(ctx, pool, m)
	if diags.HasError() {
		return diags
	}
	m.Status = types.StringValue(pool.GetStatus().String())
	if hosts == nil {
		m.Hosts, m.ReadyHosts, m.Healthy = types.ListNull(types.StringType), types.Int64Null(), types.BoolNull()
		return diags
	}
	names := make([]string, len(hosts))
	ready := 0
	for i, h := range hosts {
		names[i] = h.Name
		if h.Ready {
			ready++
		}
	}
	list, d := types.ListValueFrom(ctx, types.StringType, names)
	diags.Append(d...)
	m.Hosts = list
	m.ReadyHosts = types.Int64Value(int64(ready))
	wantHosts := m.NumHosts.ValueInt64()
	if m.QueuedProvisioning.ValueBool() {
		wantHosts = int64(len(hosts))
	}
	m.Healthy = types.BoolValue(pool.GetStatus() == containerpb.NodePool_RUNNING && int64(ready) == wantHosts)
	return diags
}
