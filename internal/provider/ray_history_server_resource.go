package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ resource.ResourceWithConfigure   = (*rayHistoryServerResource)(nil)
	_ resource.ResourceWithImportState = (*rayHistoryServerResource)(nil)
)

// NewRayHistoryServerResource returns raytpu_ray_history_server: KubeRay's Ray History Server.
func NewRayHistoryServerResource() resource.Resource { return &rayHistoryServerResource{} }

type rayHistoryServerResource struct {
	resourceBase
}

// rayHistoryServerTimeouts are the defaults of the timeouts block, which the resource page lists.
var rayHistoryServerTimeouts = OperationTimeouts{Create: 10 * time.Minute, Update: 10 * time.Minute, Delete: 5 * time.Minute}

func (r *rayHistoryServerResource) DefaultTimeouts() OperationTimeouts {
	return rayHistoryServerTimeouts
}

func (r *rayHistoryServerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ray_history_server"
}

func (r *rayHistoryServerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rayHistoryServerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, rayHistoryServerTimeouts.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	plan.ID = types.StringValue(historyServerID(plan.ClusterID.ValueString(), plan.Namespace.ValueString(), plan.Name.ValueString()))
	r.apply(ctx, &plan, "creating", resp.State.Set, &resp.Diagnostics)
}

func (r *rayHistoryServerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan rayHistoryServerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, rayHistoryServerTimeouts.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	r.apply(ctx, &plan, "updating", resp.State.Set, &resp.Diagnostics)
}

// apply applies the server's objects, saves the state as soon as they exist (so that a server
// that never gets ready is not lost from state) and waits for its Pod to be ready.
func (r *rayHistoryServerResource) apply(ctx context.Context, plan *rayHistoryServerModel, verb string,
	save func(context.Context, any) diag.Diagnostics, diags *diag.Diagnostics) {
	action := verb + " raytpu_ray_history_server (" + plan.ID.ValueString() + ")"
	_, k, gone := r.kubeOf(ctx, plan.ClusterID.ValueString(), action, diags)
	if gone {
		diags.AddAttributeError(pathClusterID, "Cluster Not Found", fmt.Sprintf("%s: cluster %s does not exist.", action, plan.ClusterID.ValueString()))
	}
	if k == nil {
		return
	}
	defer k.Close()
	ns, name := plan.Namespace.ValueString(), plan.Name.ValueString()
	err := k.ApplyHistoryServer(ctx, kube.HistoryServer{
		Namespace: ns, Name: name, Bucket: plan.Bucket.ValueString(), GoogleServiceAccount: plan.GoogleServiceAccount.ValueString(),
		Image: plan.Image.ValueString(), CPU: plan.CPU.ValueString(), Memory: plan.Memory.ValueString(), MemoryLimit: plan.MemoryLimit.ValueString(),
	})
	if err != nil {
		diags.AddError("Error Applying History Server", fmt.Sprintf("%s: %s", action, err))
		return
	}
	setHistoryServerAddresses(plan)
	if diags.Append(save(ctx, plan)...); diags.HasError() {
		return
	}
	if _, err := k.WaitHistoryServerReady(ctx, ns, name, kubePollInterval); err != nil {
		diags.AddError("History Server Not Ready", fmt.Sprintf("%s: %s. Check its Pod with kubectl describe pods -n %s -l "+
			"app.kubernetes.io/instance=%s. %s", action, err, ns, name, nextApply(action)))
	}
}

func (r *rayHistoryServerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state rayHistoryServerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	action := "reading raytpu_ray_history_server (" + state.ID.ValueString() + ")"
	_, k := r.readKube(ctx, state.ClusterID.ValueString(), action, resp)
	if k == nil {
		return
	}
	defer k.Close()
	st, err := k.GetHistoryServer(ctx, state.Namespace.ValueString(), state.Name.ValueString())
	switch {
	case errors.Is(err, kube.ErrHistoryServerNotFound):
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Error Reading History Server", fmt.Sprintf("%s: %s", action, err))
		return
	}
	// What the cluster has is the truth: a change made outside Terraform shows in the next plan.
	state.Bucket, state.GoogleServiceAccount = types.StringValue(st.Bucket), types.StringValue(st.GoogleServiceAccount)
	// Quantities come back canonical ("500m" for "0.5"); the framework keeps the configured text of
	// the same quantity (quantityValue).
	state.Image, state.CPU, state.Memory = types.StringValue(st.Image), quantityOf(st.CPU), quantityOf(st.Memory)
	state.MemoryLimit = quantityOf(st.MemoryLimit)
	setHistoryServerAddresses(&state)
	if !st.RolledOut {
		resp.Diagnostics.AddWarning("History Server Not Ready", fmt.Sprintf("%s: %s.", action, st.Waiting))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *rayHistoryServerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state rayHistoryServerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, rayHistoryServerTimeouts.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	action := "deleting raytpu_ray_history_server (" + state.ID.ValueString() + ")"
	_, k, gone := r.kubeOf(ctx, state.ClusterID.ValueString(), action, &resp.Diagnostics)
	if gone || k == nil {
		return
	}
	defer k.Close()
	if err := k.DeleteHistoryServer(ctx, state.Namespace.ValueString(), state.Name.ValueString()); err != nil {
		resp.Diagnostics.AddError("Error Deleting History Server", fmt.Sprintf("%s: %s", action, err))
	}
}

// ImportState takes the ids parseNamespacedImportID accepts, with historyServers as the kind.
func (r *rayHistoryServerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, namespace, name, err := parseNamespacedImportID(req.ID, historyServersKind, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, map[string]any{
		"id": historyServerID(cluster.String(), namespace, name), "cluster_id": cluster.String(), "namespace": namespace, "name": name,
	})
}

const historyServersKind = "historyServers"

func historyServerID(cluster, namespace, name string) string {
	return cluster + "/" + historyServersKind + "/" + namespace + "/" + name
}

func setHistoryServerAddresses(m *rayHistoryServerModel) {
	ns, name := m.Namespace.ValueString(), m.Name.ValueString()
	port := strconv.Itoa(kube.HistoryServerPort)
	m.ServiceAccount = types.StringValue(name)
	m.Address = types.StringValue("http://" + name + "." + ns + ".svc.cluster.local:" + port)
	m.PortForward = types.StringValue("kubectl port-forward -n " + ns + " svc/" + name + " 8080:" + port)
}
