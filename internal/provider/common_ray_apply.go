package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// The steps of raytpu_ray_cluster's and raytpu_ray_service's create, read and delete that are the
// same for both: reaching the cluster, resolving and claiming the slices, reading an import back
// and releasing the slices.

// prepareRayApply gets what an apply of m needs: the GKE client, a Kubernetes client of the cluster
// with KubeRay serving (closed by the caller), and the RayCluster m resolves to, with the
// ServiceAccounts it names checked, that of its history_server made, and its slices claimed for it
// (claims naming what claimer says once the clients are had: rayKind.claimer, or a RayService's
// generation). A create is refused first when the name is taken by the other kind
// (checkNameFreeOfOtherKind). ok is false, with diags saying why, when any of it cannot be had.
func (b *resourceBase) prepareRayApply(ctx context.Context, m rayConfigModel, create bool, kind rayKind, claimer func(*gke.Client, *kube.Client) string, action string,
	diags *diag.Diagnostics) (client *gke.Client, k *kube.Client, spec kube.RayClusterSpec, groups []resolvedGroup, ok bool) {
	if client = b.client(ctx, action, diags); client == nil {
		return nil, nil, spec, nil, false
	}
	k, gone := b.kubeFor(ctx, client, m.ClusterID.ValueString(), true, action, diags)
	if gone {
		diags.AddError("Cluster Not Found", fmt.Sprintf("%s: cluster %s does not exist.", action, m.ClusterID.ValueString()))
	}
	if k == nil {
		return nil, nil, spec, nil, false
	}
	fail := func() (*gke.Client, *kube.Client, kube.RayClusterSpec, []resolvedGroup, bool) {
		k.Close()
		return nil, nil, kube.RayClusterSpec{}, nil, false
	}
	if create {
		checkNameFreeOfOtherKind(ctx, k, kind, m.Namespace.ValueString(), m.Name.ValueString(), action, diags)
		if diags.HasError() {
			return fail()
		}
	}
	claim := kube.SliceClaim{Cluster: claimer(client, k)}
	spec, groups = resolveRayConfig(ctx, client, m, claim.Cluster, diags)
	if diags.HasError() {
		return fail()
	}
	checkServiceAccounts(ctx, k, spec, action, diags)
	applyHistoryAccount(ctx, k, spec, claim.Owner(), action, diags)
	if diags.HasError() {
		return fail()
	}
	for _, g := range groups {
		if g.Claim == nil {
			continue
		}
		if err := claimSlices(ctx, client, *g.Claim, g.slices); err != nil {
			diags.AddError("Error Claiming Slices", fmt.Sprintf("%s: %s", action, err))
			return fail()
		}
	}
	return client, k, spec, groups, true
}

// kubeOf gets what a read or a delete needs: the GKE client and a Kubernetes client of the cluster
// clusterID (closed by the caller), KubeRay's CRDs not waited for. gone is true when the cluster
// does not exist; k is nil then, and when either client cannot be had (diags say why).
func (b *resourceBase) kubeOf(ctx context.Context, clusterID, action string, diags *diag.Diagnostics) (client *gke.Client, k *kube.Client, gone bool) {
	if client = b.client(ctx, action, diags); client == nil {
		return nil, nil, false
	}
	k, gone = b.kubeFor(ctx, client, clusterID, false, action, diags)
	return client, k, gone
}

// readKube is kubeOf for a Read: a cluster that is gone takes the resource out of the state. k is
// nil when there is nothing more to read.
func (b *resourceBase) readKube(ctx context.Context, clusterID, action string, resp *resource.ReadResponse) (client *gke.Client, k *kube.Client) {
	client, k, gone := b.kubeOf(ctx, clusterID, action, &resp.Diagnostics)
	if gone {
		resp.State.RemoveResource(ctx)
		return nil, nil
	}
	return client, k
}

// importRayConfig writes into m the configuration that raytpu kept in the annotations of the
// RayCluster or RayService it made (rayConfigAnnotation), for an import, and into out what it
// decides; false, with an error, when there is none.
func importRayConfig(ctx context.Context, annotations map[string]string, kind rayKind, m *rayConfigModel, out *rayOutputsModel,
	action string, diags *diag.Diagnostics) bool {
	var cfg rayConfig
	if err := json.Unmarshal([]byte(annotations[rayConfigAnnotation]), &cfg); err != nil {
		diags.AddError(kind.kind+" Not Managed By raytpu", fmt.Sprintf("%s: the %s has no valid %s annotation, so raytpu cannot tell "+
			"the configuration it was made from. Import only %ss that raytpu_%s created.", action, kind.kind, rayConfigAnnotation,
			kind.kind, kind.typeName()))
		return false
	}
	diags.Append(applyRayConfig(ctx, cfg, m)...)
	diags.Append(importHistoryServer(ctx, annotations, m)...)
	out.Ray = rayNamesObject(m.RayVersion)
	return true
}

// releaseClaims takes the claims of the RayCluster or RayService m off its slices, once its Pods
// are gone, warning when it cannot: the slices are then free for another worker group.
func releaseClaims(ctx context.Context, client *gke.Client, m rayConfigModel, kind rayKind, action string, diags *diag.Diagnostics) {
	err := releaseSlices(ctx, client, m.Namespace.ValueString(), kind.claimer(m.Name.ValueString()), modelSlices(ctx, m))
	if err != nil {
		diags.AddWarning("Slices Still Claimed", fmt.Sprintf("%s: the %s is deleted, but %s. Until the labels %s, %s and %s "+
			"are removed from those node pools, no other worker group can use them.", action, kind.kind, err,
			kube.ClaimNamespaceLabel, kube.ClaimClusterLabel, kube.ClaimGroupLabel))
	}
}
