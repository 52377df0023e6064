package acctest

import "testing"

// Features of the CLIs that some acceptance tests need, each with the lowest versions that have it.
var (
	// EphemeralResources are ephemeral blocks, whose values never reach a plan or state.
	EphemeralResources = Feature{
		Name:      "ephemeral resources",
		Terraform: "1.10.0",
		OpenTofu:  "1.11.0",
		Why:       "Terraform 1.10 CHANGELOG (ephemeral resources), OpenTofu 1.11 CHANGELOG (ephemeral resources)",
	}
	// ImportByIdentity is an import block that names the resource by its identity instead of an id.
	ImportByIdentity = Feature{
		Name:      "import by resource identity",
		Terraform: "1.12.0",
		OpenTofu:  "1.12.0",
		Why:       "Terraform 1.12 CHANGELOG (resource identity), OpenTofu 1.12 CHANGELOG (import blocks take identity)",
	}
	// ListResources are list blocks in .tfquery.hcl files, run by `terraform query`, which can
	// write the configuration of what they find (-generate-config-out). OpenTofu has no query
	// command (1.12.6: `OpenTofu has no command named "query"`).
	ListResources = Feature{
		Name:      "list resources (terraform query)",
		Terraform: "1.14.0",
		Why:       "Terraform 1.14 CHANGELOG (list blocks and the query command); OpenTofu has none",
	}
	// Actions are action blocks, invoked by a resource's lifecycle action_trigger or by
	// `terraform apply -invoke`. OpenTofu has no action blocks.
	Actions = Feature{
		Name:      "actions",
		Terraform: "1.14.0",
		Why:       "Terraform 1.14 CHANGELOG (action blocks); OpenTofu has none",
	}
)

// RequireCLI lets the test go on only under a CLI that has f. Under any other it ends the test as
// skipped, with the message of Gate: the feature, the CLI and its version, and the versions that
// have it. The test then runs under the other CLI of `make test`, which must have the feature.
func RequireCLI(t testing.TB, cli CLI, f Feature) {
	t.Helper()
	if !cli.Supports(f) {
		t.Skip(cli.Gate(f))
	}
	t.Log(cli.Gate(f))
}
