// Package acctest holds what raytpu's acceptance tests share: which Terraform-compatible CLI they
// drive and how it is configured.
package acctest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hashicorp/go-version"
)

// Environment variables read by ConfigureCLI. terraform-plugin-testing reads the TF_ACC_ ones.
const (
	// EnvCLIPath is the absolute path of the terraform or tofu binary under test.
	EnvCLIPath = "TF_ACC_TERRAFORM_PATH"
	// EnvProviderHost and EnvProviderNamespace give the provider address that the CLI resolves.
	EnvProviderHost      = "TF_ACC_PROVIDER_HOST"
	EnvProviderNamespace = "TF_ACC_PROVIDER_NAMESPACE"
	// EnvCLIConfigFile is the CLI configuration file both CLIs read; ConfigureCLI sets it.
	EnvCLIConfigFile = "TF_CLI_CONFIG_FILE"
)

// CLI describes the binary the acceptance tests run.
type CLI struct {
	Path    string
	Name    string // "terraform" or "tofu"
	Version string
	// ConfigDir holds the CLI configuration file the tests run the CLI with; Close removes it.
	ConfigDir string
}

// ConfigureCLI checks that the CLI named by TF_ACC_TERRAFORM_PATH exists and runs, and sets what
// terraform-plugin-testing needs for it (OpenTofu resolves providers under its own registry host).
// A missing CLI is an error, never a reason to skip: `make test` builds the pinned CLIs first.
//
// The CLI runs with a CLI configuration file of the tests' own, for the whole test process, so
// that no setting of the machine applies and no warning about a missing file is printed (OpenTofu
// prints it to stdout, even for `version -json`). Close removes it once the tests are done.
func ConfigureCLI() (CLI, error) {
	path := os.Getenv(EnvCLIPath)
	if path == "" {
		return CLI{}, fmt.Errorf("%s is not set: acceptance tests need a terraform or tofu binary; "+
			"run `make test` (it builds the pinned CLIs), or `make tools` and set %s to the path it prints", EnvCLIPath, EnvCLIPath)
	}
	if !filepath.IsAbs(path) {
		return CLI{}, fmt.Errorf("%s=%q must be an absolute path", EnvCLIPath, path)
	}
	cli := CLI{Path: path, Name: filepath.Base(path)}
	dir, err := os.MkdirTemp("", "raytpu-acctest-cli-")
	if err != nil {
		return CLI{}, err
	}
	cli.ConfigDir = dir
	fail := func(err error) (CLI, error) {
		return CLI{}, errors.Join(err, cli.Close())
	}
	rc := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(rc, []byte(cliConfig+providerOverrides(os.Getenv(EnvTestProvidersDir))), 0o600); err != nil {
		return fail(err)
	}
	if err := os.Setenv(EnvCLIConfigFile, rc); err != nil {
		return fail(err)
	}
	out, err := exec.Command(path, "version", "-json").Output()
	if err != nil {
		return fail(fmt.Errorf("%s=%q does not run (`make tools` builds it): %w", EnvCLIPath, path, err))
	}
	if cli.Version, err = VersionFromJSON(out); err != nil {
		return fail(fmt.Errorf("reading `%s version -json`: %w", path, err))
	}
	if cli.Name == "tofu" {
		// OpenTofu's provider-development docs: tests address the provider on OpenTofu's registry.
		if err := setDefault(EnvProviderHost, "registry.opentofu.org"); err != nil {
			return fail(err)
		}
		if err := setDefault(EnvProviderNamespace, "hashicorp"); err != nil {
			return fail(err)
		}
	}
	return cli, nil
}

// cliConfig is the CLI configuration of the tests: nothing of the machine's, as
// terraform-plugin-testing runs raytpu in-process, and the test providers from their folder
// (providerOverrides).
const cliConfig = "# raytpu acceptance tests: no settings of the machine apply.\n"

// Close removes the CLI configuration that ConfigureCLI wrote.
func (c CLI) Close() error {
	if c.ConfigDir == "" {
		return nil
	}
	return os.RemoveAll(c.ConfigDir)
}

// VersionFromJSON reads the CLI version from the output of `terraform version -json` or
// `tofu version -json`. OpenTofu prints warnings about its CLI configuration to stdout, ahead of
// the JSON (Terraform prints them to stderr), so the JSON object is looked for at the start of
// each line.
func VersionFromJSON(out []byte) (string, error) {
	var firstErr error
	for line := out; len(line) > 0; {
		if line[0] == '{' {
			var v struct {
				Version string `json:"terraform_version"`
			}
			err := json.NewDecoder(bytes.NewReader(line)).Decode(&v)
			if err == nil && v.Version != "" {
				return v.Version, nil
			}
			if err == nil {
				err = errors.New("a JSON object without it")
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		_, line, _ = bytes.Cut(line, []byte("\n"))
	}
	if firstErr == nil {
		firstErr = errors.New("no JSON object")
	}
	if len(out) > 2000 {
		out = out[:2000]
	}
	return "", fmt.Errorf("no terraform_version (%v) in:\n%s", firstErr, out)
}

func setDefault(key, value string) error {
	if os.Getenv(key) != "" {
		return nil
	}
	return os.Setenv(key, value)
}

// Feature is something only some versions of the CLIs have, so that a test of it runs under the
// CLI that has it and says so under the one that does not, instead of failing or skipping silently.
type Feature struct {
	// Name says what the feature is, in the words of a skip message.
	Name string
	// Terraform and OpenTofu are the lowest versions that have it; "" for none.
	Terraform, OpenTofu string
	// Why names the source: a changelog entry or the issue of a bug fixed.
	Why string
}

// Supports reports whether the CLI under test has f.
func (c CLI) Supports(f Feature) bool {
	lowest := f.Terraform
	if c.Name == "tofu" {
		lowest = f.OpenTofu
	}
	if lowest == "" {
		return false
	}
	have, err1 := version.NewVersion(c.Version)
	want, err2 := version.NewVersion(lowest)
	return err1 == nil && err2 == nil && !have.LessThan(want)
}

// Gate describes why a CLI runs a test of f or not, for the test log.
func (c CLI) Gate(f Feature) string {
	verb := "runs"
	if !c.Supports(f) {
		verb = "does not run"
	}
	return fmt.Sprintf("%s %s %s the test of %s (Terraform >= %s, OpenTofu >= %s: %s)",
		c.Name, c.Version, verb, f.Name, orNone(f.Terraform), orNone(f.OpenTofu), f.Why)
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}
