package provider

import (
	"context"
	"fmt"
	"math"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// GKE's node auto-provisioning creates a pool only while the cluster's limits hold it, and it
// counts every node of the cluster against them: "Any auto-provisioning limits that you define are
// enforced based on the total CPU and memory resources used across all node pools, not just
// auto-provisioned pools" (GKE "About node auto-provisioning"). TPU hosts are large machines (one
// ct6e-standard-4t is 180 vCPUs and 720 GB), so limits sized for CPU pools never let a slice come
// up: the workers wait, and the cluster autoscaler says only "max cluster cpu limit reached" in
// their events. The plan says so instead, when the cluster exists.

// napDemand is what an auto-provisioned worker group asks node auto-provisioning for.
type napDemand struct {
	index    int
	name     string
	slice    *tpu.Slice
	replicas int64
}

// napUse is what nodes count against the limits: cores, GB of memory, TPU chips by accelerator.
type napUse struct {
	cores, memoryGB float64
	chips           map[string]float64
}

func (u *napUse) add(s gke.MachineShape, nodes int64, accelerator string, chipsPerNode int) {
	u.cores += float64(s.VCPUs * nodes)
	u.memoryGB += s.MemoryGB * float64(nodes)
	if accelerator != "" {
		u.chips[accelerator] += float64(int64(chipsPerNode) * nodes)
	}
}

// checkNAPLimits warns about each demand the cluster's node auto-provisioning limits cannot hold on
// top of what its node pools hold now. It reads the cluster and the machine types of its pools; a
// cluster that cannot be read (not created yet) is not checked.
func checkNAPLimits(ctx context.Context, client *gke.Client, id gke.ClusterID, demands []napDemand, diags *diag.Diagnostics) {
	if len(demands) == 0 {
		return
	}
	cluster, err := client.GetCluster(ctx, id)
	if err != nil {
		tflog.Debug(ctx, "node auto-provisioning limits not checked: the cluster cannot be read", map[string]any{"cluster": id.String(), "error": err.Error()})
		return
	}
	a := cluster.GetAutoscaling()
	if !a.GetEnableNodeAutoprovisioning() {
		return // refused with its own message once the workers are created (raytpu_ray_cluster's create)
	}
	limits := map[string]float64{}
	for _, l := range a.GetResourceLimits() {
		limits[l.GetResourceType()] = float64(l.GetMaximum())
	}
	zone := id.Location
	if len(cluster.GetLocations()) > 0 {
		zone = cluster.GetLocations()[0]
	}
	shape := func(machineType, zone string) (gke.MachineShape, bool) {
		s, err := client.MachineType(ctx, id.Project, zone, machineType)
		if err != nil {
			tflog.Info(ctx, "node auto-provisioning limits not checked: machine type unknown", map[string]any{"machine_type": machineType, "error": err.Error()})
		}
		return s, err == nil
	}
	used := napUse{chips: map[string]float64{}}
	for _, p := range cluster.GetNodePools() {
		if p.GetStatus() == containerpb.NodePool_ERROR {
			continue
		}
		poolZone := zone
		if len(p.GetLocations()) > 0 {
			poolZone = p.GetLocations()[0]
		}
		s, ok := shape(p.GetConfig().GetMachineType(), poolZone)
		if !ok {
			return
		}
		accelerator, chips := "", 0
		if slice, err := tpu.SliceForNodePool(p.GetConfig().GetMachineType(), p.GetPlacementPolicy().GetTpuTopology()); err == nil {
			accelerator, chips = slice.Generation.GKEAccelerator, slice.ChipsPerHost()
		}
		used.add(s, int64(p.GetInitialNodeCount())*int64(max(len(p.GetLocations()), 1)), accelerator, chips)
	}
	for _, d := range demands {
		s, ok := shape(d.slice.MachineType.Name, zone)
		if !ok {
			return
		}
		need := napUse{chips: map[string]float64{}}
		need.add(s, int64(d.slice.Hosts)*d.replicas, d.slice.Generation.GKEAccelerator, d.slice.ChipsPerHost())
		if short := napShortfall(limits, used, need, d.slice.Generation); len(short) > 0 {
			diags.AddAttributeWarning(path.Root("worker_groups").AtListIndex(d.index), "Node Auto-Provisioning Limits Too Low",
				fmt.Sprintf("worker group %q asks node auto-provisioning for %d %s %s slice(s) of %d %s hosts (%d vCPUs and %.0f GB each), but "+
					"cluster %s's limits cannot hold them: %s. GKE counts every node of the cluster against these limits, TPU hosts "+
					"included, and creates no pool that would pass one; the workers would wait, Pending. Raise those limits in the "+
					"cluster's auto_provisioning (raytpu_cluster), or give the group raytpu_slices of its own.",
					d.name, d.replicas, d.slice.Generation.Name, d.slice.Topology, d.slice.Hosts, d.slice.MachineType.Name, s.VCPUs, s.MemoryGB,
					id, strings.Join(short, "; ")))
		}
		used.cores, used.memoryGB = used.cores+need.cores, used.memoryGB+need.memoryGB
		for k, v := range need.chips {
			used.chips[k] += v
		}
	}
}

// napShortfall says, for each limit that used plus need passes, what it is and what it would take;
// need's chips are of generation g.
func napShortfall(limits map[string]float64, used, need napUse, g *tpu.Generation) []string {
	var out []string
	check := func(attribute, unit string, limit, used, need float64, ok bool) {
		if need <= 0 || (ok && used+need <= limit) {
			return
		}
		if !ok {
			out = append(out, fmt.Sprintf("there is no limit for %s, which GKE counts as none allowed", unit))
			return
		}
		out = append(out, fmt.Sprintf("%s is %.0f, the cluster's nodes use %.0f %s and the slices need %.0f more: at least %.0f",
			attribute, limit, used, unit, need, math.Ceil(used+need)))
	}
	cpu, cpuOK := limits[resourceCPU]
	check("max_cpu", "cores", cpu, used.cores, need.cores, cpuOK)
	mem, memOK := limits[resourceMemory]
	check("max_memory_gb", "GB", mem, used.memoryGB, need.memoryGB, memOK)
	chips, chipsOK := limits[g.GKEAccelerator]
	check("the tpu_limits max_chips of "+g.Name, g.Name+" chips", chips, used.chips[g.GKEAccelerator], need.chips[g.GKEAccelerator], chipsOK)
	return out
}

// newNAPDemands are the auto-provisioned groups of groups whose slices node auto-provisioning is
// yet to create: new groups, and those whose shape or replicas differ from the state's.
func newNAPDemands(ctx context.Context, groups []rayWorkerGroupModel, state rayConfigModel) []napDemand {
	before := map[string]rayWorkerGroupModel{}
	if !state.WorkerGroups.IsNull() && !state.WorkerGroups.IsUnknown() {
		var old []rayWorkerGroupModel
		if !state.WorkerGroups.ElementsAs(ctx, &old, false).HasError() {
			for _, g := range old {
				before[g.Name.ValueString()] = g
			}
		}
	}
	var out []napDemand
	for i, g := range groups {
		s, ok := groupShape(g, path.Empty(), &diag.Diagnostics{}) // an invalid shape is ValidateConfig's to report
		if !ok || g.Replicas.IsUnknown() {
			continue
		}
		replicas := groupReplicas(g)
		if was, ok := before[g.Name.ValueString()]; ok && was.Generation.Equal(g.Generation) && was.Topology.Equal(g.Topology) &&
			was.ChipsPerHost.Equal(g.ChipsPerHost) {
			replicas -= groupReplicas(was)
		}
		if replicas > 0 {
			out = append(out, napDemand{index: i, name: g.Name.ValueString(), slice: s, replicas: replicas})
		}
	}
	return out
}

// groupReplicas is an auto-provisioned group's replicas: 1 when unset.
func groupReplicas(g rayWorkerGroupModel) int64 {
	if g.Replicas.IsNull() || g.Replicas.IsUnknown() {
		return 1
	}
	return g.Replicas.ValueInt64()
}
