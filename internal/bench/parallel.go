package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// parallelRun is one apply that adds slices to an existing cluster.
type parallelRun struct {
	Slices int
	Run    cliRun
	// Calls are the GKE calls of the apply, by RPC.
	Calls map[string]int
	// Creations are the apply's CREATE_NODE_POOL operations; MaxAtOnce is the most that ran at once.
	Creations []opInfo
	MaxAtOnce int
}

// CallsPerSlice is the apply's GKE calls divided by the slices it added.
func (p parallelRun) CallsPerSlice() float64 {
	if p.Slices == 0 {
		return 0
	}
	return float64(total(p.Calls)) / float64(p.Slices)
}

// benchParallel times two applies against one cluster whose node pool creations take r.Latency
// (every other operation r.SetupLatency): one that adds a single slice, and one that adds
// r.ParallelSlices. GKE runs node pool operations of one cluster side by side, up to 5, so the
// many should take about two waves of the one.
func benchParallel(ctx context.Context, r *results, emu *emulator.Emulator, dir string) error {
	if err := emu.Reset(ctx); err != nil {
		return err
	}
	if err := emu.SetLatencies(ctx, map[string]time.Duration{"default": r.SetupLatency, "CREATE_NODE_POOL": r.Latency}); err != nil {
		return err
	}
	apply := func(name string, slices int) (cliRun, error) {
		main := benchConfig(benchProject, benchLocation, "", slices, sliceGeneration, sliceTopology, true)
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
			return cliRun{}, err
		}
		return r.CLI.run(ctx, name, dir, nil, "apply", "-auto-approve", "-input=false", "-json")
	}
	if err := writeWorkspace(dir, ""); err != nil {
		return err
	}
	logf("applying a cluster for the parallel slices benchmark")
	if _, err := apply("apply-parallel-setup", 0); err != nil {
		return err
	}
	measure := func(name string, slices int) (parallelRun, error) {
		logf("adding %d slice(s) to the cluster (CREATE_NODE_POOL takes %s)", slices, r.Latency)
		run, err := apply(name, slices)
		if err != nil {
			return parallelRun{}, err
		}
		reqs, err := emu.Requests(ctx)
		if err != nil {
			return parallelRun{}, err
		}
		ops, err := listOperations(ctx, emu)
		if err != nil {
			return parallelRun{}, err
		}
		p := parallelRun{Slices: slices, Run: run, Calls: countByRPC(inWindow(reqs, run.Window))}
		for _, o := range opsIn(ops, run.Window) {
			if o.Type == "CREATE_NODE_POOL" {
				p.Creations = append(p.Creations, o)
			}
		}
		p.MaxAtOnce = maxAtOnce(p.Creations)
		return p, saveJSON(filepath.Join(dir, name+"-operations.json"), p.Creations)
	}
	var err error
	if r.ParallelOne, err = measure("apply-one-slice", 1); err != nil {
		return err
	}
	logf("removing that slice")
	if _, err := apply("apply-no-slice", 0); err != nil {
		return err
	}
	r.ParallelMany, err = measure(fmt.Sprintf("apply-%d-slices", r.ParallelSlices), r.ParallelSlices)
	return err
}

// maxAtOnce is the largest number of operations that ran at the same moment.
func maxAtOnce(ops []opInfo) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, o := range ops {
		if o.End.IsZero() {
			continue
		}
		edges = append(edges, edge{o.Start, 1}, edge{o.End, -1})
	}
	// At equal times an end comes first: an operation that starts as another ends did not overlap it.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta
		}
		return edges[i].at.Before(edges[j].at)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}
