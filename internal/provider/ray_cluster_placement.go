package provider

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// groupExpectation is what one worker group should run: replicas slices of hosts Pods each,
// on pools (empty: any pool of the shape, as node auto-provisioning names them).
type groupExpectation struct {
	replicas, hosts int
	// pools are the group's own slices, spares included; avoid are the slices of the other groups, which a group of
	// a shape keeps off.
	pools, avoid []string
}

// expectationsOf reads them from the RayCluster as stored: the replicas and numOfHosts of each
// group, and its slices from the configuration raytpu applied it from.
func expectationsOf(rc *rayv1.RayCluster) map[string]groupExpectation {
	var cfg rayConfig
	_ = json.Unmarshal([]byte(rc.Annotations[rayConfigAnnotation]), &cfg)
	pools := map[string][]string{}
	var claimed []string
	for _, g := range cfg.Groups {
		for _, raw := range append(g.Slices, g.SpareSlices...) {
			if id, err := gke.ParseNodePoolID(raw); err == nil {
				pools[g.Name] = append(pools[g.Name], id.Name)
				claimed = append(claimed, id.Name)
			}
		}
	}
	out := make(map[string]groupExpectation, len(rc.Spec.WorkerGroupSpecs))
	for _, g := range rc.Spec.WorkerGroupSpecs {
		e := groupExpectation{hosts: int(max(g.NumOfHosts, 1)), replicas: 1, pools: pools[g.GroupName]}
		if g.Replicas != nil {
			e.replicas = int(*g.Replicas)
		}
		if len(e.pools) == 0 {
			e.avoid = claimed
		}
		out[g.GroupName] = e
	}
	return out
}

// allRunning reports whether the head and every expected worker run.
func allRunning(pods []kube.RayPod, want map[string]groupExpectation) bool {
	head := false
	running := map[string]int{}
	for _, p := range pods {
		switch {
		case p.Head:
			head = head || p.Running
		case p.Running:
			running[p.Group]++
		}
	}
	if !head {
		return false
	}
	for name, e := range want {
		if running[name] < e.replicas*e.hosts {
			return false
		}
	}
	return true
}

// waitingGroups says, for each worker group not all running, how many of its Pods run and which
// slices it may run on.
func waitingGroups(pods []kube.RayPod, want map[string]groupExpectation) string {
	running := map[string]int{}
	for _, p := range pods {
		if !p.Head && p.Running {
			running[p.Group]++
		}
	}
	var out strings.Builder
	for _, name := range sortedKeys(want) {
		e := want[name]
		if running[name] >= e.replicas*e.hosts {
			continue
		}
		where := "a free node pool of its shape that no worker group claims, or one node auto-provisioning creates"
		if len(e.pools) > 0 {
			where = "its slices " + strings.Join(e.pools, ", ") + " (held by node selector)"
		}
		fmt.Fprintf(&out, "Worker group %q: %d of %d Pods running (%d replicas of %d hosts), waiting for %s. ",
			name, running[name], e.replicas*e.hosts, e.replicas, e.hosts, where)
	}
	return out.String()
}

// placementProblems checks that every replica of every group sits on distinct hosts of one slice
// (one node pool): ICI links only the hosts of a slice, so a replica split over two pools cannot
// run its collectives. A slices group must also use its own slices, one replica per slice.
// Pods not yet scheduled are left to the caller's wait.
func placementProblems(pods []kube.RayPod, want map[string]groupExpectation) []string {
	var problems []string
	replicas := replicasOf(pods)
	for _, group := range sortedKeys(replicas) {
		e, known := want[group]
		poolOwner := map[string]string{}
		for _, replica := range sortedKeys(replicas[group]) {
			hosts := replicas[group][replica]
			pools, nodes := map[string]bool{}, map[string]bool{}
			for _, p := range hosts {
				if p.Node == "" {
					continue
				}
				if nodes[p.Node] {
					problems = append(problems, fmt.Sprintf("group %s replica %s: two Pods on host %s", group, replica, p.Node))
				}
				nodes[p.Node] = true
				pools[p.NodePool] = true
			}
			if len(pools) > 1 {
				problems = append(problems, fmt.Sprintf("group %s replica %s: Pods on %d node pools %v, not one slice", group, replica, len(pools), sortedKeys(pools)))
			}
			for pool := range pools {
				if known && len(e.pools) > 0 && !contains(e.pools, pool) {
					problems = append(problems, fmt.Sprintf("group %s replica %s: on node pool %s, which is not one of its slices %v", group, replica, pool, e.pools))
				}
				if known && contains(e.avoid, pool) {
					problems = append(problems, fmt.Sprintf("group %s replica %s: on node pool %s, a slice of another worker group", group, replica, pool))
				}
				if other, taken := poolOwner[pool]; taken && other != replica {
					problems = append(problems, fmt.Sprintf("group %s: replicas %s and %s share slice %s", group, other, replica, pool))
				}
				poolOwner[pool] = replica
			}
			if known && e.hosts > 1 && len(hosts) > e.hosts {
				problems = append(problems, fmt.Sprintf("group %s replica %s: %d Pods for %d hosts", group, replica, len(hosts), e.hosts))
			}
		}
	}
	return problems
}

// replicasOf groups the worker Pods by group and replica.
func replicasOf(pods []kube.RayPod) map[string]map[string][]kube.RayPod {
	out := map[string]map[string][]kube.RayPod{}
	for _, p := range pods {
		if p.Head {
			continue
		}
		if out[p.Group] == nil {
			out[p.Group] = map[string][]kube.RayPod{}
		}
		out[p.Group][p.Replica] = append(out[p.Group][p.Replica], p)
	}
	return out
}

// flattenPlacement is the placement attribute: group → replicas (by node pool, then name) → hosts
// by host index.
func flattenPlacement(pods []kube.RayPod) types.Map {
	hostType := types.ObjectType{AttrTypes: placementHostAttrTypes}
	replicaType := types.ListType{ElemType: hostType}
	groups := map[string]attr.Value{}
	for group, replicas := range replicasOf(pods) {
		keys := sortedKeys(replicas)
		sort.SliceStable(keys, func(i, j int) bool { return replicas[keys[i]][0].NodePool < replicas[keys[j]][0].NodePool })
		var list []attr.Value
		for _, k := range keys {
			var hosts []attr.Value
			for _, p := range replicas[k] {
				hosts = append(hosts, types.ObjectValueMust(placementHostAttrTypes, map[string]attr.Value{
					"pod": types.StringValue(p.Name), "node": types.StringValue(p.Node), "node_pool": types.StringValue(p.NodePool),
					"host_index": types.Int64Value(int64(p.HostIndex)), "phase": types.StringValue(p.Phase), "running": types.BoolValue(p.Running),
				}))
			}
			list = append(list, types.ListValueMust(hostType, hosts))
		}
		groups[group] = types.ListValueMust(replicaType, list)
	}
	return types.MapValueMust(types.ListType{ElemType: replicaType}, groups)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
