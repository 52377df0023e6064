package provider

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// Actions (Terraform 1.14 and later: action blocks, invoked by a resource's action_trigger or by
// `terraform apply -invoke=action.<type>.<name>`) run the operations on slices that change no
// configuration: recreating a slice, draining and uncordoning its hosts. Each acts on one
// slice, named by its node pool id (the id of raytpu_slice), and reports what it did as progress
// messages.

// actionBase is embedded by every raytpu action: it keeps what the provider's Configure hands
// over.
type actionBase struct {
	data *providerData
}

func (b *actionBase) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	b.data = configuredProviderData(req.ProviderData, &resp.Diagnostics)
}

// sliceActionAttribute is the slice argument of every action.
func sliceActionAttribute(what string) actionschema.StringAttribute {
	return actionschema.StringAttribute{
		Required: true,
		MarkdownDescription: "Node pool id of the slice " + what + ", `projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}`: " +
			"the `id` of a `raytpu_slice`, or of any TPU node pool.",
		Validators: []validator.String{nodePoolIDValidator{}},
	}
}

// actionTimeoutAttribute is an optional Go duration bounding an action, fallback when unset.
func actionTimeoutAttribute(what string, fallback time.Duration) actionschema.StringAttribute {
	return actionschema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "How long " + what + " may take, as a Go duration; `" + shortDuration(fallback) + "` when unset.",
		Validators:          []validator.String{durationValidator{}},
	}
}

// sliceTarget is the slice an action acts on, its pool as GKE reports it, and how to reach its
// cluster's API server.
type sliceTarget struct {
	client *gke.Client
	id     gke.NodePoolID
	pool   *containerpb.NodePool
	access clusterAccess
}

// target reads the slice named by config's slice attribute; the diagnostics say what failed, under
// summary ("Error Recreating Slice"), with verb ("recreating") naming the action.
func (b *actionBase) target(ctx context.Context, config tfsdk.Config, summary, verb string) (sliceTarget, diag.Diagnostics) {
	var slice types.String
	diags := config.GetAttribute(ctx, path.Root("slice"), &slice)
	if diags.HasError() {
		return sliceTarget{}, diags
	}
	id, err := gke.ParseNodePoolID(slice.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("slice"), "Invalid Node Pool ID", err.Error()+".")
		return sliceTarget{}, diags
	}
	fail := func(format string, args ...any) (sliceTarget, diag.Diagnostics) {
		diags.AddError(summary, fmt.Sprintf("%s slice %s: ", verb, id)+fmt.Sprintf(format, args...))
		return sliceTarget{}, diags
	}
	client, err := b.data.gkeClient(ctx)
	if err != nil {
		return fail("%s", err)
	}
	pool, err := client.GetNodePool(ctx, id, gke.Fresh)
	if err != nil {
		return fail("reading the node pool: %s", gke.WithAdvice(err))
	}
	cluster, err := client.GetCluster(ctx, id.Cluster)
	if err != nil {
		return fail("reading the cluster: %s", gke.WithAdvice(err))
	}
	return sliceTarget{client: client, id: id, pool: pool, access: accessOf(cluster)}, diags
}

// actionTimeout is the duration of attribute name in config, fallback when unset.
func actionTimeout(ctx context.Context, config tfsdk.Config, name string, fallback time.Duration) (time.Duration, diag.Diagnostics) {
	var v types.String
	diags := config.GetAttribute(ctx, path.Root(name), &v)
	if v.IsNull() || diags.HasError() {
		return fallback, diags
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root(name), "Invalid Duration", err.Error())
	}
	return d, diags
}

// progress sends a progress message of an action, prefixed with the slice it acts on.
func progress(resp *action.InvokeResponse, id gke.NodePoolID, format string, args ...any) {
	if resp.SendProgress != nil {
		resp.SendProgress(action.InvokeProgressEvent{Message: id.Name + ": " + fmt.Sprintf(format, args...)})
	}
}
