package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// reattachedCLI runs the CLI under test against the provider served by this test process, as
// terraform-plugin-testing does (TF_REATTACH_PROVIDERS), for the commands it does not run itself,
// such as `terraform query -generate-config-out`. The provider answers under
// registry.terraform.io/raytpu/raytpu, the source "raytpu/raytpu" of the configurations, and
// stops when the test ends.
func reattachedCLI(t *testing.T) cliRunner {
	t.Helper()
	const address = "registry.terraform.io/raytpu/raytpu"
	ctx, cancel := context.WithCancel(context.Background())
	configs := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- tf6server.Serve(address, providerserver.NewProtocol6(New("test")()),
			tf6server.WithDebug(ctx, configs, closed), tf6server.WithGoPluginLogger(hclog.NewNullLogger()),
			tf6server.WithLoggingSink(t))
	}()
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	var rc *plugin.ReattachConfig
	select {
	case rc = <-configs:
	case err := <-served:
		t.Fatalf("serving the provider for the CLI: %v", err)
	case <-testwait.Context(t).Done():
		t.Fatal("serving the provider for the CLI: no reattach configuration by the test's deadline")
	}
	type addr struct{ Network, String string }
	reattach, err := json.Marshal(map[string]any{address: map[string]any{
		"Protocol": rc.Protocol, "ProtocolVersion": rc.ProtocolVersion, "Pid": rc.Pid, "Test": rc.Test,
		"Addr": addr{Network: rc.Addr.Network(), String: rc.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cliRunner{name: testCLI.Name, path: testCLI.Path, env: cliEnvironment(
		"TF_REATTACH_PROVIDERS="+string(reattach), "TF_CLI_CONFIG_FILE="+filepath.Join(testCLI.ConfigDir, "cli.tfrc"))}
}

// run runs the CLI in dir with args and returns its standard output; a failure ends the test
// with everything the CLI printed.
func (c cliRunner) run(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	out, code := c.runExit(t, dir, args...)
	if code != 0 {
		t.Fatalf("%s %v in %s exited with %d", c.name, args, dir, code)
	}
	return out
}

// runExit is run for commands whose exit code says something (plan -detailed-exitcode): it
// returns the code, and ends the test only when the CLI cannot run.
func (c cliRunner) runExit(t *testing.T, dir string, args ...string) ([]byte, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := c.command(testwait.Context(t), dir, c.env, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() != 0 {
			t.Logf("%s %v in %s exited with %d:\n%s%s", c.name, args, dir, exit.ExitCode(), stdout.Bytes(), stderr.Bytes())
		}
		return stdout.Bytes(), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s%s", c.name, args, dir, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), 0
}
