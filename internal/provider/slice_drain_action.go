package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ action.ActionWithConfigure = (*drainSliceAction)(nil)
	_ action.ActionWithConfigure = (*uncordonSliceAction)(nil)
)

// Before maintenance of a node pool's hosts, GKE's documentation has the workloads stopped or moved
// ("Perform host maintenance for nodes running training and inference workloads": "select the
// node pools and either stop the workloads running on them or move the workloads to other nodes")
// by cordoning the pool's nodes and draining them ("Migrate workloads to different machine
// types"); internal/kube does it for one slice. Evicted Ray workers are recreated by KubeRay; with
// the slice cordoned they wait for another slice, or for this one to be uncordoned.

// NewDrainSliceAction returns raytpu_drain_slice: cordon a slice's hosts and evict their Pods.
func NewDrainSliceAction() action.Action {
	return &drainSliceAction{}
}

// NewUncordonSliceAction returns raytpu_uncordon_slice: let Pods onto a slice's hosts again.
func NewUncordonSliceAction() action.Action {
	return &uncordonSliceAction{}
}

type drainSliceAction struct {
	actionBase
}

type uncordonSliceAction struct {
	actionBase
}

const (
	drainTimeout = 10 * time.Minute
	drainSummary = "Error Draining Slice"
)

func (a *drainSliceAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_drain_slice"
}

func (a *drainSliceAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Cordons every host of a slice, then evicts its Pods, as `kubectl drain --ignore-daemonsets " +
			"--delete-emptydir-data` does on each of them, before maintenance: Ray workers leave the slice, " +
			"and KubeRay recreates them wherever they fit, not on this slice. Evictions honour PodDisruptionBudgets; DaemonSet " +
			"and mirror Pods stay, finished Pods are deleted. The action returns once every evicted Pod is gone. " +
			"`raytpu_uncordon_slice` lets Pods onto the slice again.",
		Attributes: map[string]actionschema.Attribute{
			"slice": sliceActionAttribute("to drain"),
			"force": actionschema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Also evict Pods that no controller manages, which nothing recreates, as `kubectl drain --force` " +
					"does. Without it such a Pod fails the action before any eviction, and the hosts are uncordoned again.",
			},
			"timeout": actionTimeoutAttribute("the evictions", drainTimeout),
		},
	}
}

func (a *drainSliceAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	timeout, diags := actionTimeout(ctx, req.Config, "timeout", drainTimeout)
	var force types.Bool
	diags.Append(req.Config.GetAttribute(ctx, path.Root("force"), &force)...)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, k, diags := a.kube(ctx, req, drainSummary, "draining")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	defer k.Close()
	fail := func(format string, args ...any) {
		resp.Diagnostics.AddError(drainSummary, fmt.Sprintf("draining slice %s: ", t.id)+fmt.Sprintf(format, args...))
	}
	// Cordoned first, as kubectl drain does, so that no Pod lands on a host after the list.
	cordoned, d, err := k.CordonForDrain(ctx, t.id.Name)
	if err != nil {
		fail("cordoning its hosts and listing their Pods: %s\n\nThe hosts cordoned so far (%s) stay cordoned: invoke the action "+
			"again, or raytpu_uncordon_slice to give up.", err, hostNames(cordoned))
		return
	}
	if len(d.Unmanaged) > 0 && !force.ValueBool() {
		// Refused before any eviction; the cordon is given back, so that the refusal changes nothing.
		if err := k.UncordonNodes(ctx, cordoned); err != nil {
			fail("no controller manages the Pods %s, so nothing would recreate them once evicted, and the hosts cordoned to "+
				"list them (%s) could not be uncordoned again: %s. Run raytpu_uncordon_slice, then stop those Pods or set force = true.",
				podList(d.Unmanaged), hostNames(cordoned), err)
			return
		}
		fail("no controller manages the Pods %s, so nothing would recreate them once evicted. Stop them, or set force = true to "+
			"evict them anyway. Nothing was changed: the hosts cordoned to list them were uncordoned again.", podList(d.Unmanaged))
		return
	}
	progress(resp, t.id, "cordoned %d hosts", len(cordoned))
	evict := append(d.Evict, d.Unmanaged...)
	progress(resp, t.id, "evicting %d Pods (%s), deleting %d finished", len(evict), podList(evict), len(d.Finished))
	if err := k.EvictPods(ctx, evict, d.Finished, kube.DefaultPollInterval); err != nil {
		fail("%s\n\nIts hosts stay cordoned: invoke the action again, or raytpu_uncordon_slice to give up.", err)
		return
	}
	progress(resp, t.id, "drained: %d Pods evicted; its hosts stay cordoned until raytpu_uncordon_slice", len(evict))
}

func (a *uncordonSliceAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_uncordon_slice"
}

func (a *uncordonSliceAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Marks every host of a slice schedulable again, as `kubectl uncordon` does on each of them, once its " +
			"maintenance is over: Pods waiting for the slice, such as the Ray workers `raytpu_drain_slice` evicted, come back.",
		Attributes: map[string]actionschema.Attribute{
			"slice": sliceActionAttribute("to uncordon"),
		},
	}
}

func (a *uncordonSliceAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	t, k, diags := a.kube(ctx, req, "Error Uncordoning Slice", "uncordoning")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	defer k.Close()
	changed, err := k.SetSliceSchedulable(ctx, t.id.Name, true)
	if err != nil {
		resp.Diagnostics.AddError("Error Uncordoning Slice", fmt.Sprintf("uncordoning slice %s: %s", t.id, err))
		return
	}
	progress(resp, t.id, "uncordoned %d hosts", len(changed))
}

// kube is the slice an action names and a client of its cluster's API server.
func (b *actionBase) kube(ctx context.Context, req action.InvokeRequest, summary, verb string) (sliceTarget, *kube.Client, diag.Diagnostics) {
	t, diags := b.target(ctx, req.Config, summary, verb)
	if diags.HasError() {
		return t, nil, diags
	}
	k, err := kubeClient(t.client, t.access)
	if err != nil {
		diags.AddError(summary, fmt.Sprintf("%s slice %s: reaching its cluster's API server: %s", verb, t.id, err))
		return t, nil, diags
	}
	return t, k, diags
}

func hostNames(hosts []string) string {
	if len(hosts) == 0 {
		return "none"
	}
	return strings.Join(hosts, ", ")
}

func podList(pods []kube.PodRef) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.String()
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
