package main

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// results is everything one benchmark run measured.
type results struct {
	When                  time.Time
	CLI                   *cliRunner
	Revision              string
	Machine               machine
	LoadStart, LoadEnd    loadAverage
	Latency, SetupLatency time.Duration
	Shape                 string

	Slices   int
	Apply    cliRun
	ApplyOps []opInfo
	// ApplyRayCRDs are the spans in which Ray Operator add-ons installed their CRDs.
	ApplyRayCRDs []window
	ApplyCalls   apiCalls

	RefreshSlices           int
	Setup, Refresh, Plan    cliRun
	RefreshCalls, PlanCalls map[string]int

	ParallelSlices            int
	ParallelOne, ParallelMany parallelRun

	// ScaleOnly is a run of the scale benchmark alone; Scale are its states, by slice count.
	ScaleOnly      bool
	ScaleRaySlices int
	Scale          []scaleRun
}

// The targets.
const (
	overheadShare = 0.05
	overheadFixed = 2 * time.Second
)

// figures are the derived numbers the table and the JSON summary show.
type figures struct {
	Wall, Emulated, Overhead, OverheadLimit time.Duration
	// Operations and RayCRDs (add-on installs outside operations) make up Emulated, the time the
	// emulated GKE was at work.
	Operations, RayCRDs time.Duration
	// Detecting is the part of the overhead spent between operations' ends and the calls that
	// saw them done, while the emulated GKE had nothing else to do; the rest is the CLI,
	// planning, reads and the Kubernetes checks.
	Detecting   time.Duration
	OverheadPct float64
	OverheadOK  bool

	SliceCallsPerSlice float64
	Waits              waitSummary
	CallsOK, DetectOK  bool

	RefreshCalls, PlanCalls, CallBudget int
	RefreshOK, PlanOK                   bool

	// ParallelLimit is the target for adding ParallelSlices slices: two waves of the one slice's
	// apply (GKE runs 5 node pool operations of a cluster at once), plus 2 s.
	ParallelLimit               time.Duration
	ParallelOK, ParallelCallsOK bool
}

func (r results) figures() figures {
	var f figures
	f.Wall = r.Apply.Wall()
	busy := make([]window, 0, len(r.ApplyOps)+len(r.ApplyRayCRDs))
	for _, o := range r.ApplyOps {
		if !o.End.IsZero() {
			busy = append(busy, window{o.Start, o.End})
		}
	}
	f.Operations = covered(busy)
	busy = append(busy, r.ApplyRayCRDs...)
	f.Emulated = covered(busy)
	f.RayCRDs = f.Emulated - f.Operations
	f.Overhead = f.Wall - f.Emulated
	if f.Emulated > 0 {
		f.OverheadPct = 100 * float64(f.Overhead) / float64(f.Emulated)
	}
	f.OverheadLimit = time.Duration(overheadShare*float64(f.Emulated)) + overheadFixed
	f.OverheadOK = f.Overhead <= f.OverheadLimit
	for _, w := range r.ApplyCalls.allWaits() {
		if w.Detected {
			f.Detecting += uncovered(window{w.Op.End, w.Op.End.Add(w.Detection)}, busy)
		}
	}

	f.SliceCallsPerSlice = float64(total(r.ApplyCalls.Slices)) / float64(r.Slices)
	f.Waits = summarize(r.ApplyCalls.Waits)
	f.CallsOK = f.Waits.N > 0 && f.Waits.Calls < f.Waits.FixedCalls
	f.DetectOK = f.Waits.N > 0 && f.Waits.Undetected == 0 && f.Waits.Detection < fixedPollDetection

	// The cluster resource reads its cluster once; each slice may read its node pool once.
	f.CallBudget = r.RefreshSlices + 1
	f.RefreshCalls, f.PlanCalls = total(r.RefreshCalls), total(r.PlanCalls)
	f.RefreshOK, f.PlanOK = f.RefreshCalls <= f.CallBudget, f.PlanCalls <= f.CallBudget

	waves := (r.ParallelSlices + parallelWave - 1) / parallelWave
	f.ParallelLimit = time.Duration(waves)*r.ParallelOne.Run.Wall() + overheadFixed
	f.ParallelOK = r.ParallelMany.Run.Wall() <= f.ParallelLimit
	f.ParallelCallsOK = r.ParallelMany.CallsPerSlice() <= r.ParallelOne.CallsPerSlice()
	return f
}

