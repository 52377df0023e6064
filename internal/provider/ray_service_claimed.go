package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// A RayService's slices can stay claimed after the configuration stopped listing them: an upgrade
// whose old RayCluster outlived the update's timeout, a release that failed, a slice moved in an
// apply that ended early. The state's configuration then no longer names them, so raytpu keeps
// every slice it claimed for the RayService in the resource's private state, and the next apply,
// or destroy, releases those no group lists any more, once no other RayCluster of the RayService
// is left to run on them. A refresh that finds one of them still claimed turns in_sync false.

// claimedSlicesKey is the private state key of the record: a JSON list of node pool ids.
const claimedSlicesKey = "claimed_slices"

type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// claimedSlices reads the record; a state without one (written before it was kept) has none.
func claimedSlices(ctx context.Context, p privateGetter) []gke.NodePoolID {
	if p == nil {
		return nil
	}
	raw, _ := p.GetKey(ctx, claimedSlicesKey)
	var ids []string
	if len(raw) == 0 || json.Unmarshal(raw, &ids) != nil {
		return nil
	}
	var out []gke.NodePoolID
	for _, s := range ids {
		if id, err := gke.ParseNodePoolID(s); err == nil {
			out = append(out, id)
		}
	}
	return out
}

func setClaimedSlices(ctx context.Context, p privateSetter, ids []gke.NodePoolID) diag.Diagnostics {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.String()
	}
	slices.Sort(names)
	raw, _ := json.Marshal(names)
	return p.SetKey(ctx, claimedSlicesKey, raw)
}

// releaseLeftSlices releases the slices of claimed that m no longer lists, once every RayCluster
// of the RayService but the one that serves is gone (KubeRay deletes one an upgrade replaced after
// its deletion delay), and returns the record to keep: m's slices once the others are released,
// claimed as it was otherwise.
func (r *rayServiceResource) releaseLeftSlices(ctx context.Context, m *rayServiceModel, claimed []gke.NodePoolID, diags *diag.Diagnostics) []gke.NodePoolID {
	keep := modelSlices(ctx, m.rayConfigModel)
	left := without(claimed, keep)
	if len(left) == 0 {
		return keep
	}
	action := "updating raytpu_ray_service (" + m.ID.ValueString() + ")"
	client, k, gone := r.kubeOf(ctx, m.ClusterID.ValueString(), action, diags)
	if gone || k == nil {
		return claimed
	}
	defer k.Close()
	namespace, name := m.Namespace.ValueString(), m.Name.ValueString()
	clusters, err := k.RayServiceClusters(ctx, namespace, name)
	if err != nil {
		diags.AddError("Slices Still Claimed", fmt.Sprintf("%s: %s", action, err))
		return claimed
	}
	for _, c := range clusters {
		if c == m.RayClusterName.ValueString() {
			continue
		}
		w := k.WatchRayCluster(ctx, namespace, c)
		err := w.WaitForGone(ctx)
		w.Close()
		if err != nil {
			diags.AddError("Slices Still Claimed", fmt.Sprintf("%s: RayCluster %s of the RayService, which may still run on slices no "+
				"worker group lists any more, was not gone within the update's timeout: %s. The next apply releases them.", action, c, err))
			return claimed
		}
	}
	if err := releaseSlices(ctx, client, namespace, kube.RayServiceClaimer(name), left); err != nil {
		diags.AddError("Slices Still Claimed", fmt.Sprintf("%s: %s. The next apply releases them.", action, err))
		return claimed
	}
	return keep
}

// stillClaimed is the first slice of claimed that m no longer lists and that still carries the
// RayService's claim, or "" when there is none (a pool gone or unreadable counts as released).
func stillClaimed(ctx context.Context, client *gke.Client, m rayConfigModel, claimed []gke.NodePoolID) string {
	ours := kube.SliceClaim{Namespace: m.Namespace.ValueString(), Cluster: kube.RayServiceClaimer(m.Name.ValueString())}
	for _, id := range without(claimed, modelSlices(ctx, m)) {
		pool, err := client.GetNodePool(ctx, id)
		if err != nil {
			continue
		}
		if held, ok := kube.ClaimOf(pool.GetConfig().GetLabels()); ok && held.SameRayCluster(ours) {
			return id.Name
		}
	}
	return ""
}
