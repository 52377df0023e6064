package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// The slices of a worker group: their shape as GKE holds it, and the claim (kube.SliceClaim)
// that holds the group to exactly them: raytpu labels their nodes for the group before it applies
// the RayCluster, and takes the labels off a slice the group no longer has before it has the
// replicas there deleted: KubeRay makes a group's replicas again at once, and the scheduler could
// place one on a slice that still carries the group's claim.

// groupSlice is one slice of a worker group.
type groupSlice struct {
	id gke.NodePoolID
	// labels are the node pool's Kubernetes labels when it was read.
	labels map[string]string
}

func poolNames(slices []groupSlice) []string {
	out := make([]string, len(slices))
	for i, s := range slices {
		out[i] = s.id.Name
	}
	return out
}

// sliceGroupShape reads the node pools of a slices group (the ids of the list attribute at p) from
// GKE and returns their common shape and the slices. Pools of different shapes are an error: one worker group has one numOfHosts,
// selector and chip count, so a multislice group must be identical slices. With lenient, pools
// that do not exist yet are skipped (at plan time they may be created in the same apply).
func sliceGroupShape(ctx context.Context, client *gke.Client, group string, ids []string, p path.Path, lenient bool, diags *diag.Diagnostics) (*tpu.Slice, []groupSlice) {
	var (
		shape    *tpu.Slice
		shapeOf  string
		slices   []groupSlice
		failures bool
	)
	for k, raw := range ids {
		id, err := gke.ParseNodePoolID(raw)
		if err != nil {
			diags.AddAttributeError(p.AtListIndex(k), "Invalid Slice ID", err.Error()+", the id attribute of raytpu_slice.")
			failures = true
			continue
		}
		pool, err := client.GetNodePool(ctx, id)
		if err != nil {
			if lenient {
				continue
			}
			what := gke.WithAdvice(err)
			if gke.IsNotFound(err) {
				what = "the node pool does not exist (deleted outside Terraform? apply its raytpu_slice again)"
			}
			diags.AddAttributeError(p.AtListIndex(k), "Slice Not Available", fmt.Sprintf("reading slice %s: %s.", id, what))
			failures = true
			continue
		}
		if summary, why := capacityRefusal(pool, group); why != "" {
			diags.AddAttributeError(p.AtListIndex(k), summary, why)
			failures = true
			continue
		}
		s, err := tpu.SliceForNodePool(pool.GetConfig().GetMachineType(), pool.GetPlacementPolicy().GetTpuTopology())
		if err != nil {
			diags.AddAttributeError(p.AtListIndex(k), "Not A TPU Slice",
				fmt.Sprintf("node pool %s is not a TPU slice: %s. List raytpu_slice ids only.", id, err))
			failures = true
			continue
		}
		if shape != nil && !sameGroupShape(shape, s) {
			diags.AddAttributeError(p, "Multislice Group Mixes Shapes",
				fmt.Sprintf("slice %s is %s, but %s is %s: the slices of one worker group must be identical (one numOfHosts, node selector "+
					"and chip count). Put slices of other shapes in their own worker group.", id.Name, describeSlice(s), shapeOf, describeSlice(shape)))
			failures = true
			continue
		}
		if shape == nil {
			shape, shapeOf = s, id.Name
		}
		slices = append(slices, groupSlice{id: id, labels: pool.GetConfig().GetLabels()})
	}
	if failures {
		return nil, nil
	}
	return shape, slices
}

// sameGroupShape reports whether two slices can be replicas of one worker group: one numOfHosts,
// node selector and chip count.
func sameGroupShape(a, b *tpu.Slice) bool {
	return a.Generation == b.Generation && a.Topology == b.Topology && a.ChipsPerHost() == b.ChipsPerHost()
}

func describeSlice(s *tpu.Slice) string {
	return fmt.Sprintf("%s %s on %s (%d hosts)", s.Generation.Name, s.Topology, s.MachineType.Name, s.Hosts)
}

// capacityRefusal refuses a slice whose hosts come only when their capacity does, which a
// RayCluster's create cannot wait for. A queued slice's nodes "can be only obtained through
// queuing via the Cluster Autoscaler ProvisioningRequest API" (container v1
// NodePool.QueuedProvisioning.enabled; GKE, "Run a large-scale workload with flex-start with
// queued provisioning"), and raytpu_ray_cluster makes no ProvisioningRequest, so the create would
// wait until its timeout and be tainted. A flex-start slice's hosts come when capacity frees,
// possibly hours later, and a create that times out is tainted, and its replacement gives up the
// place in the queue.
func capacityRefusal(pool *containerpb.NodePool, group string) (summary, why string) {
	switch {
	case pool.GetQueuedProvisioning().GetEnabled():
		return "Queued Slice In A Worker Group", fmt.Sprintf("worker group %q: slice %s uses queued provisioning: GKE adds its nodes only "+
			"for an admitted ProvisioningRequest, which raytpu_ray_cluster does not make, so the workers would wait until the create "+
			"timed out. List slices of on-demand, spot or reserved capacity (queued_provisioning and flex_start unset) in slices, or "+
			"run the work through a ProvisioningRequest of your own (GKE's Dynamic Workload Scheduler, for example with Kueue).",
			group, pool.GetName())
	case pool.GetConfig().GetFlexStart():
		return "Flex-Start Slice In A Worker Group", fmt.Sprintf("worker group %q: slice %s is flex-start capacity: GKE brings its hosts "+
			"up when capacity frees, which may take hours, and a RayCluster create that times out is tainted and replaced, giving "+
			"up the place in the queue. List slices of on-demand, spot or reserved capacity in slices, or run the work as a Job "+
			"(or RayJob) of your own, whose Pods may wait for flex-start capacity.", group, pool.GetName())
	}
	return "", ""
}

