package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// Who carries out a change of raytpu_ray_service's rayClusterConfig is decided by KubeRay's own
// rule (kube.ClassifyConfig): raytpu renders the state's and the plan's configuration as it would
// send them, and
//   - the same hash (replicas, the slices a claim selects, spares, which are claims only): KubeRay
//     leaves the RayCluster alone, so raytpu scales it, whole replica by whole replica, as
//     raytpu_ray_cluster does (scaleInPlace);
//   - groups appended at the end: KubeRay updates the RayCluster that serves in place;
//   - anything else: a second RayCluster (upgrade_strategy NewCluster, ray_service_upgrade.go), or
//     a replacement (Recreate).
// The docs' table of changes (serviceChangeKinds) says the same.

// classifyServiceChange renders plan and state as the apply would send them and classifies the
// change with KubeRay's rule. known is false when either cannot be rendered at plan time (a value
// known after apply, a slice not there yet): the change then counts as a new RayCluster.
func classifyServiceChange(ctx context.Context, client *gke.Client, plan, state rayConfigModel) (change kube.ConfigChange, known bool) {
	if client == nil || !fullyKnown(ctx, plan.RayVersion, plan.PythonVersion, plan.Image, plan.Head, plan.WorkerGroups, plan.HistoryServer) {
		return kube.ConfigNewCluster, false
	}
	render := func(m rayConfigModel) (rayv1.RayClusterSpec, bool) {
		var d diag.Diagnostics
		// One claimer for both: the claim's name is the same before and after a change KubeRay can
		// leave in place, and what is compared is the rest.
		spec, _ := resolveRayConfig(ctx, client, m, kube.RayServiceClaimer(state.Name.ValueString()), &d)
		if d.HasError() {
			return rayv1.RayClusterSpec{}, false
		}
		obj, err := kube.RayServiceObject(kube.RayServiceSpec{RayClusterSpec: spec})
		if err != nil {
			return rayv1.RayClusterSpec{}, false
		}
		return obj.Spec.RayClusterSpec, true
	}
	before, ok := render(state)
	if !ok {
		return kube.ConfigNewCluster, false
	}
	after, ok := render(plan)
	if !ok {
		return kube.ConfigNewCluster, false
	}
	change, err := kube.ClassifyConfig(before, after)
	if err != nil {
		return kube.ConfigNewCluster, false
	}
	return change, true
}

// fullyKnown reports whether no part of any of values is unknown.
func fullyKnown(ctx context.Context, values ...attr.Value) bool {
	for _, v := range values {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil || !tv.IsFullyKnown() {
			return false
		}
	}
	return true
}

