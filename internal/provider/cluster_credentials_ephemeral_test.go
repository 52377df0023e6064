package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	providerschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	resourceschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// TestAccClusterCredentials_values reads the ephemeral credentials through terraform-plugin-testing's
// echo provider, which copies an ephemeral value into its state so that the test can look at it.
func TestAccClusterCredentials_values(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.EphemeralResources)
	cluster := testAccClusterConfig("acc-credentials", "")
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"raytpu": testAccProtoV6ProviderFactories["raytpu"],
			"echo":   echoprovider.NewProviderServer(),
		},
		Steps: []resource.TestStep{
			{Config: cluster},
			{
				Config: cluster + `
ephemeral "raytpu_cluster_credentials" "test" {
  cluster = raytpu_cluster.test.id
}

provider "echo" {
  data = ephemeral.raytpu_cluster_credentials.test
}

resource "echo" "credentials" {}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("echo.credentials", tfjsonpath.New("data"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"cluster":                knownvalue.StringRegexp(regexp.MustCompile(`/clusters/acc-credentials$`)),
						"endpoint":               knownvalue.StringRegexp(regexp.MustCompile(`^https://127\.0\.0\.1:\d+$`)),
						"cluster_ca_certificate": knownvalue.StringRegexp(regexp.MustCompile(`^-----BEGIN CERTIFICATE-----\n`)),
						"token":                  knownvalue.StringExact(testEmulator.Token()),
						// A configured access_token says nothing of its expiry.
						"expires_at": knownvalue.Null(),
					})),
				},
			},
		},
	})
}

func TestAccClusterCredentials_planTimeErrors(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.EphemeralResources)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: testAccProviderConfig() + `
ephemeral "raytpu_cluster_credentials" "test" {
  cluster = "us-central2-b/nope"
}
`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Cluster ID`),
			},
			{
				Config: testAccProviderConfig() + fmt.Sprintf(`
ephemeral "raytpu_cluster_credentials" "test" {
  cluster = "projects/%s/locations/%s/clusters/absent"
}
`, testProject, testLocation),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Error Reading Cluster.*opening raytpu_cluster_credentials.*clusters/absent`),
			},
		},
	})
}

// TestAccClusterCredentials_notInPlanOrState configures another provider with the credentials, as
// the kubernetes and helm providers are configured, and checks that the provider reaches the
// cluster's API server with them while neither the saved plan nor the state holds the token. The
// raytpu provider takes its token from the environment here, so that the configuration, which a
// saved plan includes, holds no token either. It sets the environment, so it does not run in
// parallel.
func TestAccClusterCredentials_notInPlanOrState(t *testing.T) { //nolint:paralleltest // sets the environment
	acctest.RequireCLI(t, testCLI, acctest.EphemeralResources)
	token := testEmulator.Token()
	t.Setenv("GOOGLE_OAUTH_ACCESS_TOKEN", token)
	providerConfig := strings.Replace(testAccProviderConfig(), fmt.Sprintf("access_token            = %q\n", token), "", 1)
	if strings.Contains(providerConfig, token) {
		t.Fatal("the provider configuration still holds the token")
	}
	cluster := providerConfig + `
resource "raytpu_cluster" "test" {
  name                = "acc-credentials-secret"
  deletion_protection = false
}
`
	withKube := cluster + kubecheckOnCredentials
	noToken := noTokenCheck{token: token}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"raytpu":    testAccProtoV6ProviderFactories["raytpu"],
			"kubecheck": providerserver.NewProtocol6WithError(newKubeCheckProvider(t)),
		},
		Steps: []resource.TestStep{
			{Config: cluster},
			{
				Config:           withKube,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{noToken}, PostApplyPostRefresh: []plancheck.PlanCheck{noToken}},
				ConfigStateChecks: []statecheck.StateCheck{
					// The API server answered the token of the ephemeral credentials.
					statecheck.ExpectKnownValue("kubecheck_server.test", tfjsonpath.New("git_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.`))),
					noToken,
				},
			},
			{
				// A new plan opens the credentials again and finds nothing to do.
				Config:            withKube,
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan(), noToken}},
				ConfigStateChecks: []statecheck.StateCheck{noToken},
			},
		},
	})
}

// TestAccClusterCredentials_firstApply plans and applies a new cluster and a provider configured
// with its ephemeral credentials from an empty state, in one apply, as the kubernetes-and-helm
// guide does: the credentials stay unknown while planning and are opened once the cluster exists.
func TestAccClusterCredentials_firstApply(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.EphemeralResources)
	const name = "acc-credentials-first"
	config := testAccClusterConfig(name, "") + kubecheckOnCredentials
	noToken := noTokenCheck{token: testEmulator.Token()}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"raytpu":    testAccProtoV6ProviderFactories["raytpu"],
			"kubecheck": providerserver.NewProtocol6WithError(newKubeCheckProvider(t)),
		},
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("raytpu_cluster.test", plancheck.ResourceActionCreate),
				plancheck.ExpectResourceAction("kubecheck_server.test", plancheck.ResourceActionCreate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("kubecheck_server.test", tfjsonpath.New("git_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.`))),
				noToken,
			},
			// Nothing read the cluster before it existed.
			Check: clusterRequestsAnswered(name, "GetCluster", http.StatusNotFound, 0),
		}},
	})
}

// clusterRequestsAnswered checks how many rpc requests on cluster name the emulator answered with
// status since the check was made.
func clusterRequestsAnswered(name, rpc string, status, want int) resource.TestCheckFunc {
	since := time.Now()
	return func(*terraform.State) error {
		n, err := requestsAnswered(since, rpc, status, func(p string) bool { return strings.HasSuffix(p, "/clusters/"+name) })
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("the emulator answered %d %s requests on %s with %d, want %d", n, rpc, name, status, want)
		}
		return nil
	}
}

