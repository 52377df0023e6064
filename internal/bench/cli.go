package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// cliRunner runs the Terraform-compatible CLI on a working directory, with the provider built
// for the benchmark installed through a dev_overrides CLI configuration.
type cliRunner struct {
	Path    string
	Name    string // terraform or tofu
	Version string
	Plugin  string // absolute path of the provider binary
	// DebugLog writes the provider's debug log next to each run's output (it slows the provider).
	DebugLog bool
	env      []string
}

// newCLIRunner writes the CLI's configuration into dir and checks the CLI with it.
func newCLIRunner(path, plugin, dir string, extraEnv []string) (*cliRunner, error) {
	rc := filepath.Join(dir, "cli.tfrc")
	config := fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/raytpu/raytpu" = %q
    "registry.opentofu.org/raytpu/raytpu" = %q
  }
  direct {}
}
`, filepath.Dir(plugin), filepath.Dir(plugin))
	if err := os.WriteFile(rc, []byte(config), 0o600); err != nil {
		return nil, err
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + rc, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1"}
	for _, kv := range os.Environ() {
		// Nothing from the caller's environment may change what is measured: no credentials,
		// endpoints, CLI arguments or logging.
		if strings.HasPrefix(kv, "TF_") || strings.HasPrefix(kv, "GOOGLE_") || strings.HasPrefix(kv, "CLOUDSDK_") ||
			strings.HasPrefix(kv, "RAYTPU_CONTAINER_ENDPOINT=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, extraEnv...)
	// Run with the benchmark's configuration: a missing one makes OpenTofu print a warning on
	// stdout ahead of the JSON.
	version := exec.Command(path, "version", "-json")
	version.Env = env
	out, err := version.Output()
	if err != nil {
		return nil, fmt.Errorf("%s does not run (`make tools` builds it): %w", path, err)
	}
	v, err := acctest.VersionFromJSON(out)
	if err != nil {
		return nil, fmt.Errorf("reading `%s version -json`: %w", path, err)
	}
	return &cliRunner{Path: path, Name: filepath.Base(path), Version: v, Plugin: plugin, env: env}, nil
}

// uiEvent is one line of the CLI's machine-readable output (-json).
type uiEvent struct {
	Level     string    `json:"@level"`
	Message   string    `json:"@message"`
	Timestamp time.Time `json:"@timestamp"`
	Type      string    `json:"type"`
	Hook      struct {
		Resource struct {
			Addr string `json:"addr"`
		} `json:"resource"`
	} `json:"hook"`
	Diagnostic *struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
	} `json:"diagnostic"`
}

// cliRun is one timed run of the CLI.
type cliRun struct {
	Name     string // what was run, for the report
	Window   window
	ExitCode int
	// PeakKiB is the largest VmHWM of any provider process of the run; Processes counts them.
	PeakKiB   int64
	Processes int
	Events    []uiEvent // with -json
	Output    string    // path of the saved output
}

// Wall is the run's wall-clock time.
func (r cliRun) Wall() time.Duration { return r.Window.End.Sub(r.Window.Start) }

// ResourceWindow is the span between Terraform's apply_start and apply_complete of addr.
func (r cliRun) ResourceWindow(addr string) (window, bool) {
	var w window
	for _, e := range r.Events {
		if e.Hook.Resource.Addr != addr {
			continue
		}
		switch e.Type {
		case "apply_start":
			w.Start = e.Timestamp
		case "apply_complete":
			w.End = e.Timestamp
		}
	}
	return w, !w.Start.IsZero() && !w.End.IsZero()
}

// run runs the CLI in dir with args, timing it and sampling its provider processes' memory.
// okCodes are the exit codes that count as success (0 when none are given).
func (c *cliRunner) run(ctx context.Context, name, dir string, okCodes []int, args ...string) (cliRun, error) {
	out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".log")
	f, err := os.Create(out)
	if err != nil {
		return cliRun{}, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, c.Path, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = c.env
	if c.DebugLog {
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], "TF_LOG_PROVIDER=DEBUG", "TF_LOG_PATH="+strings.TrimSuffix(out, ".log")+".debug.log")
	}
	cmd.Stdout, cmd.Stderr = f, f
	run := cliRun{Name: name, Output: out}
	sampler := sampleRSS(c.Plugin, 50*time.Millisecond)
	run.Window.Start = time.Now()
	err = cmd.Run()
	run.Window.End = time.Now()
	run.PeakKiB, run.Processes = sampler.Stop()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.ExitCode = exit.ExitCode()
	case err != nil:
		return run, fmt.Errorf("%s: %w", name, err)
	}
	if len(okCodes) == 0 {
		okCodes = []int{0}
	}
	for _, a := range args {
		if a == "-json" {
			run.Events = readEvents(out)
		}
	}
	for _, code := range okCodes {
		if run.ExitCode == code {
			return run, nil
		}
	}
	return run, fmt.Errorf("%s %s exited with %d:\n%s", c.Name, name, run.ExitCode, failureText(out, run.Events))
}

func readEvents(path string) []uiEvent {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var events []uiEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e uiEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type != "" {
			events = append(events, e)
		}
	}
	return events
}

// failureText is what to show of a failed run: its error diagnostics, or the end of its output.
func failureText(path string, events []uiEvent) string {
	var diags []string
	for _, e := range events {
		if e.Diagnostic != nil && e.Diagnostic.Severity == "error" {
			diags = append(diags, e.Diagnostic.Summary+": "+e.Diagnostic.Detail)
		}
	}
	if len(diags) > 0 {
		return strings.Join(diags, "\n") + "\n(full output: " + path + ")"
	}
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b) + "\n(full output: " + path + ")"
}

// writeWorkspace makes dir an empty working directory holding main.tf.
func writeWorkspace(dir, mainTF string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644)
}

// benchConfig is one cluster with slices TPU slices of shape generation/topology. The
// provider's endpoint and token come from the environment, as a user's would in automation.
func benchConfig(project, location, pollInterval string, slices int, generation, topology string, waitForHosts bool) string {
	poll := ""
	if pollInterval != "" {
		poll = fmt.Sprintf("\n  operation_poll_interval = %q", pollInterval)
	}
	return fmt.Sprintf(`terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

provider "raytpu" {
  project  = %q
  location = %q%s
}

resource "raytpu_cluster" "bench" {
  name                = "bench"
  deletion_protection = false
}

resource "raytpu_slice" "bench" {
  count          = %d
  cluster        = raytpu_cluster.bench.id
  name           = "slice-${count.index}"
  generation     = %q
  topology       = %q
  wait_for_hosts = %t
}
`, project, location, poll, slices, generation, topology, waitForHosts)
}
