package provider

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// testAccProtoV6ProviderFactories runs the provider in-process for the CLI under test.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"raytpu": providerserver.NewProtocol6WithError(New("test")()),
}

// testEmulator is the GKE emulator every acceptance test of the package talks to.
var testEmulator *emulator.Emulator

// testCLI is the Terraform-compatible CLI the acceptance tests drive.
var testCLI acctest.CLI

const (
	testProject  = "raytpu-acc"
	testLocation = "us-central2-b"
)

func TestMain(m *testing.M) {
	os.Exit(runAcceptanceTests(m))
}

func runAcceptanceTests(m *testing.M) int {
	cli, err := acctest.ConfigureCLI()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer cli.Close()
	fmt.Fprintf(os.Stderr, "acceptance tests run %s %s (%s)\n", cli.Name, cli.Version, cli.Path)
	testCLI = cli
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := emulator.Start(ctx, emulator.Options{DefaultLatency: 200 * time.Millisecond, RayCRDDelay: 500 * time.Millisecond, Logf: emulatorLog})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting the GKE emulator: %v\n(run `make tools` to build kube-apiserver and etcd)\n", err)
		return 1
	}
	defer e.Close()
	testEmulator = e
	// The emulated DNS-based control plane endpoints present certificates of the emulator's
	// stand-in for a public CA: trusted the way public roots are, so that the provider reaches them
	// as it reaches GKE's.
	if err := os.Setenv("SSL_CERT_FILE", e.DNSEndpointCAFile()); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	return m.Run()
}

// emulatorLog shows the emulator's own account of problems next to the test output.
func emulatorLog(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "emulator: "+format+"\n", args...)
}

// testAccProviderConfig points the provider at the emulator.
func testAccProviderConfig() string {
	return providerConfigAt(testEmulator.Endpoint(), true)
}

// providerConfigAt is the provider pointed at endpoint, with the emulator's token unless
// withToken is false (then the credentials come from the environment).
func providerConfigAt(endpoint string, withToken bool) string {
	token := ""
	if withToken {
		token = fmt.Sprintf("  access_token            = %q\n", testEmulator.Token())
	}
	return fmt.Sprintf(`
provider "raytpu" {
  project                 = %q
  location                = %q
  container_endpoint      = %q
  compute_endpoint        = %q
  operation_poll_interval = "250ms"
%s}
`, testProject, testLocation, endpoint, testEmulator.ComputeEndpoint(), token)
}

// setClusterLatencies slows (or speeds) the emulated GKE's work on one cluster of testProject
// only, so that the test setting them runs beside the others.
func setClusterLatencies(t *testing.T, cluster string, latencies map[string]time.Duration) {
	t.Helper()
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: cluster}
	if err := testEmulator.SetClusterLatencies(context.Background(), id.String(), latencies); err != nil {
		t.Fatal(err)
	}
}
