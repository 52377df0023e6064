package provider

import (
	"context"
	"maps"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// The Kubernetes labels of a node pool have two writers in raytpu: raytpu_slice (its labels
// attribute) and raytpu_ray_cluster (the claim labels, raytpu.dev/ray-*, that hold a worker group
// to its slices: kube.SliceClaim); GKE and other tools may add their own. An update sends the
// pool's whole label map, so each writer reads the pool's labels and changes only its own, under
// the pool's lock.

// editNodeLabels replaces the pool's Kubernetes labels with edit(current labels), if that changes
// them, and waits for GKE to update the nodes (in place: GKE's "Update Kubernetes node labels and
// taints for node pools"). A pool that does not exist gives GKE's NotFound.
func editNodeLabels(ctx context.Context, client *gke.Client, id gke.NodePoolID, edit func(map[string]string) map[string]string) error {
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	pool, err := client.GetNodePool(ctx, id, gke.Fresh)
	if err != nil {
		return err
	}
	current := pool.GetConfig().GetLabels()
	next := edit(maps.Clone(current))
	if maps.Equal(current, next) {
		return nil
	}
	op, err := client.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: id.String(), Labels: &containerpb.NodeLabels{Labels: next}})
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id.Cluster, op)
}

// sliceOwnLabels are a pool's labels without raytpu_ray_cluster's claim: raytpu_slice's labels.
func sliceOwnLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !kube.IsClaimLabel(k) {
			out[k] = v
		}
	}
	return out
}

// configuredLabels are the labels of a pool that raytpu_slice's labels attribute holds: of the
// pool's labels, those whose keys the configuration wrote (written), with the pool's values, so
// that a label changed or removed outside Terraform shows in the plan, while one GKE or another
// tool adds does not (as terraform-provider-google keeps node_config.taint to the keys its state
// holds, flattenTaints, and suppresses the labels GKE Sandbox adds to node_config.labels). A
// slice not read yet (adopted: imported, moved, listed) has no configuration to go by: it takes
// every label but the claim.
func configuredLabels(ctx context.Context, labels map[string]string, written types.Map, adopted bool, diags *diag.Diagnostics) types.Map {
	own := sliceOwnLabels(labels)
	if !adopted {
		keys := map[string]string{}
		if !written.IsNull() && !written.IsUnknown() {
			diags.Append(written.ElementsAs(ctx, &keys, false)...)
		}
		maps.DeleteFunc(own, func(k, _ string) bool { _, wrote := keys[k]; return !wrote })
	}
	return mapOrNull(ctx, own, written, diags)
}

// keepOthersLabels adds to an update of a slice's labels the pool's labels that are not the
// slice's to change: a RayCluster's claim, and those GKE or another tool set, which the slice's
// configuration never held (managed, its labels before the update). The caller holds the pool's
// lock.
func keepOthersLabels(ctx context.Context, client *gke.Client, update *containerpb.UpdateNodePoolRequest, managed map[string]string) error {
	if update.Labels == nil {
		return nil
	}
	id, err := gke.ParseNodePoolID(update.Name)
	if err != nil {
		return err
	}
	pool, err := client.GetNodePool(ctx, id, gke.Fresh)
	if err != nil {
		return err
	}
	labels := maps.Clone(update.Labels.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range pool.GetConfig().GetLabels() {
		if _, mine := managed[k]; kube.IsClaimLabel(k) || !mine {
			if _, set := labels[k]; !set {
				labels[k] = v
			}
		}
	}
	update.Labels = &containerpb.NodeLabels{Labels: labels}
	return nil
}
