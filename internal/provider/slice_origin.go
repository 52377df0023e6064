package provider

import (
	"strconv"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// GKE does not record who created a node pool, so the list resource tells the makers of TPU pools
// apart by the marks they leave on them.

// ownPoolMetadataKey marks the node pools raytpu creates: an instance metadata entry (NodeConfig
// metadata, "The metadata key/value pairs assigned to instances in the cluster", container v1),
// which GKE keeps as it was sent and which raytpu_slice neither reads nor updates, so the mark
// never shows in a plan. A slice recreated by raytpu_recreate_slice keeps it.
const ownPoolMetadataKey = "raytpu-slice"

// markOwnPool marks pool as created by raytpu.
func markOwnPool(pool *containerpb.NodePool) {
	if pool.Config == nil {
		pool.Config = &containerpb.NodeConfig{}
	}
	if pool.Config.Metadata == nil {
		pool.Config.Metadata = map[string]string{}
	}
	pool.Config.Metadata[ownPoolMetadataKey] = "true"
}

// Who made a node pool, as the list resource reports it.
const (
	madeByRaytpu = "raytpu"
	madeByNAP    = "GKE node auto-provisioning"
	madeByXPK    = "xpk"
)

// poolMaker says who made pool, of the cluster named cluster; "" when it carries no maker's mark,
// as pools made with gcloud, the console, the google provider or the API directly do not.
//   - raytpu: its own mark (ownPoolMetadataKey).
//   - node auto-provisioning: NodePoolAutoscaling.autoprovisioned, which GKE sets on the pools it
//     creates (container v1), named nap-<machine type>-<random> (cluster-autoscaler's
//     generateNewNodeGroupName).
//   - xpk: xpk names the node pools of a cluster <cluster>-np-<i> and takes the pools whose name
//     starts with <cluster>-np- for its own (AI-Hypercomputer/xpk@002d8ad
//     src/xpk/core/nodepool.py, get_desired_node_pool_names).
func poolMaker(cluster string, pool *containerpb.NodePool) string {
	switch {
	case pool.GetConfig().GetMetadata()[ownPoolMetadataKey] == "true":
		return madeByRaytpu
	case pool.GetAutoscaling().GetAutoprovisioned():
		return madeByNAP
	case isXPKPoolName(cluster, pool.GetName()):
		return madeByXPK
	}
	return ""
}

func isXPKPoolName(cluster, pool string) bool {
	index, ok := strings.CutPrefix(pool, cluster+"-np-")
	if !ok {
		return false
	}
	_, err := strconv.Atoi(index)
	return err == nil
}
