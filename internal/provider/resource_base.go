package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// resourceBase is embedded by every raytpu resource: it keeps what the provider's Configure hands
// over and does what every resource does with it (the GKE client, timeouts, import).
type resourceBase struct {
	data *providerData
}

func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.data = configuredProviderData(req.ProviderData, &resp.Diagnostics)
}

// client returns the shared GKE client; when it cannot be built it adds an error saying what could
// not be done (action, such as "reading raytpu_slice (id)") and returns nil.
func (b *resourceBase) client(ctx context.Context, action string, diags *diag.Diagnostics) *gke.Client {
	c, err := b.data.gkeClient(ctx)
	if err != nil {
		diags.AddError("GKE Client Error", fmt.Sprintf("%s: %s", action, err))
		return nil
	}
	return c
}

// defaultProject is the provider's project, which short import ids may leave out; "" before the
// provider is configured.
func (b *resourceBase) defaultProject() string {
	if b.data == nil {
		return ""
	}
	return b.data.project
}

// importAttributes writes the attributes an import knows from its id, and the defaults of the
// settings that live only in Terraform; Read fills in the rest.
func importAttributes(ctx context.Context, resp *resource.ImportStateResponse, attributes map[string]any) {
	for attribute, value := range attributes {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attribute), value)...)
	}
}

// invalidImportID reports an import id that does not parse.
func invalidImportID(resp *resource.ImportStateResponse, err error) {
	resp.Diagnostics.AddError("Invalid Import ID", err.Error()+".")
}

// planTimeout bounds what plan and refresh ask of GKE and of a cluster's API server: each Read,
// ModifyPlan and Open. Their reads answer within a second; the retry policy gives up on a
// transient failure within about twenty seconds, and this deadline ends whatever still waits (a
// server that takes connections and never answers), so that a plan ends with the cause instead
// of hanging.
const planTimeout = 45 * time.Second

// withPlanTimeout bounds ctx by planTimeout.
func withPlanTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, planTimeout)
}

// planClient is the GKE client for plan-time reads: nil before the provider is configured, and nil
// with an error in diags when it cannot be built (no credentials), since the reads it would make
// cannot be made at apply either.
func (b *resourceBase) planClient(ctx context.Context, action string, diags *diag.Diagnostics) *gke.Client {
	if b.data == nil {
		return nil
	}
	return b.client(ctx, action, diags)
}

// reportUnreachable adds an error for a plan-time read that failed because GKE cannot be reached
// or authenticated to at all (see gke.AccessError), and reports whether it did. Other failures
// are the caller's to judge: a cluster that does not exist yet is created in the same apply.
func reportUnreachable(diags *diag.Diagnostics, action string, err error) bool {
	if !gke.IsAccessError(err) {
		return false
	}
	diags.AddError("Cannot Reach GKE", fmt.Sprintf("%s: %s.", action, err))
	return true
}

// withTimeout bounds ctx by the resource's configured timeout for one action (fallback when unset).
// ok is false when the timeout could not be read; the diagnostics then say why.
func withTimeout(ctx context.Context, timeout func(context.Context, time.Duration) (time.Duration, diag.Diagnostics),
	fallback time.Duration, diags *diag.Diagnostics) (context.Context, context.CancelFunc, bool) {
	d, readDiags := timeout(ctx, fallback)
	diags.Append(readDiags...)
	if readDiags.HasError() {
		return ctx, func() {}, false
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, true
}
