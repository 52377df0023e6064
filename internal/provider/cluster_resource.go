package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

var (
	_ resource.ResourceWithConfigure   = (*clusterResource)(nil)
	_ resource.ResourceWithImportState = (*clusterResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterResource)(nil)
)

// NewClusterResource returns raytpu_cluster: a GKE Standard cluster with the Ray Operator add-on.
func NewClusterResource() resource.Resource {
	return clusterResourceWithIdentity{&clusterResource{}}
}

type clusterResource struct {
	resourceBase
}

// clusterTimeouts are the defaults of the timeouts block, which the resource page lists.
var clusterTimeouts = OperationTimeouts{Create: 90 * time.Minute, Update: 90 * time.Minute, Delete: 60 * time.Minute}

func (r *clusterResource) DefaultTimeouts() OperationTimeouts { return clusterTimeouts }

func (r *clusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, clusterTimeouts.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id := plan.clusterID()
	client := r.client(ctx, fmt.Sprintf("creating raytpu_cluster (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	cluster, diags := expandCluster(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if !plan.MinMasterVersion.IsNull() {
		// The exact version the plan checked (or, if the location's offer was unreadable then, now).
		version, err := r.resolveMasterVersion(ctx, client, plan)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("min_master_version"), "Unsupported GKE Version", fmt.Sprintf("creating raytpu_cluster (%s): %s.", id, err))
		}
		cluster.InitialClusterVersion = version
	}
	if resp.Diagnostics.HasError() {
		return
	}
	unlock, err := client.LockCluster(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Error Creating Cluster", fmt.Sprintf("creating raytpu_cluster (%s): %s", id, err))
		return
	}
	defer unlock()
	op, err := client.CreateCluster(ctx, id, cluster)
	if gke.IsAlreadyExists(err) {
		op, err = adoptCluster(ctx, client, id, cluster, err)
	}
	if err != nil {
		resp.Diagnostics.AddError("Error Creating Cluster", fmt.Sprintf("creating raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
		return
	}
	// GKE accepted the cluster: record it now, so that a failed or interrupted wait leaves it in
	// state (tainted) instead of leaking it.
	plan.ID = types.StringValue(id.String())
	plan.setUnknownComputedToNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	// An adopted cluster whose creation is already over has no operation left to wait for.
	if op != nil {
		if err := client.WaitForOperation(ctx, id, op); err != nil {
			resp.Diagnostics.AddError("Error Creating Cluster", fmt.Sprintf("waiting for raytpu_cluster (%s) creation: %s", id, gke.WithAdvice(err)))
			return
		}
	}
	unlock()
	resp.Diagnostics.Append(r.refresh(ctx, client, &plan, plan.WaitForKubeRay.ValueBool(), gke.Fresh)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state clusterResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.client(ctx, fmt.Sprintf("reading raytpu_cluster (%s)", state.ID.ValueString()), &resp.Diagnostics)
	if client == nil {
		return
	}
	diags := r.refresh(ctx, client, &state, false)
	if state.ID.IsNull() {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, clusterTimeouts.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id := state.clusterID()
	client := r.client(ctx, fmt.Sprintf("updating raytpu_cluster (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	var updates []*containerpb.ClusterUpdate
	var addonsUpdate *containerpb.ClusterUpdate
	if !plan.RayOperator.Equal(state.RayOperator) || !plan.SliceController.Equal(state.SliceController) {
		addons, diags := expandAddons(ctx, plan)
		resp.Diagnostics.Append(diags...)
		addonsUpdate = &containerpb.ClusterUpdate{DesiredAddonsConfig: addons}
	}
	// The slice controller needs the Rapid channel and version it may be moving to: turned on, it
	// goes after them.
	enablingSlices := plan.SliceController.ValueBool() && !state.SliceController.ValueBool()
	if addonsUpdate != nil && !enablingSlices {
		updates = append(updates, addonsUpdate)
	}
	if !plan.ReleaseChannel.Equal(state.ReleaseChannel) {
		updates = append(updates, &containerpb.ClusterUpdate{DesiredReleaseChannel: expandReleaseChannel(plan.ReleaseChannel)})
	}
	if !plan.WorkloadIdentity.Equal(state.WorkloadIdentity) {
		updates = append(updates, &containerpb.ClusterUpdate{DesiredWorkloadIdentityConfig: expandWorkloadIdentity(plan)})
	}
	if r.belowMinimum(plan, state) {
		// A minimum: a control plane GKE has already taken past it stays where it is.
		version, err := r.resolveMasterVersion(ctx, client, plan)
		switch {
		case err != nil:
			resp.Diagnostics.AddAttributeError(path.Root("min_master_version"), "Unsupported GKE Version", fmt.Sprintf("updating raytpu_cluster (%s): %s.", id, err))
		case olderThan(state.MasterVersion.ValueString(), version):
			updates = append(updates, &containerpb.ClusterUpdate{DesiredMasterVersion: version})
		}
	}
	if addonsUpdate != nil && enablingSlices {
		updates = append(updates, addonsUpdate)
	}
	// After a version change: node auto-provisioning of a generation needs a minimum GKE version.
	if !plan.AutoProvisioning.Equal(state.AutoProvisioning) {
		desired, diags := expandAutoProvisioning(ctx, plan.AutoProvisioning)
		resp.Diagnostics.Append(diags...)
		current, err := client.GetCluster(ctx, id, gke.Fresh) // the update is computed from it
		if err != nil {
			resp.Diagnostics.AddError("Error Updating Cluster", fmt.Sprintf("reading the autoscaling of raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
			return
		}
		updates = append(updates, &containerpb.ClusterUpdate{DesiredClusterAutoscaling: mergeAutoProvisioning(current.GetAutoscaling(), desired)})
	}
	if resp.Diagnostics.HasError() {
		return
	}
	for _, update := range updates {
		if err := mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.UpdateCluster(ctx, id, update)
		}); err != nil {
			resp.Diagnostics.AddError("Error Updating Cluster", fmt.Sprintf("updating raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	if !plan.ResourceLabels.Equal(state.ResourceLabels) {
		labels := map[string]string{}
		resp.Diagnostics.Append(plan.ResourceLabels.ElementsAs(ctx, &labels, false)...)
		cluster, err := client.GetCluster(ctx, id, gke.Fresh) // for the fingerprint the write must carry
		if err == nil {
			err = mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
				return client.SetResourceLabels(ctx, id, labels, cluster.GetLabelFingerprint())
			})
		}
		if err != nil {
			resp.Diagnostics.AddError("Error Updating Cluster", fmt.Sprintf("updating resource labels of raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	if !plan.SystemPool.Equal(state.SystemPool) {
		resp.Diagnostics.Append(updateSystemPool(ctx, client, id, plan.SystemPool, state.SystemPool)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if !plan.MaintenancePolicy.Equal(state.MaintenancePolicy) {
		resp.Diagnostics.Append(updateMaintenancePolicy(ctx, client, id, plan)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	plan.ID = state.ID
	// Fresh: a write to the system pool alone keeps the cluster's shared read, pools and all.
	resp.Diagnostics.Append(r.refresh(ctx, client, &plan, plan.WaitForKubeRay.ValueBool(), gke.Fresh)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.clusterID()
	if state.DeletionProtection.ValueBool() {
		resp.Diagnostics.AddError("Cluster Deletion Protected",
			fmt.Sprintf("raytpu_cluster (%s) has deletion_protection = true, so it was not deleted. To delete it, set "+
				"deletion_protection = false, run apply, then destroy (or remove the resource) again.", id))
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, clusterTimeouts.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	client := r.client(ctx, fmt.Sprintf("deleting raytpu_cluster (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	err := mutateCluster(ctx, client, id, func(ctx context.Context) (*containerpb.Operation, error) {
		return client.DeleteCluster(ctx, id)
	})
	if err != nil && !gke.IsNotFound(err) {
		resp.Diagnostics.AddError("Error Deleting Cluster", fmt.Sprintf("deleting raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
	}
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := gke.ParseClusterImportID(req.ID, r.defaultProject())
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, clusterAdoptedAttributes(id))
}

// clusterAdoptedAttributes are what an import of the cluster id records before Read: the id and
// the defaults of the settings that live only in Terraform.
func clusterAdoptedAttributes(id gke.ClusterID) map[string]any {
	return map[string]any{
		"id": id.String(), "name": id.Name, "project": id.Project, "location": id.Location,
		"deletion_protection": true, "wait_for_kuberay": true,
	}
}

// refresh reads the cluster into m (as read asks: gke.Fresh after a write) and, with
// waitForKubeRay, waits for the KubeRay CRDs. A cluster that no longer exists leaves m.ID null.
func (r *clusterResource) refresh(ctx context.Context, client *gke.Client, m *clusterResourceModel, waitForKubeRay bool, read ...gke.ReadOption) diag.Diagnostics {
	var diags diag.Diagnostics
	id := m.clusterID()
	cluster, err := client.GetCluster(ctx, id, read...)
	if gke.IsNotFound(err) {
		m.ID = types.StringNull()
		return diags
	}
	if err != nil {
		diags.AddError("Error Reading Cluster", fmt.Sprintf("reading raytpu_cluster (%s): %s", id, gke.WithAdvice(err)))
		return diags
	}
	return readCluster(ctx, client, cluster, m, waitForKubeRay)
}

// readCluster copies cluster, as GKE just reported it, into m, with the state of its KubeRay CRDs
// (waited for with waitForKubeRay).
func readCluster(ctx context.Context, client *gke.Client, cluster *containerpb.Cluster, m *clusterResourceModel, waitForKubeRay bool) diag.Diagnostics {
	var diags diag.Diagnostics
	id := m.clusterID()
	diags.Append(flattenCluster(ctx, cluster, m)...)
	readSystemPool(ctx, client, cluster, m)
	switch cluster.GetStatus() {
	case containerpb.Cluster_ERROR, containerpb.Cluster_DEGRADED:
		var conditions []string
		for _, c := range cluster.GetConditions() {
			conditions = append(conditions, c.GetMessage())
		}
		diags.AddWarning("Cluster Unhealthy", fmt.Sprintf("raytpu_cluster (%s) is %s: %s", id, cluster.GetStatus(), strings.Join(conditions, "; ")))
	}
	kubeRay, d := kubeRayState(ctx, client, cluster, waitForKubeRay, kubePollInterval, "raytpu_cluster ("+id.String()+")")
	diags.Append(d...)
	m.KubeRay = kubeRay
	return diags
}

// belowMinimum reports whether an update must look for a control plane version: min_master_version
// or the release channel changed, and the control plane does not meet min_master_version.
func (r *clusterResource) belowMinimum(plan, state clusterResourceModel) bool {
	if plan.MinMasterVersion.IsNull() || (plan.MinMasterVersion.Equal(state.MinMasterVersion) && plan.ReleaseChannel.Equal(state.ReleaseChannel)) {
		return false
	}
	minimum, err := tpu.ParseVersion(plan.MinMasterVersion.ValueString())
	return err != nil || !meetsMinimum(state.MasterVersion.ValueString(), minimum)
}

// olderThan reports whether the exact version current is older than want; an unreadable current
// version counts as older, so that the update is asked for and GKE decides.
func olderThan(current, want string) bool {
	c, err1 := tpu.ParseVersion(current)
	w, err2 := tpu.ParseVersion(want)
	return err1 != nil || err2 != nil || !c.IsExact() || c.Less(w)
}
