package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// history_server of raytpu_ray_cluster and raytpu_ray_service: the History Server's collector on
// every Ray Pod (kube.AddCollector), and the Kubernetes service account the Pods run as to write
// the bucket, which raytpu makes before it applies the RayCluster or RayService and deletes once no
// Pod runs as it (kube.HistoryAccount).

type rayHistoryModel struct {
	Bucket                   types.String `tfsdk:"bucket"`
	GoogleServiceAccount     types.String `tfsdk:"google_service_account"`
	CollectorImage           types.String `tfsdk:"collector_image"`
	KubernetesServiceAccount types.String `tfsdk:"kubernetes_service_account"`
}

var rayHistoryAttrTypes = map[string]attr.Type{
	"bucket": types.StringType, "google_service_account": types.StringType, "collector_image": types.StringType,
	"kubernetes_service_account": types.StringType,
}

const (
	// defaultCollectorImage is the collector of the KubeRay release whose History Server
	// raytpu_ray_history_server runs, published with it (kuberay v1.7.0,
	// .github/workflows/image-release.yaml, release_historyserver_collector_image:
	// quay.io/kuberay/collector:<tag>).
	defaultCollectorImage = "quay.io/kuberay/collector:v1.7.0"
	historyAccountSuffix  = "-ray-history"
	// rayHistoryAnnotation keeps history_server on the RayCluster or RayService beside
	// rayConfigAnnotation, for an import.
	rayHistoryAnnotation = "raytpu.dev/history-server"
)

var historyAccountPath = path.Root("history_server").AtName("kubernetes_service_account")

func rayHistorySchema(k rayKind) schema.SingleNestedAttribute {
	change := "Adding, changing or removing it restarts the head and every worker, which then run with or without the collector."
	if k.kind == rayServiceKind.kind {
		change = "Adding, changing or removing it changes what the RayCluster is made of: an upgrade or a replacement, as `upgrade_strategy` says."
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Archives the logs and events of the " + k.kind + "'s Ray runs to a Cloud Storage bucket, where the Ray " +
			"History Server (`raytpu_ray_history_server` of the same bucket) shows them after the " + k.kind + " is gone: KubeRay's " +
			"collector sidecar beside the Ray container of the head and of every worker, sharing Ray's session folder `/tmp/ray` " +
			"(an `emptyDir`), with Ray's event export turned on (`RAY_enable_ray_event`), as KubeRay v1.7.0's setup for Cloud " +
			"Storage has it. The Pods run as `kubernetes_service_account`, which raytpu creates bound to `google_service_account` " +
			"before it applies the " + k.kind + " and deletes with it, so the head and worker groups take no `service_account_name`. " +
			change,
		Attributes: map[string]schema.Attribute{
			"bucket": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the Cloud Storage bucket the collectors write to (`my-ray-history`, not " +
					"`gs://my-ray-history`): the `bucket` of the `raytpu_ray_history_server`.",
				Validators: []validator.String{stringvalidator.RegexMatches(bucketNamePattern, bucketNameMessage)},
			},
			"google_service_account": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Email of the Google service account the collectors write the bucket as, through Workload " +
					"Identity. Grant it `roles/storage.objectUser` on the bucket, and `roles/iam.workloadIdentityUser` to " +
					"`serviceAccount:{project}.svc.id.goog[{namespace}/{kubernetes_service_account}]`.",
				Validators: []validator.String{stringvalidator.RegexMatches(googleServiceAccountPattern, googleServiceAccountMessage)},
			},
			"collector_image": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(defaultCollectorImage),
				MarkdownDescription: "The collector's image, pinned to the KubeRay release of `raytpu_ray_history_server`'s " +
					"default image. Default `" + defaultCollectorImage + "`.",
			},
			"kubernetes_service_account": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "The Kubernetes service account the head and workers run as, which raytpu creates in `namespace` " +
					"(annotated `iam.gke.io/gcp-service-account`) and deletes; one of that name that raytpu did not make is refused. " +
					"Default `{name}" + historyAccountSuffix + "`.",
				Validators: []validator.String{stringvalidator.RegexMatches(namespacePat,
					"must be a ServiceAccount name: at most 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit")},
			},
		},
	}
}

// rayHistoryConfig is history_server as rayHistoryAnnotation keeps it.
type rayHistoryConfig struct {
	Bucket                   string `json:"bucket"`
	GoogleServiceAccount     string `json:"google_service_account"`
	CollectorImage           string `json:"collector_image"`
	KubernetesServiceAccount string `json:"kubernetes_service_account"`
}

