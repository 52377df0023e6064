package acctest

import "testing"

// Features of the CLIs that some acceptance tests need, each with the lowest versions that have it.
// The provider's docs list them, in the order of Features, from these values (its index page's
// table of CLI versions, written by internal/provider/providerdoc).
var (
	// ProviderFunctions are functions of a provider, such as provider::raytpu::slice_shape.
	ProviderFunctions = Feature{
		Name:      "provider functions (`provider::raytpu::slice_shape`)",
		Terraform: "1.8.0",
		OpenTofu:  "1.7.0",
		Why:       "Terraform 1.8 CHANGELOG (provider-defined functions), OpenTofu 1.7 CHANGELOG (provider-defined functions)",
	}
	// ImportConfigGeneration is `plan -generate-config-out` for an imported resource.
	ImportConfigGeneration = Feature{
		Name:      "configuration generated on import (`plan -generate-config-out`)",
		Terraform: "1.5.0",
		// OpenTofu crashed generating configuration for a resource with computed nested attributes
		// until opentofu#3553 (opentofu#3555): seen in 1.10.6 and 1.10.10, fixed in 1.12.6.
		OpenTofu: "1.12.0",
		Why:      "Terraform 1.5 import blocks; opentofu#3555",
	}
	// MovedFromGoogle is a moved block from the google provider's google_container_node_pool or
	// google_container_cluster to raytpu_slice or raytpu_ray_operator (MoveResourceState).
	MovedFromGoogle = Feature{
		Name:      "`moved` blocks from `google_container_node_pool` and `google_container_cluster`",
		Terraform: "1.8.0",
		// OpenTofu has MoveResourceState, but sent the target's provider address as the source's
		// until 1.12.4 (opentofu#4355), so a move from the google provider was not recognised.
		OpenTofu: "1.12.4",
		Why:      "Terraform 1.8 MoveResourceState; opentofu#4355",
	}
	// EphemeralResources are ephemeral blocks, whose values never reach a plan or state.
	EphemeralResources = Feature{
		Name:      "ephemeral resources (`raytpu_cluster_credentials`)",
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
		Name:      "list resources (`terraform query`)",
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

// Features are all of the above, in the order the docs list them.
var Features = []Feature{ProviderFunctions, ImportConfigGeneration, MovedFromGoogle, EphemeralResources, ImportByIdentity, ListResources, Actions}

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
