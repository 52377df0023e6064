package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var _ action.ActionWithConfigure = (*recreateSliceAction)(nil)

// NewRecreateSliceAction returns raytpu_recreate_slice: delete a slice's node pool and create it
// again with the same settings, as one unit.
func NewRecreateSliceAction() action.Action {
	return &recreateSliceAction{}
}

// A multi-host slice is repaired only as a whole: GKE creates and deletes its node pool
// atomically ("if GKE can't deploy one node in the slice, no nodes in the slice will be deployed")
// and cannot resize it (GKE, "About TPUs in GKE"), so a slice whose host failed is deleted and
// created again. For maintenance of TPU hosts in reservations GKE's documentation also has the
// node pool deleted, and recreated once the hosts are done ("Manage maintenance events with TPUs
// in All Capacity mode").
type recreateSliceAction struct {
	actionBase
}

const (
	recreateTimeout = time.Hour
	recreateSummary = "Error Recreating Slice"
)

func (a *recreateSliceAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_recreate_slice"
}

func (a *recreateSliceAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Deletes a slice's node pool and creates it again with the same settings (shape, version, capacity, " +
			"placement, labels, management), holding the node pool's lock throughout, then waits until every host is a Ready " +
			"Kubernetes node and reports the new hosts. This is how a multi-host slice whose host failed is repaired: GKE " +
			"repairs it only as a whole. A creation that fails deletes what GKE started, as `raytpu_slice` does; the slice is " +
			"then gone, and the next apply of its `raytpu_slice` creates it.",
		Attributes: map[string]actionschema.Attribute{
			"slice": sliceActionAttribute("to recreate"),
			"only_if_unhealthy": actionschema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Recreate the slice only when it is unhealthy: GKE reports its node pool other than `RUNNING`, " +
					"or a host is missing or not Ready. A healthy slice is left as it is. Default `false`: recreate it whatever its state.",
			},
			"host_wait_timeout": actionTimeoutAttribute("the new hosts", 10*time.Minute),
			"timeout":           actionTimeoutAttribute("the whole action", recreateTimeout),
		},
	}
}

func (a *recreateSliceAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	timeout, diags := actionTimeout(ctx, req.Config, "timeout", recreateTimeout)
	hostTimeout, d := actionTimeout(ctx, req.Config, "host_wait_timeout", 10*time.Minute)
	diags.Append(d...)
	var onlyIfUnhealthy types.Bool
	diags.Append(req.Config.GetAttribute(ctx, path.Root("only_if_unhealthy"), &onlyIfUnhealthy)...)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, diags := a.target(ctx, req.Config, recreateSummary, "recreating")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError(recreateSummary, fmt.Sprintf("recreating slice %s: ", t.id)+fmt.Sprintf(format, args...))
	}
	before, err := sliceHosts(ctx, t.client, t.access, t.pool)
	hostsBefore := hostList(before)
	if err != nil {
		hostsBefore = "not observable: " + err.Error()
	}
	if onlyIfUnhealthy.ValueBool() {
		if err != nil {
			fail("only_if_unhealthy: its hosts cannot be listed, so its health is unknown: %s", err)
			return
		}
		if poolHealthy(t.pool, before, poolHosts(t.pool)) {
			progress(resp, t.id, "healthy (%s, %d hosts Ready): left as it is", t.pool.GetStatus(), len(before))
			return
		}
	}
	request, err := recreateRequest(ctx, t.id, t.pool)
	if err != nil {
		fail("%s. Nothing was changed.", err)
		return
	}
	unlock, err := t.client.LockNodePool(ctx, t.id)
	if err != nil {
		fail("%s", err)
		return
	}
	defer unlock()
	progress(resp, t.id, "deleting the node pool (%s; hosts %s)", t.pool.GetStatus(), hostsBefore)
	if err := deleteNodePool(ctx, t.client, t.id); err != nil {
		fail("deleting the node pool: %s", gke.WithAdvice(err))
		return
	}
	progress(resp, t.id, "deleted; creating it again with the same settings")
	created := createNodePool(ctx, t.client, t.access, t.id, request, true, func() {})
	switch {
	case created.kept && created.cleanupErr != nil:
		fail("creating the node pool again: %s\n\nThe partly created node pool could not be deleted (%s): delete it, or apply its "+
			"raytpu_slice, which replaces it.", gke.WithAdvice(created.err), created.cleanupErr)
		return
	case created.kept:
		fail("%s\n\nGKE accepted the node pool: a refresh of its raytpu_slice reads it once it is up.", created.err)
		return
	case created.err != nil:
		fail("the node pool was deleted and could not be created again: %s\n\nNothing was left behind: the node pool GKE started "+
			"was deleted. The next apply of its raytpu_slice creates it.", gke.WithAdvice(created.err))
		return
	}
	unlock()
	if err := created.hosts.result(ctx, hostTimeout); err != nil {
		if !kube.CannotObserve(err) {
			fail("waiting for its %d hosts to be Ready Kubernetes nodes (host_wait_timeout %s after GKE created the node pool): %s",
				poolHosts(request), shortDuration(hostTimeout), err)
			return
		}
		resp.Diagnostics.AddWarning("Slice Hosts Not Observed", fmt.Sprintf("GKE reports %s created again, but its hosts cannot be "+
			"seen in the cluster's Kubernetes API from here: %s.", t.id, err))
	}
	after, err := sliceHosts(ctx, t.client, t.access, created.created)
	if err != nil {
		resp.Diagnostics.AddWarning("Slice Hosts Unknown", fmt.Sprintf("listing the hosts of %s: %s", t.id, err))
		return
	}
	progress(resp, t.id, "recreated: %s, new hosts %s", created.created.GetStatus(), hostList(after))
}

