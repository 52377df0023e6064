package acctest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// EnvTestProvidersDir is the folder of the other providers the acceptance tests use (the
// kubernetes provider), built by `make tools` (tools/install-providers.sh); the Makefile sets it.
const EnvTestProvidersDir = "RAYTPU_TEST_PROVIDERS_DIR"

// testProviders are the providers of EnvTestProvidersDir, by source address: the CLI loads them
// from there (dev_overrides), as no registry is reachable.
var testProviders = map[string]string{"hashicorp/kubernetes": "terraform-provider-kubernetes"}

// providerOverrides is the CLI configuration that makes the CLI load the test providers from dir;
// empty when dir is unset. "hashicorp/kubernetes" resolves on each CLI's own registry host.
func providerOverrides(dir string) string {
	if dir == "" {
		return ""
	}
	s := "provider_installation {\n  dev_overrides {\n"
	for source := range testProviders {
		s += "    " + strconv.Quote(source) + " = " + strconv.Quote(dir) + "\n"
	}
	return s + "  }\n  direct {}\n}\n"
}

// RequireProvider fails the test unless the CLI can load the provider of source (a key of
// testProviders): it is built by `make tools`, and a test of it must not pass unseen without it.
func RequireProvider(t testing.TB, source string) {
	t.Helper()
	dir := os.Getenv(EnvTestProvidersDir)
	bin, ok := testProviders[source]
	if !ok {
		t.Fatalf("acctest: %s is not one of the test providers", source)
	}
	if dir == "" {
		t.Fatalf("%s is not set: the test needs the %s provider; run `make test` (it builds it), or `make tools` and set %s to the folder it prints",
			EnvTestProvidersDir, source, EnvTestProvidersDir)
	}
	if st, err := os.Stat(filepath.Join(dir, bin)); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("%s=%q has no executable %s (`make tools` builds it): %v", EnvTestProvidersDir, dir, bin, err)
	}
	t.Logf("the %s provider is loaded from %s", source, dir)
}
