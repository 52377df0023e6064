package provider

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// providerModel is the provider block.
type providerModel struct {
	Project                   types.String `tfsdk:"project"`
	Location                  types.String `tfsdk:"location"`
	Credentials               types.String `tfsdk:"credentials"`
	AccessToken               types.String `tfsdk:"access_token"`
	ImpersonateServiceAccount types.String `tfsdk:"impersonate_service_account"`
	ImpersonateDelegates      types.List   `tfsdk:"impersonate_service_account_delegates"`
	ExternalCredentials       types.Object `tfsdk:"external_credentials"`
	ContainerEndpoint         types.String `tfsdk:"container_endpoint"`
	ComputeEndpoint           types.String `tfsdk:"compute_endpoint"`
	OperationPollInterval     types.String `tfsdk:"operation_poll_interval"`
}

// providerData is what resources and data sources receive from Configure. The GKE client is
// built on first use, so that configurations using only raytpu_topology need no credentials.
type providerData struct {
	project, location string
	config            gke.Config
	auth              gke.Auth

	once      sync.Once
	client    *gke.Client
	clientErr error

	// planned are the slices the Ray resources of this run list.
	planned plannedSlices
	// reservations are the slices of this run planned on each reservation.
	reservations reservationConsumers
}

// firstSet returns the configured value, else the first non-empty environment variable.
func firstSet(v types.String, env ...string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	for _, name := range env {
		if value := os.Getenv(name); value != "" {
			return value
		}
	}
	return ""
}

// newProviderData checks the whole configuration and reports every problem on its attribute.
func newProviderData(ctx context.Context, m providerModel, version string) (*providerData, diag.Diagnostics) {
	var diags diag.Diagnostics
	for name, v := range map[string]types.String{
		"project": m.Project, "location": m.Location, "credentials": m.Credentials, "access_token": m.AccessToken,
		"impersonate_service_account": m.ImpersonateServiceAccount, "container_endpoint": m.ContainerEndpoint,
		"compute_endpoint": m.ComputeEndpoint, "operation_poll_interval": m.OperationPollInterval,
	} {
		if v.IsUnknown() {
			diags.AddAttributeError(path.Root(name), "Unknown Provider Configuration",
				fmt.Sprintf("%s depends on a value known only after apply. Provider configuration must be known at plan time: "+
					"set it from a variable or a value that already exists.", name))
		}
	}
	d := &providerData{
		project:  firstSet(m.Project, "GOOGLE_PROJECT", "GOOGLE_CLOUD_PROJECT"),
		location: firstSet(m.Location, "GOOGLE_ZONE", "GOOGLE_REGION"),
		auth: gke.Auth{
			Credentials:               firstSet(m.Credentials, "GOOGLE_CREDENTIALS"),
			AccessToken:               firstSet(m.AccessToken, "GOOGLE_OAUTH_ACCESS_TOKEN"),
			ImpersonateServiceAccount: firstSet(m.ImpersonateServiceAccount, "GOOGLE_IMPERSONATE_SERVICE_ACCOUNT"),
		},
		config: gke.Config{
			Endpoint:        firstSet(m.ContainerEndpoint, "RAYTPU_CONTAINER_ENDPOINT"),
			ComputeEndpoint: firstSet(m.ComputeEndpoint, "RAYTPU_COMPUTE_ENDPOINT"),
			UserAgent:       "terraform-provider-raytpu/" + version,
			Poll:            gke.DefaultPollSchedule,
		},
	}
	diags.Append(m.configureFederation(ctx, &d.auth)...)
	if d.auth.Credentials != "" && d.auth.AccessToken != "" {
		diags.AddAttributeError(path.Root("access_token"), "Conflicting Credentials",
			"access_token (or GOOGLE_OAUTH_ACCESS_TOKEN) and credentials (or GOOGLE_CREDENTIALS) are both set: keep one of them.")
	}
	if d.config.Endpoint != "" {
		if err := gke.CheckEndpoint(d.config.Endpoint); err != nil {
			diags.AddAttributeError(path.Root("container_endpoint"), "Invalid Container Endpoint", err.Error()+".")
		}
	}
	if d.config.ComputeEndpoint != "" {
		if err := gke.CheckEndpoint(d.config.ComputeEndpoint); err != nil {
			diags.AddAttributeError(path.Root("compute_endpoint"), "Invalid Compute Endpoint", err.Error()+".")
		}
	}
	if interval := firstSet(m.OperationPollInterval); interval != "" {
		bound, err := time.ParseDuration(interval)
		if err != nil || bound <= 0 {
			diags.AddAttributeError(path.Root("operation_poll_interval"), "Invalid Operation Poll Interval",
				fmt.Sprintf("%q is not a positive duration: write it as a Go duration such as \"10s\" or \"500ms\".", interval))
		} else {
			d.config.Poll = d.config.Poll.WithMax(bound)
		}
	}
	if (d.auth.Credentials != "" || d.auth.External != nil) && !diags.HasError() {
		// Reading the credentials costs no network call and catches a bad file at plan time.
		if _, err := d.auth.TokenSource(ctx); err != nil {
			attribute := "credentials"
			if d.auth.External != nil {
				attribute = "external_credentials"
			}
			diags.AddAttributeError(path.Root(attribute), "Invalid Credentials", err.Error()+".")
		}
	}
	return d, diags
}

// gkeClient returns the shared GKE client, building it on first use.
func (d *providerData) gkeClient(ctx context.Context) (*gke.Client, error) {
	d.once.Do(func() {
		// The client outlives this request: token refreshes must not be cancelled with it.
		ctx := context.WithoutCancel(ctx)
		ts, err := d.auth.TokenSource(ctx)
		if err != nil {
			d.clientErr = err
			return
		}
		cfg := d.config
		cfg.TokenSource = ts
		d.client, d.clientErr = gke.New(ctx, cfg)
		tflog.Debug(ctx, "GKE client ready", map[string]any{"endpoint": cfg.Endpoint, "impersonating": d.auth.ImpersonateServiceAccount})
	})
	return d.client, d.clientErr
}

// configuredProviderData is what Configure hands a resource: nil before the provider is
// configured (during validation), an error if the framework passed something else.
func configuredProviderData(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil
	}
	d, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected Resource Configure Type",
			fmt.Sprintf("Expected *providerData, got %T. Please report this issue to the provider developers.", data))
	}
	return d
}