// describeInPlace says, group by group, what an update that KubeRay leaves to raytpu (ConfigSame)
// or carries out in place (ConfigAppended) does to the RayCluster that serves.
func describeInPlace(ctx context.Context, plan, state rayConfigModel, change kube.ConfigChange) string {
	before, after := groupSliceSets(ctx, state), groupSliceSets(ctx, plan)
	var parts []string
	for _, g := range after.order {
		now, was := after.slices[g], before.slices[g]
		_, existed := before.slices[g]
		switch {
		case !existed:
			parts = append(parts, fmt.Sprintf("KubeRay adds worker group %q on %s", g, orNone(now)))
		default:
			added, left := without(now, was), without(was, now)
			if len(added)+len(left) > 0 {
				parts = append(parts, fmt.Sprintf("worker group %q: raytpu moves its replicas from %s to %s (%d slice(s) in all), whole "+
					"replica by whole replica", g, orNone(left), orNone(added), len(now)))
			}
		}
		spareAdded, spareLeft := without(after.spares[g], before.spares[g]), without(before.spares[g], after.spares[g])
		if len(spareAdded)+len(spareLeft) > 0 {
			parts = append(parts, fmt.Sprintf("worker group %q: spare slices claimed %s, released %s", g, orNone(spareAdded), orNone(spareLeft)))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no Pod changes")
	}
	who := "KubeRay's hash of the rayClusterConfig stays the same, so KubeRay leaves the RayCluster as it is and raytpu applies the change to it"
	if change == kube.ConfigAppended {
		who = "only worker groups are appended, so KubeRay updates the RayCluster that serves in place"
	}
	return who + ": " + strings.Join(parts, "; ")
}

// sliceSets are the slice names of each worker group of a configuration, in its order.
type sliceSets struct {
	order          []string
	slices, spares map[string][]string
}

func groupSliceSets(ctx context.Context, m rayConfigModel) sliceSets {
	out := sliceSets{slices: map[string][]string{}, spares: map[string][]string{}}
	var groups []rayWorkerGroupModel
	if m.WorkerGroups.IsNull() || m.WorkerGroups.IsUnknown() || m.WorkerGroups.ElementsAs(ctx, &groups, false).HasError() {
		return out
	}
	names := func(ids []string) []string {
		var out []string
		for _, s := range ids {
			if id, err := gke.ParseNodePoolID(s); err == nil {
				out = append(out, id.Name)
			}
		}
		return out
	}
	for _, g := range groups {
		name := g.Name.ValueString()
		out.order = append(out.order, name)
		ids, _ := knownStrings(ctx, g.Slices)
		spares, _ := knownStrings(ctx, g.SpareSlices)
		out.slices[name], out.spares[name] = names(ids), names(spares)
	}
	return out
}

// runningChange classifies rest against the RayCluster that serves (prior's) as KubeRay will: from
// the hash KubeRay wrote on it and the RayService as the API server would store it (a server-side
// dry run, so that any default the server adds is hashed as KubeRay hashes it). A RayCluster that
// is not there is one KubeRay makes anew. ok is false when the RayService cannot be rendered.
func runningChange(ctx context.Context, k *kube.Client, prior *rayServiceModel, rest kube.RayServiceSpec, action string,
	diags *diag.Diagnostics) (running *rayv1.RayCluster, change kube.ConfigChange, ok bool) {
	obj, err := kube.RayServiceObject(rest)
	if err != nil {
		diags.AddError("Invalid RayService", fmt.Sprintf("%s: %s.", action, err))
		return nil, 0, false
	}
	name := prior.RayClusterName.ValueString()
	if name == "" {
		return nil, kube.ConfigNewCluster, true
	}
	running, err = k.GetRayCluster(ctx, rest.Namespace, name)
	switch {
	case errors.Is(err, kube.ErrRayClusterNotFound):
		return nil, kube.ConfigNewCluster, true
	case err != nil:
		diags.AddError("Error Reading RayCluster", fmt.Sprintf("%s: %s", action, err))
		return nil, 0, false
	}
	stored, err := k.DryRunApplyRayService(ctx, obj)
	if err != nil {
		diags.AddError("Error Applying RayService", fmt.Sprintf("%s: %s", action, err))
		return nil, 0, false
	}
	change, err = kube.ClassifyAgainstCluster(running, stored.Spec.RayClusterSpec)
	if err != nil {
		diags.AddError("Invalid RayService", fmt.Sprintf("%s: %s.", action, err))
		return nil, 0, false
	}
	return running, change, true
}

// scaleInPlace applies kept, the RayService with the groups the RayCluster running has, and does
// on running what KubeRay leaves undone for a rayClusterConfig of the same hash: it releases the
// slices no group has any more (before KubeRay makes any replica again, which could take one),
// then sets each group's replicas, naming as workersToDelete the replicas on slices their group no
// longer has, and once those are gone clears workersToDelete. It reports whether it got through.
func (r *rayServiceResource) scaleInPlace(ctx context.Context, client *gke.Client, k *kube.Client, kept kube.RayServiceSpec,
	groups []resolvedGroup, running *rayv1.RayCluster, m, prior *rayServiceModel, action string, diags *diag.Diagnostics) bool {
	obj, err := kube.RayServiceObject(kept)
	if err == nil {
		_, err = k.ApplyRayService(ctx, obj)
	}
	if err != nil {
		diags.AddError("Error Applying RayService", fmt.Sprintf("%s: %s", action, err))
		return false
	}
	pods, err := k.RayClusterPods(ctx, running.Namespace, running.Name)
	if err != nil {
		diags.AddError("Error Reading RayCluster", fmt.Sprintf("%s: %s", action, err))
		return false
	}
	leaving := leavingReplicas(pods, groups)
	release := releasedSlices(ctx, prior.rayConfigModel, m.rayConfigModel, leaving)
	if err := releaseSlices(ctx, client, m.Namespace.ValueString(), kube.RayServiceClaimer(m.Name.ValueString()), release); err != nil {
		diags.AddError("Error Releasing Slices", fmt.Sprintf("%s: %s. Until their raytpu.dev/ray-* labels go, the RayService's "+
			"replicas could run on them.", action, err))
		return false
	}
	var scales []kube.GroupScale
	for i, g := range groups {
		toDelete := podNames(leaving, g.Name)
		if have := running.Spec.WorkerGroupSpecs[i].Replicas; len(toDelete) == 0 && have != nil && int(*have) == g.Replicas {
			continue
		}
		scales = append(scales, kube.GroupScale{Name: g.Name, Replicas: g.Replicas, WorkersToDelete: toDelete})
	}
	if len(scales) == 0 {
		return true
	}
	if err := k.ScaleRayCluster(ctx, running, scales); err != nil {
		diags.AddError("Error Scaling RayCluster", fmt.Sprintf("%s: %s", action, err))
		return false
	}
	if len(leaving) == 0 {
		return true
	}
	w := k.WatchRayCluster(ctx, running.Namespace, running.Name)
	defer w.Close()
	if !waitLeavingGone(ctx, w, leaving, action, diags) {
		return false
	}
	for i := range scales {
		scales[i].WorkersToDelete = nil
	}
	if err := k.ScaleRayCluster(ctx, running, scales); err != nil {
		diags.AddError("Error Scaling RayCluster", fmt.Sprintf("%s: %s", action, err))
		return false
	}
	return true
}

// serviceChangeKind is one kind of change of a raytpu_ray_service: how KubeRay's rule classifies
// it (class), shown by mutate on a RayService as raytpu renders it (the unit test holds each
// against kube.ClassifyConfig), or who applies it where the rayClusterConfig is not what changes.
type serviceChangeKind struct {
	change    string
	class     kube.ConfigChange
	mutate    func(*kube.RayServiceSpec)
	appliedBy string // instead of the class's
	plan      string // instead of the class's
}

// serviceChangeKinds are the rows of the raytpu_ray_service page's table of changes.
var serviceChangeKinds = []serviceChangeKind{
	{change: "`serve_config_v2`", class: kube.ConfigSame, mutate: func(s *kube.RayServiceSpec) { s.ServeConfigV2 += "# changed\n" },
		appliedBy: "KubeRay, which sends the new config to the RayCluster that serves", plan: "an update; `ray_cluster_name` stays"},
	{change: "a worker group's `slices` moved to others of the same number and shape", class: kube.ConfigSame,
		mutate: func(*kube.RayServiceSpec) {}},
	{change: "a single-host worker group's `slices` grown or shrunk", class: kube.ConfigSame,
		mutate: func(s *kube.RayServiceSpec) { s.Groups[0].Replicas++ }},
	{change: "`spare_slices` added or removed (claims only)", class: kube.ConfigSame, mutate: func(*kube.RayServiceSpec) {}},
	{change: "a worker group appended at the end of `worker_groups`", class: kube.ConfigAppended,
		mutate: func(s *kube.RayServiceSpec) {
			s.Groups = append(s.Groups, kube.RayWorkerGroup{Name: "more", Replicas: 1, NumOfHosts: 1})
		}},
	{change: "a worker group removed, or the groups reordered", class: kube.ConfigNewCluster,
		mutate: func(s *kube.RayServiceSpec) { s.Groups = s.Groups[:0] }},
	{change: "the number of slices of a multi-host worker group (`MEGASCALE_NUM_SLICES` changes with it)", class: kube.ConfigNewCluster,
		mutate: func(s *kube.RayServiceSpec) { s.Groups[0].MegascaleSlices++ }},
	{change: "`ray_version`, `python_version`, `image`, `history_server`, anything of `head` (`service_type` included: KubeRay hashes " +
		"the head Service with the head), a worker group's `cpu`, `memory`, `ray_start_params` or Pod settings", class: kube.ConfigNewCluster,
		mutate: func(s *kube.RayServiceSpec) { s.Head.ServiceType = "NodePort" }},
	{change: "`head.service_type` off `ClusterIP`, or to or from `InternalLoadBalancer` where a load balancer stays: on an upgrade KubeRay " +
		"keeps the head and Serve Services, copying the new spec onto them with their old clusterIP (`None` for a ClusterIP head) and " +
		"annotations", class: kube.ConfigNewCluster,
		mutate:    func(s *kube.RayServiceSpec) { s.Head.ServiceType = "LoadBalancer" },
		appliedBy: "raytpu: a replacement (`\"Recreate\"`), which makes the Services anew; KubeRay's upgrade cannot apply it",
		plan:      "refused with `NewCluster`, with the options; with `Recreate`, a replacement"},
	{change: "a slice replaced under its id by one of another shape", class: kube.ConfigNewCluster,
		mutate:    func(s *kube.RayServiceSpec) { s.Groups[0].NumOfHosts *= 2 },
		appliedBy: "raytpu: a replacement, whatever the strategy (the RayCluster that serves has lost the slice)",
		plan:      "a replacement"},
}

// Changes is the table of kinds of change on the resource's page.
func (r *rayServiceResource) Changes() []ChangeRow {
	rows := make([]ChangeRow, len(serviceChangeKinds))
	for i, k := range serviceChangeKinds {
		applied, plan := classAppliedBy[k.class], classPlan[k.class]
		if k.appliedBy != "" {
			applied = k.appliedBy
		}
		if k.plan != "" {
			plan = k.plan
		}
		rows[i] = ChangeRow{Change: k.change, AppliedBy: applied, Plan: plan}
	}
	return rows
}

// classAppliedBy and classPlan say who applies a change of each class and what the plan says.
var (
	classAppliedBy = map[kube.ConfigChange]string{
		kube.ConfigSame: "raytpu, on the RayCluster that serves: KubeRay's hash of the rayClusterConfig stays the same, so KubeRay " +
			"leaves that RayCluster as it is, replicas included; raytpu sets the groups' replicas and deletes the replicas on slices " +
			"their group left (`workersToDelete`), whole replica by whole replica, after releasing those slices",
		kube.ConfigAppended: "KubeRay, which updates the RayCluster that serves in place",
		kube.ConfigNewCluster: "KubeRay, which brings up a second RayCluster (`upgrade_strategy = \"NewCluster\"`); or a replacement " +
			"(`\"Recreate\"`)",
	}
	classPlan = map[kube.ConfigChange]string{
		kube.ConfigSame:     "an update; `ray_cluster_name` stays; a warning says what moves",
		kube.ConfigAppended: "an update; `ray_cluster_name` stays; a warning names the groups KubeRay adds",
		kube.ConfigNewCluster: "an update whose worker groups need free slices (refused otherwise, with the options), `ray_cluster_name` " +
			"known after apply; with `Recreate`, a replacement",
	}
)

// serviceGeneration is the claimer of the RayService's slices for this apply: that of the
// generation its groups select now, or of the next one for a change KubeRay brings up a new
// RayCluster for, so that the new RayCluster selects only the slices claimed for it
// (kube.RayServiceGenerationClaimer).
func serviceGeneration(ctx context.Context, client *gke.Client, k *kube.Client, m, prior *rayServiceModel) string {
	name := m.Name.ValueString()
	if prior == nil {
		return kube.RayServiceClaimer(name)
	}
	live, err := k.GetRayService(ctx, m.Namespace.ValueString(), name)
	if err != nil {
		return kube.RayServiceClaimer(name)
	}
	current := kube.RayServiceClaimerOf(live)
	gen, _ := kube.RayServiceGeneration(current, name)
	if change, known := classifyServiceChange(ctx, client, m.rayConfigModel, prior.rayConfigModel); known && change == kube.ConfigNewCluster {
		return kube.RayServiceGenerationClaimer(name, gen+1)
	}
	return current
}
