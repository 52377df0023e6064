package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// The examples under examples/ feed the registry docs. These tests hold every one of them to what
// a user would run: the CLI under test (TF_ACC_TERRAFORM_PATH, Terraform or OpenTofu) checks its
// formatting and validates it against this provider, built once and installed through a
// dev_overrides CLI configuration, so no registry is involved and no other provider is available.

// exampleNeeds are the examples that need more than raytpu under every supported CLI: a feature of
// newer CLIs (validated only under a CLI that has it; the test log says why under the other), or
// files that configure other providers, which this test cannot install: those files are checked
// for format only, and the rest of the example is validated without them.
var exampleNeeds = map[string]struct {
	feature        *acctest.Feature
	otherProviders []string
}{
	"ephemeral-resources/raytpu_cluster_credentials": {feature: &acctest.EphemeralResources},
	"guides/kubernetes-and-helm":                     {feature: &acctest.EphemeralResources, otherProviders: []string{"kubernetes.tf"}},
	"list-resources/raytpu_cluster":                  {feature: &acctest.ListResources},
	"list-resources/raytpu_slice":                    {feature: &acctest.ListResources},
	"actions/raytpu_drain_slice":                     {feature: &acctest.Actions},
	"actions/raytpu_recreate_slice":                  {feature: &acctest.Actions},
	"actions/raytpu_submit_ray_job":                  {feature: &acctest.Actions},
	"actions/raytpu_uncordon_slice":                  {feature: &acctest.Actions},
}

// examplesDir is the examples folder, relative to this package.
const examplesDir = "../../examples"

// providerAddresses are the addresses under which the CLIs resolve source = "raytpu/raytpu".
var providerAddresses = []string{"registry.terraform.io/raytpu/raytpu", "registry.opentofu.org/raytpu/raytpu"}

// TestAccExamples builds the provider once into its own temporary folder, which lives until every
// subtest, parallel ones included, is done.
func TestAccExamples(t *testing.T) {
	t.Parallel()
	cli := buildExamplesCLI(t)
	t.Run("every type has examples", testExamplesCoverEveryType)
	t.Run("import ids", testExamplesImportIDs)
	for _, dir := range exampleDirs(t) {
		t.Run("validate "+dir, func(t *testing.T) {
			t.Parallel()
			cli.checkFormat(t, dir)
			if need, ok := exampleNeeds[dir]; ok && need.feature != nil {
				acctest.RequireCLI(t, testCLI, *need.feature)
			}
			if msg := formatDiagnostics(cli.validate(t, dir)); msg != "" {
				t.Fatalf("%s validate of examples/%s:\n%s(Examples run with raytpu as the only provider: take the ids of other "+
					"providers' resources from variables.)", cli.name, dir, msg)
			}
		})
	}
	t.Run("apply guides/local-emulator", func(t *testing.T) {
		t.Parallel()
		testExamplesLocalEmulatorApplies(t, cli)
	})
}

