package provider

import (
	"context"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// deleteNodePool deletes a pool and waits; a pool already gone counts as deleted. The caller
// holds the pool's lock.
func deleteNodePool(ctx context.Context, client *gke.Client, id gke.NodePoolID) error {
	op, err := client.DeleteNodePool(ctx, id)
	if gke.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id.Cluster, op)
}

// mutateCluster runs one cluster-level mutation, alone on the cluster, and waits for its operation.
func mutateCluster(ctx context.Context, client *gke.Client, id gke.ClusterID, start func(context.Context) (*containerpb.Operation, error)) error {
	unlock, err := client.LockCluster(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	op, err := start(ctx)
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id, op)
}

// mutateNodePool runs one mutation of a node pool, beside those of the cluster's other pools, and
// waits for its operation.
func mutateNodePool(ctx context.Context, client *gke.Client, id gke.NodePoolID, start func(context.Context) (*containerpb.Operation, error)) error {
	unlock, err := client.LockNodePool(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	op, err := start(ctx)
	if err != nil {
		return err
	}
	return client.WaitForOperation(ctx, id.Cluster, op)
}
