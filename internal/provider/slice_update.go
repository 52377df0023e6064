package provider

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// Update changes a slice in place wherever GKE can: its node version, boot disk and flex-start run
// duration (UpdateNodePool, which migrates the hosts), its labels, autoscaling and management. What
// GKE cannot change (the shape, the capacity it runs on, the service account and scopes) the plan
// replaces.
func (r *sliceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sliceResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, sliceTimeouts.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	id, _ := gke.ParseNodePoolID(state.ID.ValueString())
	client := r.client(ctx, fmt.Sprintf("updating raytpu_slice (%s)", id), &resp.Diagnostics)
	if client == nil {
		return
	}
	updates, diags := nodePoolUpdates(ctx, id, plan, state)
	managed := map[string]string{}
	if !state.Labels.IsNull() {
		diags.Append(state.Labels.ElementsAs(ctx, &managed, false)...)
	}
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var mutations []func(context.Context) (*containerpb.Operation, error)
	for _, update := range updates {
		mutations = append(mutations, func(ctx context.Context) (*containerpb.Operation, error) {
			// A RayCluster's claim on the slice, and labels others set, stay whatever the update sends.
			if err := keepOthersLabels(ctx, client, update, managed); err != nil {
				return nil, err
			}
			return client.UpdateNodePool(ctx, update)
		})
	}
	// Flex-start capacity autoscales whatever the setting says.
	running := runningChoice(ctx, state)
	if want := plan.Autoscaling.ValueBool() || running.flexible(); want != (state.Autoscaling.ValueBool() || running.flexible()) {
		autoscaling := &containerpb.NodePoolAutoscaling{Enabled: false}
		if want {
			autoscaling = sliceAutoscaling(int(plan.NumHosts.ValueInt64()), false)
		}
		mutations = append(mutations, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.SetNodePoolAutoscaling(ctx, id, autoscaling)
		})
	}
	if !plan.AutoRepair.Equal(state.AutoRepair) || !plan.AutoUpgrade.Equal(state.AutoUpgrade) {
		management := &containerpb.NodeManagement{AutoRepair: plan.AutoRepair.ValueBool(), AutoUpgrade: plan.AutoUpgrade.ValueBool()}
		mutations = append(mutations, func(ctx context.Context) (*containerpb.Operation, error) {
			return client.SetNodePoolManagement(ctx, id, management)
		})
	}
	for _, start := range mutations {
		if err := mutateNodePool(ctx, client, id, start); err != nil {
			resp.Diagnostics.AddError("Error Updating Slice", fmt.Sprintf("updating raytpu_slice (%s): %s", id, gke.WithAdvice(err)))
			return
		}
	}
	// Ray settings, waits and capacity choices not taken live in Terraform only; the live attributes
	// keep their refreshed values.
	plan.ID = state.ID
	plan.Hosts, plan.ReadyHosts, plan.Status, plan.Healthy = state.Hosts, state.ReadyHosts, state.Status, state.Healthy
	plan.FailedHosts = state.FailedHosts
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// nodePoolUpdates are the UpdateNodePool requests that bring the pool from state to plan, one per
// concern, as the google provider sends them: the node version alone (an upgrade), the boot disk
// (a migration of the hosts), the flex-start run duration, and the labels.
func nodePoolUpdates(ctx context.Context, id gke.NodePoolID, plan, state sliceResourceModel) ([]*containerpb.UpdateNodePoolRequest, diag.Diagnostics) {
	var diags diag.Diagnostics
	var updates []*containerpb.UpdateNodePoolRequest
	request := func() *containerpb.UpdateNodePoolRequest {
		return &containerpb.UpdateNodePoolRequest{Name: id.String()}
	}
	if v := plan.CurrentNodeVersion; !v.IsNull() && !v.IsUnknown() && !v.Equal(state.CurrentNodeVersion) {
		u := request()
		u.NodeVersion = v.ValueString()
		updates = append(updates, u)
	}
	disk := request()
	if v := plan.DiskSizeGB; !v.IsNull() && !v.IsUnknown() && !v.Equal(state.DiskSizeGB) {
		disk.DiskSizeGb = v.ValueInt64()
	}
	if v := plan.DiskType; !v.IsNull() && !v.IsUnknown() && !v.Equal(state.DiskType) {
		disk.DiskType = v.ValueString()
	}
	if disk.DiskSizeGb != 0 || disk.DiskType != "" {
		updates = append(updates, disk)
	}
	if runningChoice(ctx, state).flexible() && !plan.MaxRunDuration.IsNull() && !sameDuration(plan.MaxRunDuration, state.MaxRunDuration) {
		if d, err := time.ParseDuration(plan.MaxRunDuration.ValueString()); err == nil {
			u := request()
			u.MaxRunDuration = durationpb.New(d)
			updates = append(updates, u)
		}
	}
	labels := request()
	if !plan.Labels.Equal(state.Labels) {
		values := map[string]string{}
		diags.Append(plan.Labels.ElementsAs(ctx, &values, false)...)
		labels.Labels = &containerpb.NodeLabels{Labels: values}
	}
	if !plan.ResourceLabels.Equal(state.ResourceLabels) {
		values := map[string]string{}
		diags.Append(plan.ResourceLabels.ElementsAs(ctx, &values, false)...)
		labels.ResourceLabels = &containerpb.ResourceLabels{Labels: values}
	}
	if labels.Labels != nil || labels.ResourceLabels != nil {
		updates = append(updates, labels)
	}
	return updates, diags
}
