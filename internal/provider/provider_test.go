package provider

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// testAccProtoV6ProviderFactories runs the provider in-process for the CLI under test.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"raytpu": providerserver.NewProtocol6WithError(New("test")()),
}

func TestMain(m *testing.M) {
	cli, err := acctest.ConfigureCLI()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "acceptance tests run %s %s (%s)\n", cli.Name, cli.Version, cli.Path)
	os.Exit(m.Run())
}
