package provider

import (
	"context"
	"maps"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// The Kubernetes labels of a node pool have two writers: raytpu_slice (its labels attribute) and
// raytpu_ray_cluster (the claim labels, raytpu.dev/ray-*, that hold a worker group to its slices:
// kube.SliceClaim). An update sends the pool's whole label map, so each writer reads the pool's
// labels and changes only its own, under the pool's lock.

// editNodeLabels replaces the pool's Kubernetes labels with edit(current labels), if that changes
// them, and waits for GKE to update the nodes (in place: GKE's "Update Kubernetes node labels and
// taints for node pools"). A pool that does not exist gives GKE's NotFound.
func editNodeLabels(ctx context.Context, client *gke.Client, id gke.NodePoolID, edit func(map[string]string) map[string]string) error {
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	pool, err := client.GetNodePool(ctx, id)
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

// keepClaim adds to an update of a slice's own labels the claim its pool has. The caller holds
// the pool's lock.
func keepClaim(ctx context.Context, client *gke.Client, update *containerpb.UpdateNodePoolRequest) error {
	if update.Labels == nil {
		return nil
	}
	id, err := gke.ParseNodePoolID(update.Name)
	if err != nil {
		return err
	}
	pool, err := client.GetNodePool(ctx, id)
	if err != nil {
		return err
	}
	labels := maps.Clone(update.Labels.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range pool.GetConfig().GetLabels() {
		if kube.IsClaimLabel(k) {
			labels[k] = v
		}
	}
	update.Labels = &containerpb.NodeLabels{Labels: labels}
	return nil
}
