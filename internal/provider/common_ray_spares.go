package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// Warm standby slices. A slices group may hold spare slices of its shape: claimed for the group
// like its slices (so nothing else lands on them), but with no replica of their own. When a host
// fails, its slice stops taking Pods (Cloud TPU recovers a multi-host slice's hosts together) and
// KubeRay recreates the failed replica whole; the scheduler then finds a free slice of the group,
// a spare, at once. Which slices run replicas is the scheduler's choice: worker_group_slices says.

func spareSlicesSchema() schema.ListAttribute {
	return schema.ListAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: "Warm standby slices of the group: `raytpu_slice` ids of the same shape as `slices`, held free for this " +
			"group only (claimed like its slices, with no replica of their own). When a host of a slice fails, KubeRay recreates " +
			"the replica whole and it starts on a spare at once, with no apply. The group runs one replica per slice of `slices`; " +
			"which of all its slices they run on is the scheduler's choice, and `worker_group_slices` says.",
		Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
	}
}

// spareGroupSlices reads the spare slices of a group from GKE: they must have the group's shape
// (nil while the slices' shape is unknown).
func spareGroupSlices(ctx context.Context, client *gke.Client, group string, ids []string, shape *tpu.Slice, p path.Path, lenient bool, diags *diag.Diagnostics) []groupSlice {
	if len(ids) == 0 {
		return nil
	}
	s, spares := sliceGroupShape(ctx, client, group, ids, p.AtName("spare_slices"), lenient, diags)
	if s == nil || shape == nil {
		return spares
	}
	if !sameGroupShape(shape, s) {
		diags.AddAttributeError(p.AtName("spare_slices"), "Spare Slice Of Another Shape",
			fmt.Sprintf("worker group %q: its spare slices are %s, but its slices are %s: a spare stands in for a failed slice, so "+
				"it must be identical (one numOfHosts, node selector and chip count). List spares of the slices' shape.",
				group, describeSlice(s), describeSlice(shape)))
		return nil
	}
	return spares
}

// Slice states of worker_group_slices.
const (
	groupHealthy  = "Healthy"
	groupDegraded = "Degraded"
	groupBroken   = "Broken"
)

var groupSlicesAttrTypes = map[string]attr.Type{
	"state":  types.StringType,
	"active": types.ListType{ElemType: types.StringType},
	"spare":  types.ListType{ElemType: types.StringType},
	"failed": types.ListType{ElemType: types.StringType},
}

func groupSlicesSchema() schema.MapNestedAttribute {
	list := func(d string) schema.ListAttribute {
		return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: d}
	}
	return schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "The slices of each `slices` group (worker group name →) by role, node pool names, refreshed by each read. " +
			"`state` is `Healthy` (every replica runs and every spare is free), `Degraded` (every replica runs on whole slices, " +
			"but a spare is taken or a slice failed: the next apply with the failed slice's `replace_unhealthy` makes it a spare " +
			"again) or `Broken` (a replica does not run; `healthy` is `false`).",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"state":  schema.StringAttribute{Computed: true, MarkdownDescription: "`Healthy`, `Degraded` or `Broken`."},
			"active": list("Slices a replica runs on."),
			"spare":  list("Free slices whose hosts are all Ready and schedulable."),
			"failed": list("Slices with a host not Ready or not schedulable, and no replica running."),
		}},
	}
}

// groupSliceRoles tells, for each slices group of want, which of its slices run a replica, which
// are free and which failed. A slice is failed when a host is not Ready or is cordoned.
func groupSliceRoles(ctx context.Context, k *kube.Client, pods []kube.RayPod, want map[string]groupExpectation) types.Map {
	objType := types.ObjectType{AttrTypes: groupSlicesAttrTypes}
	out := map[string]attr.Value{}
	replicas := replicasOf(pods)
	for _, group := range sortedKeys(want) {
		e := want[group]
		if len(e.pools) == 0 {
			continue
		}
		running := map[string]bool{}
		runningReplicas := 0
		for _, hosts := range replicas[group] {
			all := len(hosts) >= e.hosts
			for _, p := range hosts {
				all = all && p.Running
			}
			if all && hosts[0].NodePool != "" {
				running[hosts[0].NodePool] = true
				runningReplicas++
			}
		}
		var active, spare, failed []string
		for _, pool := range e.pools {
			switch {
			case running[pool]:
				active = append(active, pool)
			case !sliceUsable(ctx, k, pool, e.hosts):
				failed = append(failed, pool)
			default:
				spare = append(spare, pool)
			}
		}
		sort.Strings(active)
		state := groupHealthy
		switch {
		case runningReplicas < e.replicas:
			state = groupBroken
		case len(spare) < len(e.pools)-e.replicas:
			state = groupDegraded
		}
		out[group] = types.ObjectValueMust(groupSlicesAttrTypes, map[string]attr.Value{
			"state": types.StringValue(state), "active": stringListValue(active), "spare": stringListValue(spare), "failed": stringListValue(failed),
		})
	}
	return types.MapValueMust(objType, out)
}

// sliceUsable reports whether every one of the slice's hosts is there, Ready and schedulable.
func sliceUsable(ctx context.Context, k *kube.Client, pool string, hosts int) bool {
	if k == nil {
		return false
	}
	list, err := k.SliceHosts(ctx, pool)
	if err != nil || len(list) < hosts {
		return false
	}
	for _, h := range list {
		if !h.Ready || h.Cordoned {
			return false
		}
	}
	return true
}