// historyConfigOf is history_server of m, nil when unset or not known yet; a service account the
// plan does not know yet is the default.
func historyConfigOf(ctx context.Context, m rayConfigModel) *rayHistoryConfig {
	if m.HistoryServer.IsNull() || m.HistoryServer.IsUnknown() {
		return nil
	}
	var h rayHistoryModel
	if m.HistoryServer.As(ctx, &h, basetypes.ObjectAsOptions{}).HasError() {
		return nil
	}
	c := &rayHistoryConfig{Bucket: h.Bucket.ValueString(), GoogleServiceAccount: h.GoogleServiceAccount.ValueString(),
		CollectorImage: h.CollectorImage.ValueString(), KubernetesServiceAccount: h.KubernetesServiceAccount.ValueString()}
	if h.KubernetesServiceAccount.IsUnknown() && !m.Name.IsUnknown() {
		c.KubernetesServiceAccount = m.Name.ValueString() + historyAccountSuffix
	}
	return c
}

// planHistoryServer fills the default of kubernetes_service_account, which names the resource.
func planHistoryServer(ctx context.Context, plan *rayConfigModel, diags *diag.Diagnostics) {
	c := historyConfigOf(ctx, *plan)
	if c == nil || c.KubernetesServiceAccount == "" {
		return
	}
	attrs := plan.HistoryServer.Attributes()
	if v, _ := attrs["kubernetes_service_account"].(types.String); !v.IsUnknown() {
		return
	}
	attrs["kubernetes_service_account"] = types.StringValue(c.KubernetesServiceAccount)
	obj, d := types.ObjectValue(rayHistoryAttrTypes, attrs)
	diags.Append(d...)
	plan.HistoryServer = obj
}

// addHistoryServer puts history_server of m on the RayCluster spec: the collectors, and the
// annotation an import reads it back from.
func addHistoryServer(ctx context.Context, m rayConfigModel, spec *kube.RayClusterSpec) {
	c := historyConfigOf(ctx, m)
	if c == nil {
		return
	}
	spec.HistoryServer = &kube.Collector{Bucket: c.Bucket, Image: c.CollectorImage, ServiceAccount: c.KubernetesServiceAccount,
		GoogleServiceAccount: c.GoogleServiceAccount}
	text, _ := json.Marshal(c)
	spec.Annotations[rayHistoryAnnotation] = string(text)
}

// importHistoryServer writes into m the history_server kept in the annotations (null without one).
func importHistoryServer(ctx context.Context, annotations map[string]string, m *rayConfigModel) diag.Diagnostics {
	m.HistoryServer = types.ObjectNull(rayHistoryAttrTypes)
	text, ok := annotations[rayHistoryAnnotation]
	if !ok {
		return nil
	}
	var c rayHistoryConfig
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		var diags diag.Diagnostics
		diags.AddAttributeError(path.Root("history_server"), "Invalid History Server Annotation", fmt.Sprintf("the %s annotation is "+
			"not what raytpu writes (%s): set history_server in the configuration and apply.", rayHistoryAnnotation, err))
		return diags
	}
	obj, diags := types.ObjectValueFrom(ctx, rayHistoryAttrTypes, rayHistoryModel{Bucket: types.StringValue(c.Bucket),
		GoogleServiceAccount: types.StringValue(c.GoogleServiceAccount), CollectorImage: types.StringValue(c.CollectorImage),
		KubernetesServiceAccount: types.StringValue(c.KubernetesServiceAccount)})
	m.HistoryServer = obj
	return diags
}

// historyChanged says whether an update adds, changes or removes history_server.
func historyChanged(ctx context.Context, prior, next rayConfigModel) bool {
	a, b := historyConfigOf(ctx, prior), historyConfigOf(ctx, next)
	return (a == nil) != (b == nil) || (a != nil && *a != *b)
}

