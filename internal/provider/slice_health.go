package provider

import (
	"fmt"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// poolHealthy reports a slice whose node pool GKE reports RUNNING with all of its want hosts
// there and Ready. An autoscaled slice is whole with all of its hosts or none: it scales as one
// unit.
func poolHealthy(pool *containerpb.NodePool, hosts []kube.Host, want int) bool {
	present := len(hosts)
	whole := present == want || (present == 0 && pool.GetAutoscaling().GetEnabled())
	return pool.GetStatus() == containerpb.NodePool_RUNNING && whole && readyHosts(hosts) == present
}

func readyHosts(hosts []kube.Host) int {
	ready := 0
	for _, h := range hosts {
		if h.Ready {
			ready++
		}
	}
	return ready
}

// poolHosts is the number of hosts of the slice pool holds: its shape's, or, for a pool whose
// shape cannot be derived, its node count over its zones.
func poolHosts(pool *containerpb.NodePool) int {
	if s, err := nodePoolSlice(pool, nil); err == nil {
		return s.Hosts
	}
	return int(pool.GetInitialNodeCount()) * max(len(pool.GetLocations()), 1)
}

// A TPU slice cannot be repaired in place, so replace_unhealthy replaces a slice, but only for
// what no wait mends, as the last refresh saw it:
//   - its node pool is ERROR: "the node pool may be unusable" (containerpb NodePool.Status);
//   - a host was lost: the cluster no longer hears from its node (Ready Unknown, see kube.Host.Lost).
//
// Never a slice in transition, which a later refresh finds whole again:
//   - PROVISIONING ("being created"), RECONCILING ("some work is actively being done on the node
//     pool, such as upgrading node software": an auto-upgrade, a change of this apply), STOPPING;
//   - RUNNING_WITH_ERROR without a lost host ("partially usable ... Customer may need to reissue a
//     request or trigger a new update": an error of an operation, not of the slice's hosts);
//   - hosts still to come (an autoscaled slice scaling up, whose nodes register one by one) or not
//     Ready yet (booting: Ready False, not Unknown).

// replacementCause says why replace_unhealthy replaces the slice in state, "" when it does not.
func replacementCause(state sliceResourceModel) string {
	var lost []string
	if !state.FailedHosts.IsNull() && !state.FailedHosts.IsUnknown() {
		for _, h := range state.FailedHosts.Elements() {
			if s, ok := h.(types.String); ok {
				lost = append(lost, s.ValueString())
			}
		}
	}
	switch {
	case state.Status.ValueString() == containerpb.NodePool_ERROR.String():
		return "its node pool is in ERROR"
	case len(lost) > 0:
		return fmt.Sprintf("the cluster lost %s (%s): a host failed", plural(len(lost), "host"), strings.Join(lost, ", "))
	}
	return ""
}

// unhealthyReplacement replaces a failed slice when replace_unhealthy is set (planReplaceUnhealthy).
var unhealthyReplacement = PlanReplacement{
	Attributes: []path.Path{path.Root("healthy")},
	When:       "when `replace_unhealthy` is `true` and the last refresh found the slice failed (see Unhealthy slices)",
}

// planReplaceUnhealthy replaces the slice in state when replace_unhealthy is set and
// replacementCause finds a reason, and says so.
func planReplaceUnhealthy(plan, state *sliceResourceModel, resp *resource.ModifyPlanResponse) {
	if state == nil || !plan.ReplaceUnhealthy.ValueBool() {
		return
	}
	why := replacementCause(*state)
	if why == "" {
		return
	}
	plan.Healthy, plan.Status = types.BoolUnknown(), types.StringUnknown()
	plan.FailedHosts = types.ListUnknown(types.StringType)
	resp.RequiresReplace = append(resp.RequiresReplace, unhealthyReplacement.Attributes...)
	resp.Diagnostics.AddAttributeWarning(path.Root("healthy"), "Replacing Unhealthy Slice",
		fmt.Sprintf("%s is %s with %d of %d hosts Ready, and %s; replace_unhealthy is set, so it is replaced: a TPU slice cannot be "+
			"repaired in place.", state.ID.ValueString(), state.Status.ValueString(), state.ReadyHosts.ValueInt64(), state.NumHosts.ValueInt64(), why))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
