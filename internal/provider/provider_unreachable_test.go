package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/raytpu/terraform-provider-raytpu/internal/acctest"
)

// phrase matches text as Terraform prints it in a diagnostic, where a line may break at any space.
func phrase(text string) string {
	return strings.Join(strings.Fields(regexp.QuoteMeta(text)), `\s+`)
}

// timed returns a PreConfig that starts a clock and one, for the next step, that logs how long the
// step in between took. The time is only logged: the CLI's own start takes what a loaded machine
// gives it. What shows that the plan did not wait is what it says: the cause of a failure no retry
// fixes, which the client returns without retrying, or for a transient one "gave up retrying ...
// after 5 attempts", the retry policy's backoff, the same on any machine.
func timed(t *testing.T) (start func(), check func()) {
	var began time.Time
	return func() { began = time.Now() }, func() {
		t.Logf("the failing plan ended after %s", time.Since(began).Round(100*time.Millisecond))
	}
}

// TestAccProvider_misspeltEndpoint plans a slice on an existing cluster, its credentials and a
// refresh against a host name that does not exist: each plan fails at once and names the host.
func TestAccProvider_misspeltEndpoint(t *testing.T) {
	t.Parallel()
	cluster := fmt.Sprintf("projects/%s/locations/%s/clusters/acc-misspelt", testProject, testLocation)
	misspelt := providerConfigAt("https://typo.invalid", true)
	noSuchHost := phrase(`the host name "typo.invalid" does not exist`) + `.*container_endpoint`
	startPlan, checkPlan := timed(t)
	startRefresh, checkRefresh := timed(t)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// ModifyPlan reads the cluster to check the slice against it.
				PreConfig: startPlan,
				Config: misspelt + fmt.Sprintf(`
resource "raytpu_slice" "test" {
  cluster    = %q
  name       = "workers"
  generation = "v6e"
  topology   = "2x2"
}
`, cluster),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Cannot Reach GKE.*planning\s+raytpu_slice.*` + noSuchHost),
			},
			{
				PreConfig: func() { checkPlan() },
				Config:    testAccClusterConfig("acc-misspelt", ""),
			},
			{
				// Refresh reads the cluster.
				PreConfig:   startRefresh,
				Config:      strings.Replace(testAccClusterConfig("acc-misspelt", ""), testAccProviderConfig(), misspelt, 1),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Error Reading Cluster.*reading\s+raytpu_cluster.*` + noSuchHost),
			},
			{
				PreConfig: checkRefresh,
				Config:    testAccClusterConfig("acc-misspelt", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

// TestAccProvider_unreachableEndpoint refreshes a cluster through an endpoint that refuses every
// connection: the retries give up after the policy's attempts and the error says so.
func TestAccProvider_unreachableEndpoint(t *testing.T) {
	t.Parallel()
	start, check := timed(t)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccClusterConfig("acc-unreachable", "")},
			{
				PreConfig:   start,
				Config:      strings.Replace(testAccClusterConfig("acc-unreachable", ""), testAccProviderConfig(), providerConfigAt("https://127.0.0.1:1", true), 1),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Error Reading Cluster.*connection\s+refused.*` + phrase("gave up retrying GetCluster after 5 attempts")),
			},
			{
				PreConfig: check,
				Config:    testAccClusterConfig("acc-unreachable", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

// TestAccProvider_revokedCredentials runs on Application Default Credentials, authorized_user
// credentials as gcloud writes them, whose refresh token is then revoked: the next plan fails at
// once with Google's reason and what to do. It sets the environment, so it does not run in
// parallel.
func TestAccProvider_revokedCredentials(t *testing.T) { //nolint:paralleltest // sets the environment
	adc := filepath.Join(t.TempDir(), "application_default_credentials.json")
	writeADC := func(refreshToken string) {
		content := fmt.Sprintf(`{"type": "authorized_user", "client_id": "raytpu-test.apps.googleusercontent.com",
  "client_secret": "not-a-secret", "refresh_token": %q, "token_uri": %q}`, refreshToken, testEmulator.TokenURL())
		if err := os.WriteFile(adc, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeADC(testEmulator.RefreshToken())
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", adc)
	t.Setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "")
	config := providerConfigAt(testEmulator.Endpoint(), false) + `
resource "raytpu_cluster" "test" {
  name                = "acc-revoked"
  deletion_protection = false
}
`
	start, check := timed(t)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					writeADC("1//revoked-by-its-owner")
					start()
				},
				Config:   config,
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Error Reading Cluster.*` + phrase("Google refused the credentials") + `.*` +
					phrase("invalid_grant: Token has been expired or revoked.") + `.*` + phrase("gcloud auth application-default login")),
			},
			{
				PreConfig: func() {
					check()
					writeADC(testEmulator.RefreshToken())
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

// TestAccClusterCredentials_misspeltEndpoint opens the ephemeral credentials of a cluster through a
// host name that does not exist: the plan fails at once and names the host.
func TestAccClusterCredentials_misspeltEndpoint(t *testing.T) {
	t.Parallel()
	acctest.RequireCLI(t, testCLI, acctest.EphemeralResources)
	start, check := timed(t)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: start,
				Config: providerConfigAt("https://typo.invalid", true) + fmt.Sprintf(`
ephemeral "raytpu_cluster_credentials" "test" {
  cluster = "projects/%s/locations/%s/clusters/acc-misspelt-credentials"
}
`, testProject, testLocation),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Error Reading Cluster.*opening\s+raytpu_cluster_credentials.*` +
					phrase(`the host name "typo.invalid" does not exist`)),
			},
			{
				PreConfig: check,
				Config:    testAccProviderConfig(),
			},
		},
	})
}