// checkClaims refuses slices that a worker group of another RayCluster claims: a slice runs the
// replicas of one group. A slice claimed by another group of the same RayCluster moves to this
// one (the apply takes the other group's replica off it first).
func checkClaims(want kube.SliceClaim, slices []groupSlice, p path.Path, diags *diag.Diagnostics) {
	for k, s := range slices {
		if held, ok := kube.ClaimOf(s.labels); ok && !held.SameRayCluster(want) {
			diags.AddAttributeError(p.AtListIndex(k), "Slice Claimed By Another Worker Group",
				fmt.Sprintf("worker group %q cannot run on slice %s: it is claimed by %s (its nodes carry %s=%s). A slice runs the replicas "+
					"of one worker group: remove it from that RayCluster first, or give %q a slice of its own.",
					want.Group, s.id.Name, held, kube.ClaimGroupLabel, held.Group, want.Group))
		}
	}
}

// claimSlices labels each slice of a group for it, where it is not yet.
func claimSlices(ctx context.Context, client *gke.Client, claim kube.SliceClaim, slices []groupSlice) error {
	for _, s := range slices {
		if held, ok := kube.ClaimOf(s.labels); ok && held == claim {
			continue
		}
		if err := editNodeLabels(ctx, client, s.id, func(labels map[string]string) map[string]string {
			return kube.WithClaim(labels, &claim)
		}); err != nil {
			return fmt.Errorf("claiming slice %s for %s: %s", s.id.Name, claim, gke.WithAdvice(err))
		}
	}
	return nil
}

// releaseSlices takes the claims of the RayCluster (or RayService) namespace/claimer off the pools:
// slices it no longer runs on. A pool already gone, or claimed by another since, is left as it is.
func releaseSlices(ctx context.Context, client *gke.Client, namespace, claimer string, pools []gke.NodePoolID) error {
	ours := kube.SliceClaim{Namespace: namespace, Cluster: claimer}
	var errs []error
	for _, id := range pools {
		err := editNodeLabels(ctx, client, id, func(labels map[string]string) map[string]string {
			if held, ok := kube.ClaimOf(labels); ok && held.SameRayCluster(ours) {
				return kube.WithClaim(labels, nil)
			}
			return labels
		})
		if err != nil && !gke.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing slice %s: %s", id.Name, gke.WithAdvice(err)))
		}
	}
	return errors.Join(errs...)
}

// modelSlices are the slices, spares included, of every worker group of m.
func modelSlices(ctx context.Context, m rayConfigModel) []gke.NodePoolID {
	var groups []rayWorkerGroupModel
	if m.WorkerGroups.ElementsAs(ctx, &groups, false).HasError() {
		return nil
	}
	var out []gke.NodePoolID
	for _, g := range groups {
		ids, _ := knownStrings(ctx, g.Slices)
		spares, _ := knownStrings(ctx, g.SpareSlices)
		for _, raw := range append(ids, spares...) {
			if id, err := gke.ParseNodePoolID(raw); err == nil {
				out = append(out, id)
			}
		}
	}
	return out
}

// leftSlices are the slices of prior that no group of next has.
func leftSlices(ctx context.Context, prior, next rayConfigModel) []gke.NodePoolID {
	return without(modelSlices(ctx, prior), modelSlices(ctx, next))
}

// releasedSlices are the slices an update from prior to next releases: those no group of next has,
// and any other that a leaving replica runs on (one an earlier apply did not get to release).
func releasedSlices(ctx context.Context, prior, next rayConfigModel, leaving []kube.RayPod) []gke.NodePoolID {
	release := leftSlices(ctx, prior, next)
	cluster, err := gke.ParseClusterID(next.ClusterID.ValueString())
	if err != nil {
		return release
	}
	keep := modelSlices(ctx, next)
	for _, p := range leaving {
		if id := (gke.NodePoolID{Cluster: cluster, Name: p.NodePool}); p.NodePool != "" && !slices.Contains(keep, id) {
			release = union(release, []gke.NodePoolID{id})
		}
	}
	return release
}