// kubecheckOnCredentials configures kubecheck, as the kubernetes provider is configured, with the
// ephemeral credentials of raytpu_cluster.test, and has it read the API server's version.
const kubecheckOnCredentials = `
ephemeral "raytpu_cluster_credentials" "test" {
  cluster = raytpu_cluster.test.id
}

provider "kubecheck" {
  host                   = ephemeral.raytpu_cluster_credentials.test.endpoint
  cluster_ca_certificate = ephemeral.raytpu_cluster_credentials.test.cluster_ca_certificate
  token                  = ephemeral.raytpu_cluster_credentials.test.token
}

resource "kubecheck_server" "test" {}
`

// noTokenCheck fails when the token shows anywhere in the plan (the JSON of the saved plan file)
// or the state.
type noTokenCheck struct{ token string }

func (c noTokenCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = c.absent("the saved plan", req.Plan)
}

func (c noTokenCheck) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c.absent("the state", req.State)
}

func (c noTokenCheck) absent(what string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) < 100 {
		return fmt.Errorf("%s is too short to tell (%s)", what, b)
	}
	if strings.Contains(string(b), c.token) {
		return fmt.Errorf("%s holds the access token", what)
	}
	return nil
}

// kubeCheckProvider stands in for the kubernetes provider: it takes host, cluster_ca_certificate
// and token as the kubernetes provider does, and its one resource records the API server's
// version, read with them (GET /version) by the test's deadline (zero: none).
type kubeCheckProvider struct{ deadline time.Time }

func newKubeCheckProvider(t *testing.T) *kubeCheckProvider {
	deadline, _ := testwait.Deadline(t)
	return &kubeCheckProvider{deadline: deadline}
}

type kubeCheckConfig struct {
	Host                 types.String `tfsdk:"host"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Token                types.String `tfsdk:"token"`
}

func (p *kubeCheckProvider) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = "kubecheck"
}

func (p *kubeCheckProvider) Schema(_ context.Context, _ fwprovider.SchemaRequest, resp *fwprovider.SchemaResponse) {
	resp.Schema = providerschema.Schema{Attributes: map[string]providerschema.Attribute{
		"host":                   providerschema.StringAttribute{Optional: true},
		"cluster_ca_certificate": providerschema.StringAttribute{Optional: true},
		"token":                  providerschema.StringAttribute{Optional: true, Sensitive: true},
	}}
}

func (p *kubeCheckProvider) Configure(ctx context.Context, req fwprovider.ConfigureRequest, resp *fwprovider.ConfigureResponse) {
	var c kubeCheckConfig
	resp.Diagnostics.Append(req.Config.Get(ctx, &c)...)
	resp.ResourceData = c
}

func (p *kubeCheckProvider) Resources(context.Context) []func() fwresource.Resource {
	return []func() fwresource.Resource{func() fwresource.Resource { return &kubeCheckServer{deadline: p.deadline} }}
}

func (p *kubeCheckProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type kubeCheckServer struct {
	config   kubeCheckConfig
	deadline time.Time
}

func (r *kubeCheckServer) Metadata(_ context.Context, _ fwresource.MetadataRequest, resp *fwresource.MetadataResponse) {
	resp.TypeName = "kubecheck_server"
}

func (r *kubeCheckServer) Schema(_ context.Context, _ fwresource.SchemaRequest, resp *fwresource.SchemaResponse) {
	resp.Schema = resourceschema.Schema{Attributes: map[string]resourceschema.Attribute{
		"id":          resourceschema.StringAttribute{Computed: true},
		"git_version": resourceschema.StringAttribute{Computed: true},
	}}
}

func (r *kubeCheckServer) Configure(_ context.Context, req fwresource.ConfigureRequest, _ *fwresource.ConfigureResponse) {
	if c, ok := req.ProviderData.(kubeCheckConfig); ok {
		r.config = c
	}
}

func (r *kubeCheckServer) Create(ctx context.Context, _ fwresource.CreateRequest, resp *fwresource.CreateResponse) {
	version, err := r.version(ctx)
	if err != nil {
		resp.Diagnostics.AddError("API Server Unreachable", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), "server")...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("git_version"), version)...)
}

func (r *kubeCheckServer) Read(ctx context.Context, _ fwresource.ReadRequest, resp *fwresource.ReadResponse) {
	if _, err := r.version(ctx); err != nil {
		resp.Diagnostics.AddError("API Server Unreachable", err.Error())
	}
}

func (r *kubeCheckServer) Update(context.Context, fwresource.UpdateRequest, *fwresource.UpdateResponse) {
}

func (r *kubeCheckServer) Delete(context.Context, fwresource.DeleteRequest, *fwresource.DeleteResponse) {
}

// version is GET <host>/version with the configured CA and bearer token.
func (r *kubeCheckServer) version(ctx context.Context) (string, error) {
	c := r.config
	if c.Host.ValueString() == "" || c.Token.ValueString() == "" {
		return "", fmt.Errorf("host and token must be set, got host %q", c.Host.ValueString())
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.ClusterCACertificate.ValueString())) {
		return "", fmt.Errorf("cluster_ca_certificate is not a PEM certificate")
	}
	if !r.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.deadline)
		defer cancel()
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Host.ValueString()+"/version", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token.ValueString())
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s/version: %s", c.Host.ValueString(), res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		return "", err
	}
	return v.GitVersion, nil
}