// validateHistoryServer refuses, with history_server, the Pod settings that would undo the
// collector: a service account of the Pods' own, which the collector would write as, and the
// volume, mount path and Ray variables it sets.
func validateHistoryServer(ctx context.Context, m rayConfigModel, diags *diag.Diagnostics) {
	if m.HistoryServer.IsNull() {
		return
	}
	type pod struct {
		p path.Path
		rayPodModel
	}
	var pods []pod
	if !m.Head.IsNull() && !m.Head.IsUnknown() {
		var h rayHeadModel
		if !m.Head.As(ctx, &h, basetypes.ObjectAsOptions{}).HasError() {
			pods = append(pods, pod{path.Root("head"), h.rayPodModel})
		}
	}
	var groups []rayWorkerGroupModel
	if !m.WorkerGroups.IsNull() && !m.WorkerGroups.IsUnknown() && !m.WorkerGroups.ElementsAs(ctx, &groups, false).HasError() {
		for i, g := range groups {
			pods = append(pods, pod{path.Root("worker_groups").AtListIndex(i), g.rayPodModel})
		}
	}
	for _, pod := range pods {
		p := pod.p
		if sa := pod.ServiceAccountName; !sa.IsNull() {
			diags.AddAttributeError(p.AtName("service_account_name"), "Service Account With History Server", fmt.Sprintf("%s.service_account_name "+
				"is set together with history_server: the Pods run as history_server.kubernetes_service_account, the one bound to "+
				"history_server.google_service_account, which the collector writes the bucket as. Remove service_account_name, and grant "+
				"what the Pods need to history_server.google_service_account; or remove history_server.", p))
		}
		if env, ok := knownMap(ctx, pod.Env); ok {
			for _, name := range kube.CollectorRayEnv() {
				if _, set := env[name]; set {
					diags.AddAttributeError(p.AtName("env"), "Setting Of The History Server", fmt.Sprintf("%s.env %q is set by "+
						"history_server, which makes Ray keep its session folder where the collector reads it and export its events "+
						"to it: remove it, or remove history_server.", p, name))
				}
			}
		}
		var volumes []rayVolumeConfig
		if pod.Volumes.IsNull() || pod.Volumes.IsUnknown() || pod.Volumes.ElementsAs(ctx, &volumes, false).HasError() {
			continue
		}
		for i, v := range volumes {
			if v.Name == kube.CollectorVolume || v.MountPath == kube.CollectorMountPath {
				diags.AddAttributeError(p.AtName("volumes").AtListIndex(i), "Setting Of The History Server", fmt.Sprintf("%s.volumes[%d] "+
					"(name %q, mount_path %q) takes the volume %q or the mount path %s of history_server's shared Ray session folder: "+
					"use another name and mount path, or remove history_server.", p, i, v.Name, v.MountPath, kube.CollectorVolume,
					kube.CollectorMountPath))
			}
		}
	}
}

// applyHistoryAccount makes the service account the Pods of spec run as for their collectors,
// before the RayCluster or RayService of owner (rayKind.claimer) is applied: the API server
// refuses Pods whose service account does not exist.
func applyHistoryAccount(ctx context.Context, k *kube.Client, spec kube.RayClusterSpec, owner, action string, diags *diag.Diagnostics) {
	a, ok := spec.HistoryAccount(owner)
	if !ok {
		return
	}
	switch err := k.ApplyHistoryAccount(ctx, a); {
	case errors.Is(err, kube.ErrServiceAccountNotOwned):
		diags.AddAttributeError(historyAccountPath, "Service Account Not raytpu's", fmt.Sprintf("%s: history_server.kubernetes_service_account "+
			"%q: namespace %s has a ServiceAccount of that name that raytpu did not make for these Ray Pods, and raytpu neither takes it "+
			"over nor deletes it. Leave kubernetes_service_account unset (default %q), or name one that does not exist: raytpu "+
			"creates it, bound to google_service_account.", action, a.Name, a.Namespace, spec.Name+historyAccountSuffix))
	case err != nil:
		diags.AddAttributeError(historyAccountPath, "Error Applying Service Account", fmt.Sprintf("%s: %s", action, err))
	}
}

// releaseHistoryAccounts deletes the service accounts raytpu made for the Pods of m (of kind k)
// but the one history_server names, once no Pod runs as them: those of a history_server removed or
// renamed, also by an apply that failed before. keep false deletes them all (destroy).
func releaseHistoryAccounts(ctx context.Context, k *kube.Client, m rayConfigModel, kind rayKind, keep bool, action string, diags *diag.Diagnostics) {
	current := ""
	if c := historyConfigOf(ctx, m); c != nil && keep {
		current = c.KubernetesServiceAccount
	}
	if err := k.DeleteHistoryAccounts(ctx, m.Namespace.ValueString(), kind.claimer(m.Name.ValueString()), current); err != nil {
		diags.AddWarning("Service Account Not Deleted", fmt.Sprintf("%s: a service account raytpu made for the Pods of a "+
			"history_server no longer in use is left: %s. Delete it with kubectl delete serviceaccount -n %s -l %s=%s.", action, err,
			m.Namespace.ValueString(), kube.HistoryAccountOwnerLabel, kind.claimer(m.Name.ValueString())))
	}
}

// historyAccountInSync says whether the service account of spec's collectors is as raytpu made it
// for owner, and why not.
func historyAccountInSync(ctx context.Context, k *kube.Client, spec kube.RayClusterSpec, owner string) (bool, string) {
	a, ok := spec.HistoryAccount(owner)
	if !ok {
		return true, ""
	}
	current, why, err := k.HistoryAccountCurrent(ctx, a)
	if err != nil {
		return false, err.Error()
	}
	return current, why
}
