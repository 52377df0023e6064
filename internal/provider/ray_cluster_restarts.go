package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// restartPlan is which Pods an update restarts, from the configurations before and after it
// (ray_cluster_rollout.go says why each).
type restartPlan struct {
	// everything: the head and every worker.
	everything bool
	// groups whose every replica restarts.
	groups map[string]bool
	// stopped and started are, by group, the slices whose replica stops or starts.
	stopped, started map[string][]string
	// unknown are the groups whose slices are not known before the apply (one is being replaced).
	unknown []string
	// service: the head Service is made again.
	service bool
}

// plannedRestarts compares the configuration of the state with the next one.
func plannedRestarts(ctx context.Context, prior, next rayConfigModel) restartPlan {
	out := restartPlan{groups: map[string]bool{}, stopped: map[string][]string{}, started: map[string][]string{}}
	before, d := rayConfigOf(ctx, prior)
	after, d2 := rayConfigOf(ctx, next)
	if d.HasError() {
		return out
	}
	nextGroups := map[string]bool{}
	if d2.HasError() {
		// Something of the next configuration is not known yet, such as a replaced slice's id.
		var groups []rayWorkerGroupModel
		_ = next.WorkerGroups.ElementsAs(ctx, &groups, false)
		for _, g := range groups {
			if _, known := knownStrings(ctx, g.Slices); !known && !g.Slices.IsNull() {
				out.unknown = append(out.unknown, g.Name.ValueString())
			}
		}
		return out
	}
	// "1" and "1000m" are one request: the same Pods.
	before, after = before.withCanonicalQuantities(), after.withCanonicalQuantities()
	out.service = before.Head.ServiceType != after.Head.ServiceType || !slices.Equal(before.Head.SourceRanges, after.Head.SourceRanges)
	head := func(c rayConfig) string {
		h := c.Head
		h.ServiceType, h.SourceRanges = "", nil // the Service, not the Pod
		b, _ := json.Marshal([]any{c.RayVersion, c.PythonVersion, c.Image, c.HeadOmitted, h})
		return string(b)
	}
	out.everything = head(before) != head(after) || historyChanged(ctx, prior, next)
	old := map[string]rayGroupConfig{}
	for _, g := range before.Groups {
		old[g.Name] = g
	}
	podOf := func(g rayGroupConfig) string {
		g.Slices, g.SpareSlices, g.Replicas = nil, nil, nil
		b, _ := json.Marshal(g)
		return string(b)
	}
	for _, g := range after.Groups {
		nextGroups[g.Name] = true
		was, existed := old[g.Name]
		if !existed {
			continue
		}
		if podOf(was) != podOf(g) {
			out.groups[g.Name] = true
		}
		for _, s := range was.Slices {
			if !slices.Contains(g.Slices, s) {
				out.stopped[g.Name] = append(out.stopped[g.Name], poolName(s))
			}
		}
		for _, s := range g.Slices {
			if !slices.Contains(was.Slices, s) {
				out.started[g.Name] = append(out.started[g.Name], poolName(s))
			}
		}
	}
	for name := range old {
		if !nextGroups[name] {
			out.groups[name] = true // removed: its Pods go
		}
	}
	return out
}

// warn says in the plan which Pods the update restarts.
func (r restartPlan) warn(diags *diag.Diagnostics) {
	var what []string
	if r.everything {
		what = append(what, "the head and every worker Pod restart (ray_version, python_version, image, history_server or the head changes; "+
			"a Ray cluster without GCS fault tolerance does not outlive its head)")
	}
	for _, g := range sortedKeys(r.groups) {
		if !r.everything {
			what = append(what, fmt.Sprintf("every replica of worker group %q restarts, or stops if the group goes", g))
		}
	}
	multislice := " (in a group of multi-host slices every replica restarts too: MEGASCALE_NUM_SLICES changes)"
	for _, g := range sortedKeys(r.stopped) {
		what = append(what, fmt.Sprintf("the replica of worker group %q on %s stops%s", g, strings.Join(r.stopped[g], ", "), multislice))
	}
	for _, g := range sortedKeys(r.started) {
		what = append(what, fmt.Sprintf("worker group %q starts a replica on %s%s", g, strings.Join(r.started[g], ", "), multislice))
	}
	for _, g := range r.unknown {
		what = append(what, fmt.Sprintf("worker group %q's slices are known only after the apply (a slice is replaced): if their shape "+
			"changes, every replica of the group restarts", g))
	}
	if r.service {
		what = append(what, "the head Service is made again, with a new address (KubeRay never changes the one it made)")
	}
	if len(what) == 0 {
		return
	}
	diags.AddWarning("What This Update Restarts", "This update of raytpu_ray_cluster restarts what KubeRay does not, each replica whole (all "+
		"the Pods of one slice at once), which ends the Ray jobs running on them: "+strings.Join(what, "; ")+".")
}

// poolName is the node pool name of a slice id, or the id when it is not one.
func poolName(id string) string {
	if n, err := gke.ParseNodePoolID(id); err == nil {
		return n.Name
	}
	return id
}
