// Command bench measures raytpu the way a user meets it: it builds the provider, starts the local
// GKE emulator with a chosen operation latency, and drives the real Terraform (or OpenTofu) CLI
// through a dev_overrides configuration. It reports the provider's overhead on an apply of one
// cluster and a few slices, the GKE API calls each slice costs and how soon the provider sees an
// operation finish (against a fixed 10-second poll), plan and refresh of 50 slices with the GKE
// calls of a refresh, how long 8 slices added to one cluster take against one, the provider's
// peak memory, and, at scale, 24 (or more: -scale-slices 24,144) single-host slices on one
// cluster with a RayCluster over 16 of them: the apply against GKE's waves of five node pool
// creations, and the GKE calls per slice of the create, a refresh, a plan and a plan that changes
// one slice. `make bench` runs it; the table goes to stdout and to a file in the output folder.
//
// Usage:
//
//	go run ./internal/bench -cli /path/to/terraform [-latency 5s] [-slices 4] [-refresh-slices 50] [-parallel-slices 8]
//	    [-scale-slices 24] [-scale-ray-slices 16] [-scale-only] [-out .run/bench]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

const (
	benchProject    = "raytpu-bench"
	benchLocation   = "us-central2-b"
	sliceGeneration = "v6e"
	sliceTopology   = "4x4"
)

type options struct {
	cli           string
	latency       time.Duration
	slices        int
	refreshSlices int
	parallel      int
	setupLatency  time.Duration
	out           string
	maxLoad       float64
	loadWait      time.Duration
	debugLog      bool
	provider      string
	scale         string
	scaleRay      int
	scaleOnly     bool
}

