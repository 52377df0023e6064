package provider

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// GKE answers with more than it was sent, and in its own spelling. What raytpu reads back keeps the
// configuration's values wherever GKE's answer means the same, so that no apply ends in an
// inconsistent result and no plan shows a change nobody made. The emulator's package doc lists
// each behaviour with its source.

// reservedLabelPrefix starts the resource labels GKE sets on node pools itself
// (goog-gke-node-pool-provisioning-model, goog-gke-accelerator-type, ...): "Do not edit or delete
// reserved labels. Any changes made to reserved labels are reconciled automatically." (GKE
// "Automatically applied labels"). terraform-provider-google suppresses them the same way
// (containerNodePoolResourceLabelsDiffSuppress, "server-specified labels prefixed with goog-gke").
const reservedLabelPrefix = "goog-gke-"

// userLabels are the labels of labels that are not GKE's reserved ones.
func userLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !strings.HasPrefix(k, reservedLabelPrefix) {
			out[k] = v
		}
	}
	return out
}

// sameResource reports whether a and b, each a resource's name, relative path
// (projects/P/global/networks/N) or self link (https://www.googleapis.com/compute/v1/projects/...),
// name the same resource: the same path when both have one, else the same name. GKE answers
// Cluster.network and .subnetwork with names whatever was sent ("On output this shows the network
// ID instead of the name", containerpb Cluster.network), and terraform-provider-google compares
// them with CompareSelfLinkOrResourceName.
func sameResource(a, b string) bool {
	i, j := strings.Index(a, "projects/"), strings.Index(b, "projects/")
	if i >= 0 && j >= 0 {
		return a[i:] == b[j:]
	}
	return a[strings.LastIndex(a, "/")+1:] == b[strings.LastIndex(b, "/")+1:]
}

// keepSpelling is the value to store for a resource GKE reports as name and path (path may be
// unknown): the written value when it names the same resource, else GKE's name.
func keepSpelling(written types.String, name, path string) types.String {
	if !written.IsNull() && !written.IsUnknown() && sameResource(written.ValueString(), cmp.Or(path, name)) {
		return written
	}
	return types.StringValue(name)
}

// canonicalScopes are scopes as a set: sorted, without duplicates (GKE answers them sorted).
func canonicalScopes(scopes []string) []string {
	out := slices.Clone(scopes)
	slices.Sort(out)
	return slices.Compact(out)
}

// addedScopes are scopes GKE adds to a list sent without them: a monitoring scope ("If the default
// service account would not otherwise have it, the monitoring.write scope is added ... regardless
// of what the user provided", terraform-provider-google containerClusterAddedScopesSuppress;
// recorded GKE answers add .../auth/monitoring).
var addedScopes = []string{"https://www.googleapis.com/auth/monitoring", "https://www.googleapis.com/auth/monitoring.write"}

// sameScopes reports whether GKE's answer holds the scopes written, in any order, with at most
// the scopes GKE adds besides.
func sameScopes(written, reported []string) bool {
	w, r := canonicalScopes(written), canonicalScopes(reported)
	if slices.Equal(w, r) {
		return true
	}
	r = slices.DeleteFunc(r, func(s string) bool { return slices.Contains(addedScopes, s) && !slices.Contains(w, s) })
	return slices.Equal(w, r)
}

// keepScopes is the value to store for the scopes GKE reports: the written list when it means the
// same, else GKE's.
func keepScopes(ctx context.Context, written types.List, reported []string, diags *diag.Diagnostics) types.List {
	if !written.IsNull() && !written.IsUnknown() {
		var w []string
		diags.Append(written.ElementsAs(ctx, &w, false)...)
		if sameScopes(w, reported) {
			return written
		}
	}
	l, d := types.ListValueFrom(ctx, types.StringType, reported)
	diags.Append(d...)
	return l
}