// testExamplesCoverEveryType checks that every resource, data source, list resource, action and
// function has the examples tfplugindocs renders into its page, and that no example names a type
// that does not exist.
func testExamplesCoverEveryType(t *testing.T) {
	t.Parallel()
	served := servedTypes(t)
	want := map[string]string{
		"resource": "resources/%s/resource.tf", "data source": "data-sources/%s/data-source.tf", "function": "functions/%s/function.tf",
		"list resource": "list-resources/%s/list-resource.tfquery.hcl", "action": "actions/%s/action.tf",
	}
	for kind, pattern := range want {
		for name := range served[kind] {
			if _, err := os.Stat(filepath.Join(examplesDir, fmt.Sprintf(pattern, name))); err != nil {
				t.Errorf("%s %s has no example: write examples/%s", kind, name, fmt.Sprintf(pattern, name))
			}
		}
	}
	for name := range served["importable"] {
		if _, err := os.Stat(filepath.Join(examplesDir, "resources", name, "import.sh")); err != nil {
			t.Errorf("resource %s can be imported but has no examples/resources/%s/import.sh", name, name)
		}
	}
	folders := map[string]string{
		"resources": "resource", "data-sources": "data source", "functions": "function", "list-resources": "list resource", "actions": "action",
	}
	for folder, kind := range folders {
		entries, err := os.ReadDir(filepath.Join(examplesDir, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !served[kind][e.Name()] {
				t.Errorf("examples/%s/%s is not a %s of the provider", folder, e.Name(), kind)
			}
		}
	}
}

// testExamplesImportIDs runs every `terraform import` line of the import.sh examples through the
// resource's own ImportState, with a provider whose project is set (for the short forms).
func testExamplesImportIDs(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Glob(filepath.Join(examplesDir, "resources", "*", "import.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, script := range scripts {
		typeName := filepath.Base(filepath.Dir(script))
		t.Run(typeName, func(t *testing.T) {
			content, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			imports := 0
			for i, line := range strings.Split(string(content), "\n") {
				fields := strings.Fields(line)
				if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
					continue
				}
				if len(fields) != 4 || fields[0] != "terraform" || fields[1] != "import" {
					t.Errorf("import.sh line %d is not `terraform import <address> <id>`: %s", i+1, line)
					continue
				}
				imports++
				address, id := fields[2], fields[3]
				if got, _, _ := strings.Cut(address, "."); got != typeName {
					t.Errorf("import.sh line %d imports %s, not a %s", i+1, address, typeName)
					continue
				}
				if err := importID(t, typeName, id); err != nil {
					t.Errorf("import.sh line %d: %s refuses the id %q: %s", i+1, typeName, id, err)
				}
			}
			if imports == 0 {
				t.Errorf("%s has no `terraform import` line", script)
			}
		})
	}
}

// testExamplesLocalEmulatorApplies applies and destroys the local emulator guide's example against
// the emulator of this test run, through the built provider, as the guide tells users to.
func testExamplesLocalEmulatorApplies(t *testing.T, cli cliRunner) {
	const dir = "guides/local-emulator"
	work := copyExample(t, dir)
	env := append(slices.Clone(cli.env),
		"RAYTPU_CONTAINER_ENDPOINT="+testEmulator.Endpoint(),
		"RAYTPU_COMPUTE_ENDPOINT="+testEmulator.ComputeEndpoint(),
		"GOOGLE_OAUTH_ACCESS_TOKEN="+testEmulator.Token())
	// Made before the destroy's cleanup is registered, so that the destroy may use it too.
	ctx := testwait.Context(t)
	run := func(args ...string) {
		t.Helper()
		if out, err := cli.command(ctx, work, env, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s in examples/%s: %v\n%s", cli.name, args[0], dir, err, out)
		}
	}
	run("apply", "-auto-approve", "-input=false", "-no-color")
	t.Cleanup(func() { run("destroy", "-auto-approve", "-input=false", "-no-color") })
	var outputs map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	out, err := cli.command(ctx, work, env, "output", "-json").Output()
	if err != nil {
		t.Fatalf("%s output: %v", cli.name, err)
	}
	if err := json.Unmarshal(out, &outputs); err != nil {
		t.Fatalf("reading outputs: %v\n%s", err, out)
	}
	var hosts []string
	if err := json.Unmarshal(outputs["hosts"].Value, &hosts); err != nil || len(hosts) != 4 {
		t.Errorf("output hosts = %s, want the four hosts of a v6e 4x4 slice (%v)", outputs["hosts"].Value, err)
	}
}

// cliRunner runs the CLI under test with the provider of this checkout: built and installed by a
// CLI configuration (buildExamplesCLI), or served by the test process (reattachedCLI).
type cliRunner struct {
	name, path string
	env        []string
}

// buildExamplesCLI builds the provider and writes the CLI configuration that installs it.
func buildExamplesCLI(t *testing.T) cliRunner {
	t.Helper()
	path := os.Getenv(acctest.EnvCLIPath)
	if path == "" {
		t.Fatalf("%s is not set", acctest.EnvCLIPath)
	}
	dir := t.TempDir()
	build := exec.CommandContext(testwait.Context(t), "go", "build", "-o", filepath.Join(dir, "terraform-provider-raytpu"), ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	var config strings.Builder
	config.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, address := range providerAddresses {
		fmt.Fprintf(&config, "    %q = %q\n", address, dir)
	}
	config.WriteString("  }\n  direct {}\n}\n")
	rc := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(rc, []byte(config.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return cliRunner{name: filepath.Base(path), path: path, env: cliEnvironment("TF_CLI_CONFIG_FILE=" + rc)}
}

// cliEnvironment is the environment the CLI under test runs in: the test process's, without the
// settings that would change what a configuration means, plus settings.
func cliEnvironment(settings ...string) []string {
	env := append([]string{"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}, settings...)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "TF_CLI_CONFIG_FILE", name == "TOFU_CLI_CONFIG_FILE", name == "TF_DATA_DIR", name == "TF_WORKSPACE",
			name == "TF_REATTACH_PROVIDERS", name == "TF_PLUGIN_CACHE_DIR", strings.HasPrefix(name, "TF_CLI_ARGS"),
			strings.HasPrefix(name, "TF_VAR_"), strings.HasPrefix(name, "RAYTPU_"), strings.HasPrefix(name, "GOOGLE_"):
			// Ours, or settings of the machine that would change what the examples mean.
		default:
			env = append(env, kv)
		}
	}
	return env
}

func (c cliRunner) command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.path, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// checkFormat fails when the CLI's fmt would change a file of the example.
func (c cliRunner) checkFormat(t *testing.T, dir string) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(examplesDir, dir))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.command(testwait.Context(t), abs, c.env, "fmt", "-check", "-diff", "-no-color").CombinedOutput()
	if err != nil {
		t.Errorf("%s fmt -check of examples/%s: %v (run `make generate`, which formats examples/)\n%s", c.name, dir, err, out)
	}
}

// diagnostic is one entry of `validate -json`.
type diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Range    *struct {
		Filename string `json:"filename"`
		Start    struct {
			Line int `json:"line"`
		} `json:"start"`
	} `json:"range"`
}

// validate runs `validate -json` on a copy of the example, with -query for the list blocks of
// .tfquery.hcl files, and returns its diagnostics, without the warning every dev_overrides run
// gets.
func (c cliRunner) validate(t *testing.T, dir string) []diagnostic {
	t.Helper()
	work := copyExample(t, dir)
	args := []string{"validate", "-json", "-no-color"}
	if queries, _ := filepath.Glob(filepath.Join(work, "*.tfquery.hcl")); len(queries) > 0 {
		args = append(args, "-query")
	}
	var stdout, stderr bytes.Buffer
	cmd := c.command(testwait.Context(t), work, c.env, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var result struct {
		Diagnostics []diagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &result); err != nil {
		t.Fatalf("%s validate of examples/%s: %v; %v\n%s%s", c.name, dir, runErr, err, stdout.Bytes(), stderr.Bytes())
	}
	var diags []diagnostic
	for _, d := range result.Diagnostics {
		if d.Severity == "warning" && d.Summary == "Provider development overrides are in effect" {
			continue
		}
		diags = append(diags, d)
	}
	if runErr != nil && len(diags) == 0 {
		t.Fatalf("%s validate of examples/%s: %v\n%s", c.name, dir, runErr, stderr.Bytes())
	}
	return diags
}

// formatDiagnostics renders errors and warnings as the CLI reports them; empty means none.
func formatDiagnostics(diags []diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		where := ""
		if d.Range != nil {
			where = fmt.Sprintf(" (%s line %d)", d.Range.Filename, d.Range.Start.Line)
		}
		fmt.Fprintf(&b, "%s: %s%s\n  %s\n", d.Severity, d.Summary, where, strings.ReplaceAll(d.Detail, "\n", "\n  "))
	}
	return b.String()
}

// copyExample copies the example's files into a fresh folder, adding the raytpu requirement that
// resource and data source examples leave out (users have it in their root module).
func copyExample(t *testing.T, dir string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(filepath.Join(examplesDir, dir))
	if err != nil {
		t.Fatal(err)
	}
	declared := false
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if slices.Contains(exampleNeeds[dir].otherProviders, e.Name()) {
			t.Logf("examples/%s/%s configures providers other than raytpu: checked for format only", dir, e.Name())
			continue
		}
		content, err := os.ReadFile(filepath.Join(examplesDir, dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		declared = declared || (strings.HasSuffix(e.Name(), ".tf") && bytes.Contains(content, []byte("required_providers")))
		if err := os.WriteFile(filepath.Join(work, e.Name()), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !declared {
		requirement := "terraform {\n  required_providers {\n    raytpu = {\n      source = \"raytpu/raytpu\"\n    }\n  }\n}\n"
		if err := os.WriteFile(filepath.Join(work, "zz_required_providers.tf"), []byte(requirement), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// exampleDirs lists every folder under examples/ that holds .tf or .tfquery.hcl files, relative
// to examples/.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(examplesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".tf" && !strings.HasSuffix(path, ".tfquery.hcl")) {
			return err
		}
		rel, err := filepath.Rel(examplesDir, filepath.Dir(path))
		if err == nil && !slices.Contains(dirs, filepath.ToSlash(rel)) {
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("no examples found under %s", examplesDir)
	}
	return dirs
}

// servedTypes lists what the provider serves, by kind: "resource", "importable", "data source",
// "list resource", "action" and "function".
func servedTypes(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ctx := t.Context()
	p := New("test")()
	out := map[string]map[string]bool{"resource": {}, "importable": {}, "data source": {}, "list resource": {}, "action": {}, "function": {}}
	for _, factory := range p.Resources(ctx) {
		r := factory()
		name := resourceTypeName(ctx, r)
		out["resource"][name] = true
		if _, ok := r.(resource.ResourceWithImportState); ok {
			out["importable"][name] = true
		}
	}
	for _, factory := range p.DataSources(ctx) {
		var resp datasource.MetadataResponse
		factory().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "raytpu"}, &resp)
		out["data source"][resp.TypeName] = true
	}
	if withLists, ok := p.(provider.ProviderWithListResources); ok {
		for _, factory := range withLists.ListResources(ctx) {
			var resp resource.MetadataResponse
			factory().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "raytpu"}, &resp)
			out["list resource"][resp.TypeName] = true
		}
	}
	if withActions, ok := p.(provider.ProviderWithActions); ok {
		for _, factory := range withActions.Actions(ctx) {
			var resp action.MetadataResponse
			factory().Metadata(ctx, action.MetadataRequest{ProviderTypeName: "raytpu"}, &resp)
			out["action"][resp.TypeName] = true
		}
	}
	withFunctions, ok := p.(provider.ProviderWithFunctions)
	if !ok {
		t.Fatal("the provider serves no functions")
	}
	for _, factory := range withFunctions.Functions(ctx) {
		var resp function.MetadataResponse
		factory().Metadata(ctx, function.MetadataRequest{}, &resp)
		out["function"][resp.Name] = true
	}
	return out
}

func resourceTypeName(ctx context.Context, r resource.Resource) string {
	var resp resource.MetadataResponse
	r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "raytpu"}, &resp)
	return resp.TypeName
}