func main() {
	var o options
	flag.StringVar(&o.cli, "cli", "", "absolute path of the terraform or tofu binary (required)")
	flag.DurationVar(&o.latency, "latency", 5*time.Second, "emulated latency of every GKE operation in the apply benchmark")
	flag.IntVar(&o.slices, "slices", 4, "slices created with the cluster in the apply benchmark")
	flag.IntVar(&o.refreshSlices, "refresh-slices", 50, "slices in state for the plan and refresh benchmark")
	flag.IntVar(&o.parallel, "parallel-slices", 8, "slices added to one cluster in one apply in the parallel slices benchmark")
	flag.DurationVar(&o.setupLatency, "setup-latency", 200*time.Millisecond, "emulated operation latency while creating the slices of the plan and refresh benchmark")
	flag.StringVar(&o.out, "out", ".run/bench", "folder for the results, the provider binary and the working directories")
	flag.Float64Var(&o.maxLoad, "max-load", 0, "wait until the one-minute load average is at most this before measuring (0: do not wait)")
	flag.DurationVar(&o.loadWait, "load-wait", 10*time.Minute, "longest wait for -max-load")
	flag.BoolVar(&o.debugLog, "debug-log", false, "write the provider's debug log next to each CLI run's output (slows the provider: for looking into a number, not for measuring)")
	flag.StringVar(&o.provider, "provider", "", "measure this terraform-provider-raytpu binary instead of building one (to compare two builds)")
	flag.StringVar(&o.scale, "scale-slices", "24", "comma-separated slice counts of the scale benchmark (single-host slices on one cluster), \"\" for none")
	flag.IntVar(&o.scaleRay, "scale-ray-slices", 16, "slices the scale benchmark's RayCluster spans")
	flag.BoolVar(&o.scaleOnly, "scale-only", false, "run the scale benchmark alone")
	flag.Parse()
	// Interrupted, it still closes the emulator and the kube-apiservers it started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func run(ctx context.Context, o options) error {
	if !filepath.IsAbs(o.cli) {
		return fmt.Errorf("-cli %q: give the absolute path of a terraform or tofu binary (`make bench` passes the pinned one)", o.cli)
	}
	scale, err := parseScale(o.scale)
	if err != nil {
		return err
	}
	if o.scaleOnly && len(scale) == 0 {
		return fmt.Errorf("-scale-only needs -scale-slices")
	}
	if o.slices < 1 || o.refreshSlices < 1 || o.parallel < 1 || o.latency <= 0 || o.setupLatency <= 0 {
		return fmt.Errorf("-slices, -refresh-slices and -parallel-slices must be at least 1, -latency and -setup-latency positive")
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	rev := "built from " + revision(root)
	plugin := filepath.Join(out, "plugins", "terraform-provider-raytpu")
	if o.provider != "" {
		if plugin, err = filepath.Abs(o.provider); err != nil {
			return err
		}
		if filepath.Base(plugin) != "terraform-provider-raytpu" {
			return fmt.Errorf("-provider %s: the CLI finds the provider by its name, terraform-provider-raytpu", o.provider)
		}
		rev = "the binary " + plugin
	} else {
		logf("building the provider into %s", plugin)
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X main.version=bench", "-o", plugin, ".")
		build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the provider: %w", err)
		}
	}
	// Built first: what is measured is the provider as it was when the benchmark started.
	if o.maxLoad > 0 {
		waitForQuiet(o.maxLoad, o.loadWait, logf)
	}
	r := results{When: time.Now(), Revision: rev, Machine: describeMachine(), LoadStart: readLoad(), Latency: o.latency,
		SetupLatency: o.setupLatency, Slices: o.slices, RefreshSlices: o.refreshSlices, ParallelSlices: o.parallel,
		Shape: sliceGeneration + " " + sliceTopology, ScaleRaySlices: o.scaleRay, ScaleOnly: o.scaleOnly}

	logf("starting the GKE emulator (operations take %s)", o.latency)
	emu, err := emulator.Start(ctx, emulator.Options{DefaultLatency: o.latency, RayCRDDelay: -1,
		Logf: func(format string, args ...any) { logf("emulator: "+format, args...) }})
	if err != nil {
		return fmt.Errorf("starting the GKE emulator (`make tools` builds kube-apiserver and etcd): %w", err)
	}
	defer emu.Close()
	cli, err := newCLIRunner(o.cli, plugin, out, []string{
		"RAYTPU_CONTAINER_ENDPOINT=" + emu.Endpoint(), "GOOGLE_OAUTH_ACCESS_TOKEN=" + emu.Token(),
	})
	if err != nil {
		return err
	}
	cli.DebugLog = o.debugLog
	r.CLI = cli
	if !o.scaleOnly {
		if err := benchApply(ctx, &r, emu, filepath.Join(out, "work", "apply")); err != nil {
			return err
		}
		if err := benchRefresh(ctx, &r, emu, filepath.Join(out, "work", "refresh")); err != nil {
			return err
		}
		if err := benchParallel(ctx, &r, emu, filepath.Join(out, "work", "parallel")); err != nil {
			return err
		}
	}
	for _, n := range scale {
		s, err := benchScale(ctx, &r, emu, filepath.Join(out, "work", fmt.Sprintf("scale-%d", n)), n)
		if err != nil {
			return err
		}
		r.Scale = append(r.Scale, s)
	}
	r.LoadEnd = readLoad()

	table := render(r)
	fmt.Print(table)
	stamp := r.When.UTC().Format("20060102-150405")
	file := filepath.Join(out, "bench-"+stamp+".txt")
	if err := os.WriteFile(file, []byte(table), 0o644); err != nil {
		return err
	}
	if err := saveJSON(filepath.Join(out, "bench-"+stamp+".json"), r.summary()); err != nil {
		return err
	}
	fmt.Printf("\nwritten to %s (and .json)\n", file)
	return nil
}

