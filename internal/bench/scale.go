package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// scaleTopology is the shape of the scale benchmark's slices: single-host v6e-4, so that a hundred
// of them cost the emulator a hundred nodes only.
const scaleTopology = "2x2"

// scaleRun is one state of many single-host slices on one cluster and a RayCluster over some of
// them: the apply that creates them, then a refresh, a plan of the applied state and a plan that
// changes one slice, with the GKE calls of each.
type scaleRun struct {
	Slices, RaySlices int
	Setup             cliRun // the cluster alone, not measured
	Apply             cliRun
	// SliceSpan is from the first slice's apply_start to the last one's apply_complete; RaySpan is
	// the RayCluster's.
	SliceSpan, RaySpan window
	Creations          []opInfo
	MaxAtOnce          int
	// SliceCalls are the apply's GKE calls outside RaySpan, RayCalls those inside.
	SliceCalls, RayCalls             map[string]int
	Refresh, Plan, Change            cliRun
	RefreshCalls, PlanCalls, Changed map[string]int
}

// meanCreation is the mean duration of the apply's node pool creations.
func (s scaleRun) meanCreation() time.Duration {
	if len(s.Creations) == 0 {
		return 0
	}
	var sum time.Duration
	for _, o := range s.Creations {
		sum += o.Duration()
	}
	return sum / time.Duration(len(s.Creations))
}

// waveLimit is the least time GKE needs for the slices: waves of parallelWave creations.
func (s scaleRun) waveLimit() time.Duration {
	return time.Duration((s.Slices+parallelWave-1)/parallelWave) * s.meanCreation()
}

// The scale targets: the slices' apply within 5% of the wave limit, a create in at most three GKE
// calls per slice, and a refresh or plan in a handful of calls whatever the number of slices.
const (
	scaleApplyShare   = 0.05
	scaleCreateCalls  = 3.0
	scaleHandfulCalls = 5
)

// parseScale reads -scale-slices: a comma-separated list of slice counts, or "" for none.
func parseScale(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-scale-slices %q: give slice counts such as 24 or 24,144", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchScale puts n single-host slices and a RayCluster over r.ScaleRaySlices of them (fewer if n
// is smaller) on one cluster, node pool creations taking r.Latency and every other operation
// r.SetupLatency, then refreshes and plans the state.
func benchScale(ctx context.Context, r *results, emu *emulator.Emulator, dir string, n int) (scaleRun, error) {
	s := scaleRun{Slices: n, RaySlices: min(n, r.ScaleRaySlices)}
	if err := emu.Reset(ctx); err != nil {
		return s, err
	}
	if err := emu.SetLatencies(ctx, map[string]time.Duration{"default": r.SetupLatency, "CREATE_NODE_POOL": r.Latency}); err != nil {
		return s, err
	}
	if err := writeWorkspace(dir, scaleConfig(0, 0, false)); err != nil {
		return s, err
	}
	write := func(slices, ray int, changed bool) error {
		return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(scaleConfig(slices, ray, changed)), 0o644)
	}
	var err error
	logf("scale %d: applying the cluster", n)
	if s.Setup, err = r.CLI.run(ctx, "scale-setup", dir, nil, "apply", "-auto-approve", "-input=false", "-json"); err != nil {
		return s, err
	}
	if err := write(n, s.RaySlices, false); err != nil {
		return s, err
	}
	logf("scale %d: applying %d slices (CREATE_NODE_POOL takes %s) and a RayCluster over %d of them", n, n, r.Latency, s.RaySlices)
	if s.Apply, err = r.CLI.run(ctx, "scale-apply", dir, nil, "apply", "-auto-approve", "-input=false", "-json"); err != nil {
		return s, err
	}
	for i := range n {
		if w, ok := s.Apply.ResourceWindow(fmt.Sprintf("raytpu_slice.bench[%d]", i)); ok {
			if s.SliceSpan.Start.IsZero() || w.Start.Before(s.SliceSpan.Start) {
				s.SliceSpan.Start = w.Start
			}
			if w.End.After(s.SliceSpan.End) {
				s.SliceSpan.End = w.End
			}
		}
	}
	s.RaySpan, _ = s.Apply.ResourceWindow("raytpu_ray_cluster.bench")
	logf("scale %d: plan -refresh-only, plan, and a plan that changes one slice", n)
	if s.Refresh, err = r.CLI.run(ctx, "scale-refresh", dir, []int{0, 2}, "plan", "-refresh-only", "-input=false", "-no-color", "-detailed-exitcode"); err != nil {
		return s, err
	}
	if s.Plan, err = r.CLI.run(ctx, "scale-plan", dir, []int{0, 2}, "plan", "-input=false", "-no-color", "-detailed-exitcode"); err != nil {
		return s, err
	}
	if err := write(n, s.RaySlices, true); err != nil {
		return s, err
	}
	if s.Change, err = r.CLI.run(ctx, "scale-plan-one-change", dir, []int{0, 2}, "plan", "-input=false", "-no-color", "-detailed-exitcode"); err != nil {
		return s, err
	}
	reqs, err := emu.Requests(ctx)
	if err != nil {
		return s, err
	}
	ops, err := listOperations(ctx, emu)
	if err != nil {
		return s, err
	}
	for _, o := range opsIn(ops, s.Apply.Window) {
		if o.Type == "CREATE_NODE_POOL" {
			s.Creations = append(s.Creations, o)
		}
	}
	s.MaxAtOnce = maxAtOnce(s.Creations)
	s.SliceCalls, s.RayCalls = map[string]int{}, map[string]int{}
	for _, q := range inWindow(reqs, s.Apply.Window) {
		if !s.RaySpan.Start.IsZero() && s.RaySpan.contains(q.Time) {
			s.RayCalls[q.RPC]++
		} else {
			s.SliceCalls[q.RPC]++
		}
	}
	s.RefreshCalls = countByRPC(inWindow(reqs, s.Refresh.Window))
	s.PlanCalls = countByRPC(inWindow(reqs, s.Plan.Window))
	s.Changed = countByRPC(inWindow(reqs, s.Change.Window))
	return s, saveJSON(filepath.Join(dir, "requests.json"), inWindow(reqs, window{s.Apply.Window.Start, s.Change.Window.End}))
}

