// Package acctest holds what raytpu's acceptance tests share: which Terraform-compatible CLI they
// drive and how it is configured.
package acctest

import (
	"encoding/json"
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
)

// CLI describes the binary the acceptance tests run.
type CLI struct {
	Path    string
	Name    string // "terraform" or "tofu"
	Version string
}

// ConfigureCLI checks that the CLI named by TF_ACC_TERRAFORM_PATH exists and runs, and sets what
// terraform-plugin-testing needs for it (OpenTofu resolves providers under its own registry host).
// A missing CLI is an error, never a reason to skip: `make test` builds the pinned CLIs first.
func ConfigureCLI() (CLI, error) {
	path := os.Getenv(EnvCLIPath)
	if path == "" {
		return CLI{}, fmt.Errorf("%s is not set: acceptance tests need a terraform or tofu binary; "+
			"run `make test` (it builds the pinned CLIs), or `make tools` and set %s to the path it prints", EnvCLIPath, EnvCLIPath)
	}
	if !filepath.IsAbs(path) {
		return CLI{}, fmt.Errorf("%s=%q must be an absolute path", EnvCLIPath, path)
	}
	out, err := exec.Command(path, "version", "-json").Output()
	if err != nil {
		return CLI{}, fmt.Errorf("%s=%q does not run (`make tools` builds it): %w", EnvCLIPath, path, err)
	}
	var version struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &version); err != nil {
		return CLI{}, fmt.Errorf("reading `%s version -json`: %w", path, err)
	}
	cli := CLI{Path: path, Name: filepath.Base(path), Version: version.Version}
	if cli.Name == "tofu" {
		// OpenTofu's provider-development docs: tests address the provider on OpenTofu's registry.
		if err := setDefault(EnvProviderHost, "registry.opentofu.org"); err != nil {
			return CLI{}, err
		}
		if err := setDefault(EnvProviderNamespace, "hashicorp"); err != nil {
			return CLI{}, err
		}
	}
	return cli, nil
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