// recreateRequest is the CreateNodePool request raytpu_slice sends for the slice pool holds, so
// that the pool comes back as raytpu creates it, without what GKE added to its answer (the TPU
// taint, disable-legacy-endpoints metadata, bootDisk, effectiveCgroupMode, the pod range, goog-gke-*
// resource labels, status and links), which the old pool's answer holds and a create must not
// carry back. The action is given the node pool's id only: Terraform hands an action no resource's
// state, and GKE keeps no copy of raytpu_slice's configuration. So the slice is read from the pool
// as importing it reads it (flattenNodePool keeps the settings raytpu_slice has and leaves GKE's
// additions out) and built by raytpu_slice's own builder (expandNodePool), on the capacity the pool
// runs on. A RayCluster's claim on the slice (its raytpu.dev/ray-* labels) is kept, so that the
// worker group keeps its slice.
func recreateRequest(ctx context.Context, id gke.NodePoolID, pool *containerpb.NodePool) (*containerpb.NodePool, error) {
	s, err := nodePoolSlice(pool, nil)
	if err != nil {
		return nil, fmt.Errorf("node pool %s is not a TPU slice raytpu can describe (%s), so raytpu cannot tell what to create again", pool.GetName(), err)
	}
	m, diags := adoptedSliceModel(ctx, id)
	if !diags.HasError() {
		diags.Append(flattenNodePool(ctx, pool, &m)...)
	}
	var request *containerpb.NodePool
	if !diags.HasError() {
		var d diag.Diagnostics
		request, d = expandNodePool(ctx, m, s, choiceOfPool(pool))
		diags.Append(d...)
	}
	if diags.HasError() {
		return nil, fmt.Errorf("building the create request of node pool %s: %s", pool.GetName(), diagnosticsText(diags))
	}
	for k, v := range pool.GetConfig().GetLabels() {
		if kube.IsClaimLabel(k) {
			if request.Config.Labels == nil {
				request.Config.Labels = map[string]string{}
			}
			request.Config.Labels[k] = v
		}
	}
	return request, nil
}

// diagnosticsText is the errors of diags as one line.
func diagnosticsText(diags diag.Diagnostics) string {
	var texts []string
	for _, d := range diags.Errors() {
		texts = append(texts, d.Summary()+": "+d.Detail())
	}
	return strings.Join(texts, "; ")
}

func hostList(hosts []kube.Host) string {
	if len(hosts) == 0 {
		return "none"
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
		if !h.Ready {
			names[i] += " (not Ready)"
		}
	}
	return strings.Join(names, ", ")
}
