// Command raytpu-emulator runs the GKE emulator standalone, for the quickstart and for trying the
// provider by hand. It prints the settings that point the provider at it:
//
//	export RAYTPU_CONTAINER_ENDPOINT=http://127.0.0.1:PORT
//	export RAYTPU_COMPUTE_ENDPOINT=http://127.0.0.1:PORT/compute/v1/
//	export GOOGLE_OAUTH_ACCESS_TOKEN=<the token it accepts>
//
// and serves until SIGINT or SIGTERM, when it stops every kube-apiserver and etcd it started.
// With -state-dir, clusters and node pools (and the objects in the clusters) survive a restart,
// and so do the generated token and the listen address, so the export lines stay valid.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "raytpu-emulator:", err)
		}
		os.Exit(1)
	}
}

// run parses flags, starts the emulator, prints the environment settings and serves until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("raytpu-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		listen    = fs.String("listen", "127.0.0.1:0", "listen address (loopback only); port 0 picks a free port")
		token     = fs.String("token", "", "bearer token to accept (default: a random one, printed)")
		stateDir  = fs.String("state-dir", "", "folder that keeps clusters, node pools and cluster contents across restarts (default: none)")
		latency   = fs.Duration("latency", 2*time.Second, "time an operation takes (PENDING → RUNNING → DONE)")
		latencies = fs.String("latencies", "", "per operation type, e.g. CREATE_NODE_POOL=30s,DELETE_NODE_POOL=10s")
		rayDelay  = fs.Duration("ray-crd-delay", 5*time.Second, "gap between enabling the Ray Operator add-on and its CRDs being served")
		maxOps    = fs.Int("max-node-pool-operations", emulator.DefaultMaxNodePoolOperations, "node pool operations that may run at once on one cluster, as GKE's concurrent operations quota (negative: unlimited)")
		binDir    = fs.String("kube-bin-dir", "", "folder with kube-apiserver, etcd, kube-scheduler, ray-operator and kuberay-crds/ (default: $"+emulator.EnvKubeBinDir+" or "+emulator.DefaultKubeBinDir()+")")
		envFile   = fs.String("env-file", "", "also write the export lines to this file (for scripts)")
		verbose   = fs.Bool("v", false, "log progress to stderr")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: raytpu-emulator [flags]\n\nRuns a local GKE control plane whose clusters are real kube-apiservers.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	perType, err := parseLatencies(*latencies)
	if err != nil {
		return err
	}
	opts := emulator.Options{
		Addr: *listen, Token: *token, StateDir: *stateDir, KubeBinDir: *binDir,
		DefaultLatency: *latency, Latencies: perType, RayCRDDelay: *rayDelay, MaxNodePoolOperations: *maxOps,
	}
	if opts.RayCRDDelay == 0 {
		opts.RayCRDDelay = -1
	}
	if opts.DefaultLatency == 0 {
		opts.DefaultLatency = time.Nanosecond
	}
	logger := log.New(stderr, "raytpu-emulator: ", log.LstdFlags)
	if *verbose {
		opts.Logf = logger.Printf
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	e, err := emulator.Start(startCtx, opts)
	cancel()
	if err != nil {
		return err
	}
	exports := fmt.Sprintf("export RAYTPU_CONTAINER_ENDPOINT=%s\nexport RAYTPU_COMPUTE_ENDPOINT=%s\nexport GOOGLE_OAUTH_ACCESS_TOKEN=%s\n",
		e.Endpoint(), e.ComputeEndpoint(), e.Token())
	if *envFile != "" {
		if err := os.WriteFile(*envFile, []byte(exports), 0o600); err != nil {
			e.Close()
			return err
		}
	}
	state := "in memory"
	if *stateDir != "" {
		state = "state in " + *stateDir
	}
	logger.Printf("serving GKE at %s and Compute Engine at %s (%s); point the provider at it with:", e.Endpoint(), e.ComputeEndpoint(), state)
	fmt.Fprint(stdout, exports)
	// Clusters' DNS-based endpoints (localhost:PORT) present certificates of this CA, GKE's
	// publicly trusted roots in the emulator: a client trusts it with SSL_CERT_FILE.
	fmt.Fprintf(stdout, "# DNS-based endpoints are signed by the CA in %s (trust it with SSL_CERT_FILE)\n", e.DNSEndpointCAFile())
	<-ctx.Done()
	logger.Printf("stopping")
	return e.Close()
}

// parseLatencies reads TYPE=DURATION pairs separated by commas.
func parseLatencies(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("-latencies: %q is not TYPE=DURATION", kv)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("-latencies: %s: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}
