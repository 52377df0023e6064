package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// A create whose response is lost is retried, and the retry meets 409 ALREADY_EXISTS: the object
// was created by the first attempt. Refusing it would leave the object outside state; taking over
// any object of that name would steal one that another configuration manages. So an object is
// adopted only when a retry of this very create found it (gke.AlreadyCreatedError) and it is what
// the create asked for; otherwise the error says how to import it.

// adoptNodePool answers a CreateNodePool of requested refused with createErr because the pool
// exists. When the pool is this create's own, it returns the pool's creation operation if it still
// runs (nil when it is done); otherwise an error naming the import to run.
func adoptNodePool(ctx context.Context, client *gke.Client, id gke.NodePoolID, requested *containerpb.NodePool, createErr error) (*containerpb.Operation, error) {
	existing, err := client.GetNodePool(ctx, id, gke.Fresh)
	if err != nil {
		return nil, createErr
	}
	var lost *gke.AlreadyCreatedError
	diff := nodePoolDifference(requested, existing)
	if !errors.As(createErr, &lost) || diff != "" {
		return nil, alreadyExists("node pool", "raytpu_slice", id.String(), diff)
	}
	return client.RunningOperation(ctx, id.Cluster, id.String(), containerpb.Operation_CREATE_NODE_POOL)
}

// adoptCluster is adoptNodePool for CreateCluster.
func adoptCluster(ctx context.Context, client *gke.Client, id gke.ClusterID, requested *containerpb.Cluster, createErr error) (*containerpb.Operation, error) {
	existing, err := client.GetCluster(ctx, id, gke.Fresh) // what the lost create made, if anything
	if err != nil {
		return nil, createErr
	}
	var lost *gke.AlreadyCreatedError
	diff := clusterDifference(requested, existing)
	if !errors.As(createErr, &lost) || diff != "" {
		return nil, alreadyExists("cluster", "raytpu_cluster", id.String(), diff)
	}
	return client.RunningOperation(ctx, id, id.String(), containerpb.Operation_CREATE_CLUSTER)
}

func alreadyExists(kind, resourceType, id, diff string) error {
	why := "raytpu did not create it in this apply"
	if diff != "" {
		why = "it is not the one this configuration describes: " + diff
	}
	return fmt.Errorf("a %s named %s already exists, and %s. To manage it with this configuration, import it "+
		"(terraform import <address of this %s> %s); otherwise choose another name", kind, id, why, resourceType, id)
}

// nodePoolDifference says how existing differs from requested in what a create sets and GKE reports
// back as it was sent; "" when it does not.
func nodePoolDifference(requested, existing *containerpb.NodePool) string {
	var diffs differences
	rc, ec := requested.GetConfig(), existing.GetConfig()
	diffs.add("machine type", rc.GetMachineType(), ec.GetMachineType())
	diffs.add("node count", requested.GetInitialNodeCount(), existing.GetInitialNodeCount())
	diffs.add("zones", sorted(requested.GetLocations()), sorted(existing.GetLocations()))
	diffs.add("version", requested.GetVersion(), existing.GetVersion())
	diffs.add("TPU topology", requested.GetPlacementPolicy().GetTpuTopology(), existing.GetPlacementPolicy().GetTpuTopology())
	diffs.add("workload policy", requested.GetPlacementPolicy().GetPolicyName(), existing.GetPlacementPolicy().GetPolicyName())
	diffs.add("spot", rc.GetSpot(), ec.GetSpot())
	diffs.add("queued provisioning", requested.GetQueuedProvisioning().GetEnabled(), existing.GetQueuedProvisioning().GetEnabled())
	diffs.add("flex-start", rc.GetFlexStart(), ec.GetFlexStart())
	diffs.add("reservation", sorted(rc.GetReservationAffinity().GetValues()), sorted(ec.GetReservationAffinity().GetValues()))
	return diffs.String()
}

// clusterDifference is nodePoolDifference for clusters: the settings raytpu_cluster creates a
// cluster with that GKE reports unchanged.
func clusterDifference(requested, existing *containerpb.Cluster) string {
	var diffs differences
	diffs.add("Ray Operator add-on", requested.GetAddonsConfig().GetRayOperatorConfig().GetEnabled(),
		existing.GetAddonsConfig().GetRayOperatorConfig().GetEnabled())
	diffs.add("release channel", requested.GetReleaseChannel().GetChannel().String(), existing.GetReleaseChannel().GetChannel().String())
	if v := requested.GetInitialClusterVersion(); v != "" {
		diffs.add("version", v, existing.GetInitialClusterVersion())
	}
	var want, have []string
	for _, p := range requested.GetNodePools() {
		want = append(want, p.GetName())
	}
	for _, p := range existing.GetNodePools() {
		have = append(have, p.GetName())
	}
	diffs.add("node pools", sorted(want), sorted(have))
	return diffs.String()
}

type differences []string

func (d *differences) add(what string, requested, existing any) {
	if fmt.Sprint(requested) != fmt.Sprint(existing) {
		*d = append(*d, fmt.Sprintf("%s %v requested, %v there", what, requested, existing))
	}
}

func (d differences) String() string { return strings.Join(d, "; ") }

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}