// parallelWave is how many node pool operations GKE runs at once on one cluster.
const parallelWave = 5

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// byRPC writes "GetNodePool 50, GetCluster 1".
func byRPC(m map[string]int) string {
	var parts []string
	for _, rpc := range sortedRPCs(m) {
		parts = append(parts, fmt.Sprintf("%s %d", rpc, m[rpc]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func planOutcome(run cliRun) string {
	if run.ExitCode == 2 {
		return "changes planned"
	}
	return "no changes"
}

// render is the report: a header saying what ran where, the table, per-operation detail and
// notes on how the numbers were obtained.
func render(r results) string {
	f := r.figures()
	var b strings.Builder
	fmt.Fprintf(&b, "raytpu benchmark, %s\n", r.When.UTC().Format("2006-01-02 15:04 UTC"))
	head := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(head, "CLI\t%s %s (%s)\n", r.CLI.Name, r.CLI.Version, r.CLI.Path)
	fmt.Fprintf(head, "provider\t%s, Go %s\n", r.Revision, r.Machine.Go)
	fmt.Fprintf(head, "machine\t%d CPUs, %s, %s RAM, %s\n", r.Machine.CPUs, r.Machine.Model, r.Machine.MemTotal, r.Machine.OS)
	fmt.Fprintf(head, "load average\t%s at start, %s at end (1, 5, 15 min)\n", r.LoadStart, r.LoadEnd)
	fmt.Fprintf(head, "emulator\tevery operation %s in rows 1, 2 and 5a, %s in 3 and 5b-d; in 4, 5e and 6, CREATE_NODE_POOL %s and other operations %s; KubeRay CRDs installed without delay\n",
		r.Latency, r.SetupLatency, r.Latency, r.SetupLatency)
	head.Flush()
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(cols ...string) {
		for len(cols) < 5 {
			cols = append(cols, "")
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	row("#", "measurement", "measured", "target", "result")
	var checks []bool
	if !r.ScaleOnly {
		checks = renderBase(r, f, row)
	}
	checks = append(checks, renderScale(r, row)...)
	tw.Flush()
	passed := 0
	for _, ok := range checks {
		if ok {
			passed++
		}
	}
	fmt.Fprintf(&b, "\n%d targets: %d PASS, %d FAIL\n", len(checks), passed, len(checks)-passed)
	if r.ScaleOnly {
		b.WriteString(scaleNotes)
		return b.String()
	}
	renderOperations(&b, r)
	b.WriteString(scaleNotes)
	fmt.Fprintf(&b, "- Memory: VmHWM of every %s process, sampled every 50 ms\n"+
		"  (the CLI also starts short-lived ones, to read the schema, which a sample may miss).\n", r.CLI.Plugin[strings.LastIndex(r.CLI.Plugin, "/")+1:])
	return b.String()
}

// renderBase writes rows 1 to 5 and returns their checks.
func renderBase(r results, f figures, row func(...string)) []bool {
	row("1", fmt.Sprintf("apply 1 cluster + %d slices (%s): wall", r.Slices, r.Shape), secs(f.Wall))
	row("", "  emulated GKE at work", secs(f.Emulated))
	row("", fmt.Sprintf("    operations (%d; a cluster's node pool operations run side by side)", len(r.ApplyOps)), secs(f.Operations))
	row("", fmt.Sprintf("    KubeRay CRDs being installed after the add-on is on (%d)", len(r.ApplyRayCRDs)), secs(f.RayCRDs))
	row("", "  provider overhead (wall - emulated)", fmt.Sprintf("%s = %.1f%%", secs(f.Overhead), f.OverheadPct),
		fmt.Sprintf("<= 5%% + 2 s = %s", secs(f.OverheadLimit)), passFail(f.OverheadOK))
	row("", "    seeing operations DONE after they ended", secs(f.Detecting))
	row("", "    the rest: CLI, plan, reads, KubeRay and host checks", secs(f.Overhead-f.Detecting))
	row("2", "GKE calls per slice, create through ready", fmt.Sprintf("%.2f (%d for %d)", f.SliceCallsPerSlice, total(r.ApplyCalls.Slices), r.Slices))
	for _, rpc := range sortedRPCs(r.ApplyCalls.Slices) {
		row("", "  "+rpc, fmt.Sprintf("%.2f", float64(r.ApplyCalls.Slices[rpc])/float64(r.Slices)))
	}
	row("", "  cluster resource, same apply", fmt.Sprintf("%d (%s)", total(r.ApplyCalls.Cluster), byRPC(r.ApplyCalls.Cluster)))
	row("", "  node pool wait per slice: create + polls + reads", fmt.Sprintf("%.2f", f.Waits.Calls),
		fmt.Sprintf("< %.2f (fixed 10 s poll)", f.Waits.FixedCalls), passFail(f.CallsOK))
	detected := secs(f.Waits.Detection) + " mean"
	if f.Waits.Undetected > 0 {
		detected += fmt.Sprintf(" (%d not found)", f.Waits.Undetected)
	}
	row("", "  DONE seen after the operation ended", detected,
		fmt.Sprintf("< %s (fixed 10 s poll, mean)", secs(fixedPollDetection)), passFail(f.DetectOK))
	row("3", fmt.Sprintf("plan -refresh-only, %d slices on 1 cluster", r.RefreshSlices), fmt.Sprintf("%s, %s", secs(r.Refresh.Wall()), planOutcome(r.Refresh)))
	row("", "  GKE calls of the refresh", fmt.Sprintf("%d (%s)", f.RefreshCalls, byRPC(r.RefreshCalls)),
		fmt.Sprintf("<= %d (1 a slice, 1 the cluster)", f.CallBudget), passFail(f.RefreshOK))
	row("", fmt.Sprintf("plan, %d slices on 1 cluster", r.RefreshSlices), fmt.Sprintf("%s, %s", secs(r.Plan.Wall()), planOutcome(r.Plan)))
	row("", "  GKE calls of the plan", fmt.Sprintf("%d (%s)", f.PlanCalls, byRPC(r.PlanCalls)),
		fmt.Sprintf("<= %d", f.CallBudget), passFail(f.PlanOK))
	row("", fmt.Sprintf("  (setup: apply of %d slices, not a target)", r.RefreshSlices), secs(r.Setup.Wall()))
	row("4", fmt.Sprintf("add 1 slice to a cluster (CREATE_NODE_POOL %s): wall", r.Latency), secs(r.ParallelOne.Run.Wall()))
	row("", fmt.Sprintf("add %d slices to the cluster: wall", r.ParallelSlices), secs(r.ParallelMany.Run.Wall()),
		fmt.Sprintf("<= %d x 1 slice + 2 s = %s", (r.ParallelSlices+parallelWave-1)/parallelWave, secs(f.ParallelLimit)), passFail(f.ParallelOK))
	row("", "  node pool creations at once, most", fmt.Sprintf("%d of %d", r.ParallelMany.MaxAtOnce, len(r.ParallelMany.Creations)))
	row("", "  GKE calls per slice: 1 slice / many", fmt.Sprintf("%.2f / %.2f", r.ParallelOne.CallsPerSlice(), r.ParallelMany.CallsPerSlice()),
		"many <= 1 slice", passFail(f.ParallelCallsOK))
	row("5", "provider peak RSS (VmHWM, largest process)")
	for i, run := range []struct {
		label string
		run   cliRun
	}{
		{fmt.Sprintf("apply 1 cluster + %d slices", r.Slices), r.Apply},
		{fmt.Sprintf("apply 1 cluster + %d slices", r.RefreshSlices), r.Setup},
		{fmt.Sprintf("plan -refresh-only, %d slices", r.RefreshSlices), r.Refresh},
		{fmt.Sprintf("plan, %d slices", r.RefreshSlices), r.Plan},
		{fmt.Sprintf("add %d slices to a cluster", r.ParallelSlices), r.ParallelMany.Run},
	} {
		row("", fmt.Sprintf("  %c. %s", 'a'+i, run.label), fmt.Sprintf("%s (%d processes)", mib(run.run.PeakKiB), run.run.Processes))
	}
	return []bool{f.OverheadOK, f.CallsOK, f.DetectOK, f.RefreshOK, f.PlanOK, f.ParallelOK, f.ParallelCallsOK}
}

// renderOperations lists the operations of apply 1.
func renderOperations(b *strings.Builder, r results) {
	b.WriteString("\nOperations of apply 1 (calls = the call that started it + GetOperation polls + reads of its target):\n")
	ow := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(ow, "  operation\ttarget\tduration\tcalls\tDONE seen after\tfixed 10 s poll: calls\t")
	waits := r.ApplyCalls.allWaits()
	for _, w := range waits {
		target, seen := w.Op.Pool, "not found"
		if target == "" {
			target = "cluster"
		}
		if w.Detected {
			seen = secs(w.Detection)
		}
		fmt.Fprintf(ow, "  %s\t%s\t%s\t%d\t%s\t%d\t\n", w.Op.Type, target, secs(w.Op.Duration()), w.Calls(), seen, w.FixedPollCalls())
	}
	ow.Flush()

	b.WriteString(`
Notes:
- Emulated time is the time the emulated GKE was at work, as the emulator reports it: its
  operations (start to end, overlaps counted once: GKE runs the node pool operations of a cluster
  side by side, up to 5, and cluster-level ones alone) and, outside them, the Ray Operator add-on
  installing the KubeRay CRDs, from being reported enabled to the CRDs Established, which
  raytpu_cluster waits for. The CRDs are a few MB of schema that a young kube-apiserver on this
  machine takes seconds to establish; GKE's add-on takes its own time for the same step.
- Row 4 adds slices to a cluster that already exists, in two applies: one slice, then (after
  removing it) many. GKE creates up to 5 node pools of one cluster at once, so many slices should
  take two waves of one slice, or fewer.
- Calls come from the emulator's request log. Node pool requests and polls of node pool operations
  are the slices'; CreateCluster, GetCluster and polls of the cluster's operation are the cluster
  resource's while Terraform applies it, and the slices' otherwise (their plan-time reads of the
  cluster and the read before creating a pool).
- An operation's wait is the call that started it, its GetOperation polls and the reads of its
  target (GetNodePool of the pool, GetCluster of the cluster) after it started. "DONE seen" is the
  first of those answered after the operation ended. The reference, a fixed 10 s poll, makes the
  call, ceil(duration / 10 s) polls and one read of the result: 3 calls for a slice of 5 s.
- A slice watches its hosts register in Kubernetes while GKE creates its pool, reading the
  operation only every operation_poll_interval (to see a failure); once the hosts are Ready, the
  read of the pool that the slice needs anyway finds it RUNNING and ends the wait. When the hosts
  are Ready a moment before GKE marks the pool RUNNING, one more read, a quarter second later,
  does (3 calls and 0.25 s instead of 2 and 0 s).
`)
}

// summary is the machine-readable form of the results, written next to the table.
func (r results) summary() map[string]any {
	f := r.figures()
	waits := []map[string]any{}
	for _, w := range r.ApplyCalls.allWaits() {
		waits = append(waits, map[string]any{
			"type": w.Op.Type, "pool": w.Op.Pool, "duration_s": w.Op.Duration().Seconds(), "calls": w.Calls(),
			"detected": w.Detected, "detection_s": w.Detection.Seconds(), "fixed_poll_calls": w.FixedPollCalls(),
		})
	}
	round := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	return map[string]any{
		"when": r.When.UTC(), "cli": r.CLI.Name + " " + r.CLI.Version, "revision": r.Revision,
		"cpus": r.Machine.CPUs, "load_start": r.LoadStart, "load_end": r.LoadEnd,
		"latency_s": r.Latency.Seconds(), "slices": r.Slices,
		"apply_wall_s": round(f.Wall.Seconds()), "emulated_s": round(f.Emulated.Seconds()),
		"operations_s": round(f.Operations.Seconds()), "ray_crds_s": round(f.RayCRDs.Seconds()),
		"overhead_s": round(f.Overhead.Seconds()), "overhead_pct": round(f.OverheadPct), "overhead_ok": f.OverheadOK,
		"detecting_s": round(f.Detecting.Seconds()),
		"slice_calls": r.ApplyCalls.Slices, "cluster_calls": r.ApplyCalls.Cluster,
		"wait_calls_mean": round(f.Waits.Calls), "fixed_poll_calls_mean": round(f.Waits.FixedCalls),
		"detection_mean_s": round(f.Waits.Detection.Seconds()), "calls_ok": f.CallsOK, "detection_ok": f.DetectOK,
		"operations":     waits,
		"refresh_slices": r.RefreshSlices,
		"refresh_wall_s": round(r.Refresh.Wall().Seconds()), "refresh_calls": r.RefreshCalls, "refresh_ok": f.RefreshOK,
		"plan_wall_s": round(r.Plan.Wall().Seconds()), "plan_calls": r.PlanCalls, "plan_ok": f.PlanOK,
		"setup_wall_s":    round(r.Setup.Wall().Seconds()),
		"parallel_slices": r.ParallelSlices, "one_slice_wall_s": round(r.ParallelOne.Run.Wall().Seconds()),
		"parallel_wall_s": round(r.ParallelMany.Run.Wall().Seconds()), "parallel_limit_s": round(f.ParallelLimit.Seconds()),
		"parallel_ok": f.ParallelOK, "parallel_max_at_once": r.ParallelMany.MaxAtOnce,
		"one_slice_calls": r.ParallelOne.Calls, "parallel_calls": r.ParallelMany.Calls, "parallel_calls_ok": f.ParallelCallsOK,
		"scale": scaleSummary(r.Scale),
		"peak_rss_kib": map[string]int64{
			"apply": r.Apply.PeakKiB, "apply_refresh_setup": r.Setup.PeakKiB, "plan_refresh_only": r.Refresh.PeakKiB, "plan": r.Plan.PeakKiB,
			"apply_parallel": r.ParallelMany.Run.PeakKiB,
		},
	}
}