// scaleConfig is one cluster with slices single-host slices and, when ray > 0, a RayCluster whose
// one worker group spans the first ray of them; changed gives the first slice a label.
func scaleConfig(slices, ray int, changed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

provider "raytpu" {
  project  = %q
  location = %q
}

resource "raytpu_cluster" "bench" {
  name                = "bench"
  deletion_protection = false
}
`, benchProject, benchLocation)
	if slices == 0 {
		return b.String()
	}
	labels := ""
	if changed {
		labels = "\n  labels     = count.index == 0 ? { bench = \"changed\" } : null"
	}
	fmt.Fprintf(&b, `
resource "raytpu_slice" "bench" {
  count      = %d
  cluster    = raytpu_cluster.bench.id
  name       = "slice-${count.index}"
  generation = %q
  topology   = %q%s
}
`, slices, sliceGeneration, scaleTopology, labels)
	if ray > 0 {
		fmt.Fprintf(&b, `
resource "raytpu_ray_cluster" "bench" {
  cluster_id    = raytpu_cluster.bench.id
  name          = "bench"
  worker_groups = [{ name = "workers", slices = slice(raytpu_slice.bench[*].id, 0, %d) }]
}
`, ray)
	}
	return b.String()
}

// renderScale writes row 6, one block per state of the scale benchmark, and returns its checks.
func renderScale(r results, row func(...string)) []bool {
	var checks []bool
	for _, s := range r.Scale {
		per := func(calls map[string]int) string {
			return fmt.Sprintf("%.2f a slice (%d: %s)", float64(total(calls))/float64(s.Slices), total(calls), byRPC(calls))
		}
		limit := s.waveLimit()
		applyOK := s.SliceSpan.End.Sub(s.SliceSpan.Start) <= time.Duration(float64(limit)*(1+scaleApplyShare))
		createOK := float64(total(s.SliceCalls))/float64(s.Slices) <= scaleCreateCalls
		refreshOK, planOK, changeOK := total(s.RefreshCalls) <= scaleHandfulCalls, total(s.PlanCalls) <= scaleHandfulCalls, total(s.Changed) <= scaleHandfulCalls
		checks = append(checks, applyOK, createOK, refreshOK, planOK, changeOK)
		row("6", fmt.Sprintf("%d single-host slices (%s %s) on 1 cluster, RayCluster over %d", s.Slices, sliceGeneration, scaleTopology, s.RaySlices))
		row("", "  slices' apply: first start to last ready", secs(s.SliceSpan.End.Sub(s.SliceSpan.Start)),
			fmt.Sprintf("<= wave limit + 5%% = %s", secs(time.Duration(float64(limit)*(1+scaleApplyShare)))), passFail(applyOK))
		row("", fmt.Sprintf("    wave limit: %d waves of %d x %s (mean CREATE_NODE_POOL)", (s.Slices+parallelWave-1)/parallelWave, parallelWave,
			secs(s.meanCreation())), secs(limit))
		row("", "    node pool creations at once, most", fmt.Sprintf("%d of %d", s.MaxAtOnce, len(s.Creations)))
		row("", "  GKE calls of the slices' create", per(s.SliceCalls), fmt.Sprintf("<= %.0f a slice", scaleCreateCalls), passFail(createOK))
		row("", fmt.Sprintf("  RayCluster over %d slices: wall, GKE calls", s.RaySlices), fmt.Sprintf("%s, %d (%s)", secs(s.RaySpan.End.Sub(s.RaySpan.Start)),
			total(s.RayCalls), byRPC(s.RayCalls)))
		row("", "  plan -refresh-only", fmt.Sprintf("%s, %s", secs(s.Refresh.Wall()), planOutcome(s.Refresh)))
		row("", "    GKE calls", per(s.RefreshCalls), fmt.Sprintf("<= %d", scaleHandfulCalls), passFail(refreshOK))
		row("", "  plan of the applied state", fmt.Sprintf("%s, %s", secs(s.Plan.Wall()), planOutcome(s.Plan)))
		row("", "    GKE calls", per(s.PlanCalls), fmt.Sprintf("<= %d", scaleHandfulCalls), passFail(planOK))
		row("", "  plan that changes one slice's labels", fmt.Sprintf("%s, %s", secs(s.Change.Wall()), planOutcome(s.Change)))
		row("", "    GKE calls", per(s.Changed), fmt.Sprintf("<= %d", scaleHandfulCalls), passFail(changeOK))
		row("", "  provider peak RSS: apply / plan", fmt.Sprintf("%s / %s", mib(s.Apply.PeakKiB), mib(s.Plan.PeakKiB)))
	}
	return checks
}

const scaleNotes = `- Row 6 applies a cluster, then many single-host slices and a RayCluster over some of them in one
  apply (CREATE_NODE_POOL at the apply latency, other operations at the setup latency). GKE creates
  up to 5 node pools of a cluster at once, so the slices cannot be ready sooner than the wave limit.
  Their GKE calls are the apply's outside the RayCluster's apply (its claims and checks of its
  slices are its own); the plans read the whole state: the cluster, every slice and the RayCluster.
- The same pools as terraform-provider-google's google_container_node_pool (built from its source at
  e03b762, measured by hand once on this emulator with these latencies, 2 busy CPUs): 24 pools
  ready in 31.3 s, 6.50 GKE calls a pool (CreateNodePool 54: it sends past GKE's five operations at
  once and retries what the quota refuses), a refresh and a plan in 2 calls each (ListNodePools and
  instanceGroupManagers.list); 144 pools ready in 161.5 s against a wave limit of about 145 s, 6.24
  calls a pool (CreateNodePool 292), a refresh and a plan in 2 calls each.
`

// scaleSummary is row 6 for the JSON summary.
func scaleSummary(runs []scaleRun) []map[string]any {
	out := []map[string]any{}
	for _, s := range runs {
		out = append(out, map[string]any{
			"slices": s.Slices, "ray_slices": s.RaySlices,
			"slices_apply_s": s.SliceSpan.End.Sub(s.SliceSpan.Start).Seconds(), "wave_limit_s": s.waveLimit().Seconds(),
			"max_at_once": s.MaxAtOnce, "slice_calls": s.SliceCalls, "ray_calls": s.RayCalls,
			"ray_apply_s":    s.RaySpan.End.Sub(s.RaySpan.Start).Seconds(),
			"refresh_wall_s": s.Refresh.Wall().Seconds(), "refresh_calls": s.RefreshCalls,
			"plan_wall_s": s.Plan.Wall().Seconds(), "plan_calls": s.PlanCalls,
			"change_wall_s": s.Change.Wall().Seconds(), "change_calls": s.Changed,
		})
	}
	return out
}
