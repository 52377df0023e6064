package acctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTofu writes a script named tofu that answers `version -json` as OpenTofu 1.12.6 does: a
// CLI configuration file named by TF_CLI_CONFIG_FILE that does not exist gets a warning on
// stdout, ahead of the JSON. With always set, the warning comes whatever the configuration. The
// script records the TF_CLI_CONFIG_FILE it ran with in the file seen.
func fakeTofu(t *testing.T, always bool) (path, seen string) {
	t.Helper()
	dir := t.TempDir()
	path, seen = filepath.Join(dir, "tofu"), filepath.Join(dir, "seen")
	condition := `[ -n "${TF_CLI_CONFIG_FILE:-}" ] && [ ! -f "$TF_CLI_CONFIG_FILE" ]`
	if always {
		condition = "true"
	}
	script := `#!/bin/sh
printf '%s' "${TF_CLI_CONFIG_FILE:-}" >'` + seen + `'
if ` + condition + `; then
  printf '\nWarning: Unable to open CLI configuration file\n\nThe CLI configuration file at "%s" does not exist.\n' "${TF_CLI_CONFIG_FILE:-}"
fi
printf '{\n  "terraform_version": "1.12.6",\n  "platform": "linux_amd64",\n  "provider_selections": {}\n}\n'
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, seen
}

// configureFake runs ConfigureCLI on path with the environment of a machine whose
// TF_CLI_CONFIG_FILE names a file that does not exist; t.Setenv restores what ConfigureCLI sets.
func configureFake(t *testing.T, path string) (CLI, error) {
	t.Helper()
	t.Setenv(EnvCLIPath, path)
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(t.TempDir(), "missing.tfrc"))
	t.Setenv(EnvProviderHost, "")
	t.Setenv(EnvProviderNamespace, "")
	cli, err := ConfigureCLI()
	if err == nil {
		t.Cleanup(func() {
			if err := cli.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	return cli, err
}

func TestConfigureCLIGivesTheCLIItsOwnConfiguration(t *testing.T) {
	path, seen := fakeTofu(t, false)
	cli, err := configureFake(t, path)
	if err != nil {
		t.Fatalf("ConfigureCLI: %v", err)
	}
	if cli.Name != "tofu" || cli.Version != "1.12.6" || cli.Path != path {
		t.Errorf("ConfigureCLI = %+v, want tofu 1.12.6 at %s", cli, path)
	}
	rc := os.Getenv("TF_CLI_CONFIG_FILE")
	if _, err := os.Stat(rc); err != nil {
		t.Fatalf("TF_CLI_CONFIG_FILE=%q after ConfigureCLI, want a file the tests wrote: %v", rc, err)
	}
	if b, _ := os.ReadFile(seen); string(b) != rc {
		t.Errorf("the CLI ran with TF_CLI_CONFIG_FILE=%q, want %q", b, rc)
	}
	if got := os.Getenv(EnvProviderHost); got != "registry.opentofu.org" {
		t.Errorf("%s = %q, want OpenTofu's registry", EnvProviderHost, got)
	}
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rc); !os.IsNotExist(err) {
		t.Errorf("Close left %s behind (%v)", rc, err)
	}
}

func TestConfigureCLIReadsVersionAfterWarnings(t *testing.T) {
	path, _ := fakeTofu(t, true)
	cli, err := configureFake(t, path)
	if err != nil {
		t.Fatalf("ConfigureCLI: %v", err)
	}
	if cli.Version != "1.12.6" {
		t.Errorf("version = %q, want 1.12.6", cli.Version)
	}
}

func TestVersionFromJSON(t *testing.T) {
	const object = "{\n  \"terraform_version\": \"1.8.5\",\n  \"platform\": \"linux_amd64\"\n}\n"
	for _, tc := range []struct {
		name, out, want string
	}{
		{"terraform", object, "1.8.5"},
		{"tofu warning first", "\nWarning: Unable to open CLI configuration file\n\nThe CLI configuration file at \"/x\" does not exist.\n" + object, "1.8.5"},
		{"boxed warning first", "╷\n│ Warning: {odd}\n╵\n" + object, "1.8.5"},
		{"braces before the object", "{not json\n" + object, "1.8.5"},
		{"no object", "Terraform v1.8.5\non linux_amd64\n", ""},
		{"no version", "{\"platform\": \"linux_amd64\"}\n", ""},
		{"empty", "", ""},
	} {
		got, err := VersionFromJSON([]byte(tc.out))
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("%s: VersionFromJSON = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestConfigureCLIFailsWithoutACLI(t *testing.T) {
	t.Setenv(EnvCLIPath, "")
	if _, err := ConfigureCLI(); err == nil || !strings.Contains(err.Error(), "make test") {
		t.Errorf("ConfigureCLI without %s = %v, want an error that says how to get a CLI", EnvCLIPath, err)
	}
	t.Setenv(EnvCLIPath, filepath.Join(t.TempDir(), "terraform"))
	if _, err := ConfigureCLI(); err == nil {
		t.Error("ConfigureCLI with a CLI that does not exist succeeded")
	}
}

func TestFeatureGate(t *testing.T) {
	f := Feature{Name: "ephemeral resources", Terraform: "1.10.0", OpenTofu: "1.11.0", Why: "changelogs"}
	terraformOnly := Feature{Name: "x", Terraform: "1.5.0"}
	for _, tc := range []struct {
		cli     CLI
		feature Feature
		want    bool
	}{
		{CLI{Name: "terraform", Version: "1.8.5"}, f, false},
		{CLI{Name: "terraform", Version: "1.10.0"}, f, true},
		{CLI{Name: "tofu", Version: "1.10.6"}, f, false},
		{CLI{Name: "tofu", Version: "1.12.6"}, f, true},
		{CLI{Name: "tofu", Version: "1.12.6"}, terraformOnly, false},
		{CLI{Name: "terraform", Version: "1.8.5"}, terraformOnly, true},
	} {
		if got := tc.cli.Supports(tc.feature); got != tc.want {
			t.Errorf("%s %s supports %+v = %t, want %t", tc.cli.Name, tc.cli.Version, tc.feature, got, tc.want)
		}
	}
	gate := CLI{Name: "tofu", Version: "1.10.6"}.Gate(f)
	for _, want := range []string{"tofu 1.10.6 does not run the test of ephemeral resources", "Terraform >= 1.10.0", "OpenTofu >= 1.11.0", "changelogs"} {
		if !strings.Contains(gate, want) {
			t.Errorf("gate %q lacks %q", gate, want)
		}
	}
}