// importID runs one import id through the ImportState of the resource typeName.
func importID(t *testing.T, typeName, id string) error {
	ctx := t.Context()
	for _, factory := range New("test")().Resources(ctx) {
		r := factory()
		if resourceTypeName(ctx, r) != typeName {
			continue
		}
		importer, ok := r.(resource.ResourceWithImportState)
		if !ok {
			return fmt.Errorf("%s cannot be imported", typeName)
		}
		if c, ok := r.(resource.ResourceWithConfigure); ok {
			var resp resource.ConfigureResponse
			c.Configure(ctx, resource.ConfigureRequest{ProviderData: &providerData{project: "my-project"}}, &resp)
			if resp.Diagnostics.HasError() {
				return fmt.Errorf("configure: %v", resp.Diagnostics)
			}
		}
		var schemaResp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &schemaResp)
		resp := resource.ImportStateResponse{State: tfsdk.State{
			Schema: schemaResp.Schema,
			Raw:    tftypes.NewValue(schemaResp.Schema.Type().TerraformType(ctx), nil),
		}}
		importer.ImportState(ctx, resource.ImportStateRequest{ID: id}, &resp)
		if resp.Diagnostics.HasError() {
			return fmt.Errorf("%v", resp.Diagnostics.Errors())
		}
		return nil
	}
	return fmt.Errorf("the provider has no resource %s", typeName)
}