// benchApply applies one cluster and r.Slices slices at the emulator's latency and splits the
// GKE calls of the apply between them.
func benchApply(ctx context.Context, r *results, emu *emulator.Emulator, dir string) error {
	if err := writeWorkspace(dir, benchConfig(benchProject, benchLocation, "", r.Slices, sliceGeneration, sliceTopology, true)); err != nil {
		return err
	}
	logf("applying 1 cluster and %d slices with %s %s", r.Slices, r.CLI.Name, r.CLI.Version)
	run, err := r.CLI.run(ctx, "apply", dir, nil, "apply", "-auto-approve", "-input=false", "-json")
	if err != nil {
		return err
	}
	r.Apply = run
	reqs, err := emu.Requests(ctx)
	if err != nil {
		return err
	}
	ops, err := listOperations(ctx, emu)
	if err != nil {
		return err
	}
	if err := saveJSON(filepath.Join(dir, "requests.json"), inWindow(reqs, run.Window)); err != nil {
		return err
	}
	clusterApply, ok := run.ResourceWindow("raytpu_cluster.bench")
	if !ok {
		return fmt.Errorf("the apply's output (%s) has no apply_start and apply_complete of raytpu_cluster.bench", run.Output)
	}
	r.ApplyOps = opsIn(ops, run.Window)
	installs, err := emu.RayCRDInstalls(ctx)
	if err != nil {
		return err
	}
	for _, in := range installs {
		if run.Window.contains(in.Start) {
			r.ApplyRayCRDs = append(r.ApplyRayCRDs, window{in.Start, in.End})
		}
	}
	if err := saveJSON(filepath.Join(dir, "operations.json"), r.ApplyOps); err != nil {
		return err
	}
	r.ApplyCalls = attributeCalls(inWindow(reqs, run.Window), r.ApplyOps, clusterApply)
	return nil
}

// benchRefresh puts r.RefreshSlices slices in state (quickly: a short operation latency, no wait
// for hosts) and times plan -refresh-only and plan on it, counting their GKE calls.
func benchRefresh(ctx context.Context, r *results, emu *emulator.Emulator, dir string) error {
	if err := emu.Reset(ctx); err != nil {
		return err
	}
	if err := emu.SetLatencies(ctx, map[string]time.Duration{"default": r.SetupLatency}); err != nil {
		return err
	}
	poll := r.SetupLatency.String()
	if err := writeWorkspace(dir, benchConfig(benchProject, benchLocation, poll, r.RefreshSlices, sliceGeneration, sliceTopology, false)); err != nil {
		return err
	}
	logf("applying 1 cluster and %d slices for the plan and refresh benchmark", r.RefreshSlices)
	setup, err := r.CLI.run(ctx, "apply-refresh-setup", dir, nil, "apply", "-auto-approve", "-input=false", "-json")
	if err != nil {
		return err
	}
	r.Setup = setup
	logf("timing plan -refresh-only and plan")
	// -detailed-exitcode: 2 means the plan has changes, which the report shows.
	if r.Refresh, err = r.CLI.run(ctx, "plan-refresh-only", dir, []int{0, 2}, "plan", "-refresh-only", "-input=false", "-no-color", "-detailed-exitcode"); err != nil {
		return err
	}
	if r.Plan, err = r.CLI.run(ctx, "plan", dir, []int{0, 2}, "plan", "-input=false", "-no-color", "-detailed-exitcode"); err != nil {
		return err
	}
	reqs, err := emu.Requests(ctx)
	if err != nil {
		return err
	}
	r.RefreshCalls = countByRPC(inWindow(reqs, r.Refresh.Window))
	r.PlanCalls = countByRPC(inWindow(reqs, r.Plan.Window))
	return nil
}

// listOperations reads every operation of the benchmark's project and location.
func listOperations(ctx context.Context, emu *emulator.Emulator) ([]opInfo, error) {
	c, err := container.NewClusterManagerRESTClient(ctx, option.WithEndpoint(emu.Endpoint()),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: emu.Token()})))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	resp, err := c.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: "projects/" + benchProject + "/locations/" + benchLocation})
	if err != nil {
		return nil, fmt.Errorf("listing the emulator's operations: %w", err)
	}
	ops := make([]opInfo, 0, len(resp.GetOperations()))
	for _, op := range resp.GetOperations() {
		ops = append(ops, newOpInfo(op))
	}
	return ops, nil
}

// saveJSON keeps raw measurements next to the run's output, for a closer look.
func saveJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run the benchmark from inside the provider's module (go env GOMOD: %q, %v)", mod, err)
	}
	return filepath.Dir(mod), nil
}

// revision names the commit the provider was built from, marked when the tree has changes.
func revision(root string) string {
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
