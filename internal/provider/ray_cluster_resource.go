package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*rayClusterResource)(nil)
	_ resource.ResourceWithImportState    = (*rayClusterResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*rayClusterResource)(nil)
	_ resource.ResourceWithValidateConfig = (*rayClusterResource)(nil)
)

// NewRayClusterResource returns raytpu_ray_cluster: a KubeRay RayCluster over whole TPU slices.
func NewRayClusterResource() resource.Resource {
	return &rayClusterResource{}
}

type rayClusterResource struct {
	resourceBase
}

// rayStateWait bounds the wait for KubeRay to report a running RayCluster ready.
const rayStateWait = time.Minute

// privateSpecKey keeps the hash of the spec raytpu applied, to tell a RayCluster changed outside
// Terraform.
const privateSpecKey = "applied_spec"

var pathClusterID = path.Root("cluster_id")

func (r *rayClusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ray_cluster"
}

func (r *rayClusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rayClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Create, 30*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	plan.ID = types.StringValue(rayClusterID(plan.ClusterID.ValueString(), plan.Namespace.ValueString(), plan.Name.ValueString()))
	hash := r.apply(ctx, &plan, nil, "creating", &resp.Diagnostics)
	if hash == "" {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateSpecKey, []byte(`"`+hash+`"`))...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayClusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel := withPlanTimeout(ctx)
	defer cancel()
	var state rayClusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	action := "reading raytpu_ray_cluster (" + state.ID.ValueString() + ")"
	client := r.client(ctx, action, &resp.Diagnostics)
	if client == nil {
		return
	}
	k, gone := r.kubeFor(ctx, client, state.ClusterID.ValueString(), false, action, &resp.Diagnostics)
	if gone {
		resp.State.RemoveResource(ctx)
		return
	}
	if k == nil {
		return
	}
	defer k.Close()
	rc, err := k.GetRayCluster(ctx, state.Namespace.ValueString(), state.Name.ValueString())
	switch {
	case errors.Is(err, kube.ErrRayClusterNotFound), errors.Is(err, kube.ErrKubeRayNotServed):
		// Deleted outside Terraform (or KubeRay with it): the next plan creates it again.
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Error Reading RayCluster", fmt.Sprintf("%s: %s", action, err))
		return
	}
	if state.WorkerGroups.IsNull() {
		// Just imported: the configuration comes from the annotation raytpu writes.
		var cfg rayConfig
		if err := json.Unmarshal([]byte(rc.Annotations[rayConfigAnnotation]), &cfg); err != nil {
			resp.Diagnostics.AddError("RayCluster Not Managed By raytpu", fmt.Sprintf("%s: the RayCluster has no valid %s annotation, so "+
				"raytpu cannot tell the configuration it was made from. Import only RayClusters that raytpu_ray_cluster created.", action, rayConfigAnnotation))
			return
		}
		resp.Diagnostics.Append(applyRayConfig(ctx, cfg, &state)...)
		state.Ray = rayNamesObject(state.RayVersion)
		svc, dash, cl := rayAddresses(state.Namespace.ValueString(), state.Name.ValueString())
		state.HeadService, state.DashboardAddress, state.ClientAddress = types.StringValue(svc), types.StringValue(dash), types.StringValue(cl)
	}
	live := specHash(rc)
	var applied string
	if data, d := req.Private.GetKey(ctx, privateSpecKey); !d.HasError() && len(data) > 0 {
		_ = json.Unmarshal(data, &applied)
	}
	if applied == "" {
		applied = live
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateSpecKey, []byte(`"`+live+`"`))...)
	}
	state.InSync = types.BoolValue(live == applied)
	r.observe(ctx, k, &state, rc, false, action, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *rayClusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state rayClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, plan.Timeouts.Update, 30*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	hash := r.apply(ctx, &plan, &state, "updating", &resp.Diagnostics)
	if hash == "" {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateSpecKey, []byte(`"`+hash+`"`))...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *rayClusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state rayClusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := withTimeout(ctx, state.Timeouts.Delete, 10*time.Minute, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	action := "deleting raytpu_ray_cluster (" + state.ID.ValueString() + ")"
	client := r.client(ctx, action, &resp.Diagnostics)
	if client == nil {
		return
	}
	k, gone := r.kubeFor(ctx, client, state.ClusterID.ValueString(), false, action, &resp.Diagnostics)
	if gone || k == nil {
		return
	}
	defer k.Close()
	err := k.DeleteRayCluster(ctx, state.Namespace.ValueString(), state.Name.ValueString())
	if err != nil && !errors.Is(err, kube.ErrKubeRayNotServed) {
		resp.Diagnostics.AddError("Error Deleting RayCluster", fmt.Sprintf("%s: %s. Its Pods hold TPU hosts until they end; "+
			"check them with kubectl get pods -l ray.io/cluster=%s -n %s.", action, err, state.Name.ValueString(), state.Namespace.ValueString()))
		return
	}
	// Its Pods are gone: the slices are free for another worker group.
	if err := releaseSlices(ctx, client, state.Namespace.ValueString(), state.Name.ValueString(), modelSlices(ctx, state)); err != nil {
		resp.Diagnostics.AddWarning("Slices Still Claimed", fmt.Sprintf("%s: the RayCluster is deleted, but %s. Until the labels %s, %s and %s "+
			"are removed from those node pools, no other worker group can use them.", action, err,
			kube.ClaimNamespaceLabel, kube.ClaimClusterLabel, kube.ClaimGroupLabel))
	}
}

// ImportState takes {cluster_id}/rayClusters/{namespace}/{name} or {cluster_id}/{namespace}/{name};
// Read restores the configuration from the RayCluster's raytpu annotation.
func (r *rayClusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, namespace, name, err := parseRayClusterImportID(req.ID)
	if err != nil {
		invalidImportID(resp, err)
		return
	}
	importAttributes(ctx, resp, map[string]any{
		"id": rayClusterID(cluster.String(), namespace, name), "cluster_id": cluster.String(), "namespace": namespace, "name": name,
	})
}

// apply claims the slices of m's groups, applies the RayCluster of m, waits until it runs on whole
// slices, releases the slices of prior (the state before an update) that no group has any more, and
// fills m's outputs. It returns the hash of the applied spec, or "" when it failed before applying
// anything.
func (r *rayClusterResource) apply(ctx context.Context, m, prior *rayClusterModel, verb string, diags *diag.Diagnostics) string {
	action := verb + " raytpu_ray_cluster (" + m.ID.ValueString() + ")"
	client := r.client(ctx, action, diags)
	if client == nil {
		return ""
	}
	k, gone := r.kubeFor(ctx, client, m.ClusterID.ValueString(), true, action, diags)
	if gone {
		diags.AddError("Cluster Not Found", fmt.Sprintf("%s: cluster %s does not exist.", action, m.ClusterID.ValueString()))
	}
	if k == nil {
		return ""
	}
	defer k.Close()
	spec, groups := resolveRayCluster(ctx, client, *m, diags)
	if diags.HasError() {
		return ""
	}
	checkServiceAccounts(ctx, k, spec, action, diags)
	if diags.HasError() {
		return ""
	}
	for _, g := range groups {
		if g.Claim == nil {
			continue
		}
		if err := claimSlices(ctx, client, *g.Claim, g.slices); err != nil {
			diags.AddError("Error Claiming Slices", fmt.Sprintf("%s: %s", action, err))
			return ""
		}
	}
	obj, err := kube.RayClusterObject(spec)
	if err != nil {
		diags.AddError("Invalid RayCluster", fmt.Sprintf("%s: %s.", action, err))
		return ""
	}
	applied, err := k.ApplyRayCluster(ctx, obj)
	if err != nil {
		diags.AddError("Error Applying RayCluster", fmt.Sprintf("%s: %s", action, err))
		return ""
	}
	m.InSync = types.BoolValue(true)
	r.observe(ctx, k, m, applied, true, action, diags)
	if prior != nil {
		if err := releaseSlices(ctx, client, m.Namespace.ValueString(), m.Name.ValueString(), leftSlices(ctx, *prior, *m)); err != nil {
			diags.AddWarning("Slices Still Claimed", fmt.Sprintf("%s: %s. Another worker group cannot use them until their raytpu.dev/ray-* labels go.", action, err))
		}
	}
	return specHash(applied)
}

// kubeFor returns a client for the cluster's API server, with KubeRay serving. gone is true when
// the cluster does not exist. With wait it waits a while for KubeRay's CRDs (GKE reports the
// add-on enabled before they serve); otherwise it does not check them.
func (r *rayClusterResource) kubeFor(ctx context.Context, client *gke.Client, clusterID string, wait bool, action string, diags *diag.Diagnostics) (k *kube.Client, gone bool) {
	id, err := gke.ParseClusterID(clusterID)
	if err != nil {
		diags.AddAttributeError(pathClusterID, "Invalid Cluster ID", err.Error()+".")
		return nil, false
	}
	cluster, err := client.GetCluster(ctx, id)
	if gke.IsNotFound(err) {
		return nil, true
	}
	if err != nil {
		diags.AddError("Error Reading Cluster", fmt.Sprintf("%s: reading cluster %s: %s", action, id, gke.WithAdvice(err)))
		return nil, false
	}
	if wait && !cluster.GetAddonsConfig().GetRayOperatorConfig().GetEnabled() {
		diags.AddAttributeError(pathClusterID, "KubeRay Not Ready", fmt.Sprintf("%s: cluster %s does not have the Ray Operator add-on, so "+
			"its API server serves no RayClusters. Create the cluster with raytpu_cluster, or enable the add-on with raytpu_ray_operator.", action, id))
		return nil, false
	}
	k, err = kubeClient(client, accessOf(cluster))
	if err != nil {
		diags.AddError("Kubernetes Client Error", fmt.Sprintf("%s: %s", action, err))
		return nil, false
	}
	if wait {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if _, err := k.WaitForKubeRay(wctx, kubePollInterval); err != nil {
			k.Close()
			diags.AddAttributeError(pathClusterID, "KubeRay Not Ready", fmt.Sprintf("%s: %s. The Ray Operator add-on of %s installs the "+
				"KubeRay CRDs shortly after it is enabled; apply again once raytpu_cluster or raytpu_ray_operator reports kuberay.ready.", action, err, id))
			return nil, false
		}
	}
	return k, false
}

// observe fills the outputs from the RayCluster's Pods. With wait it first waits until the head
// and every worker run, and then requires every replica on distinct hosts of one slice.
func (r *rayClusterResource) observe(ctx context.Context, k *kube.Client, m *rayClusterModel, rc *rayv1.RayCluster, wait bool, action string, diags *diag.Diagnostics) {
	want := expectationsOf(rc)
	var (
		pods []kube.RayPod
		err  error
	)
	var w *kube.RayClusterWatch
	if wait {
		w = k.WatchRayCluster(ctx, rc.Namespace, rc.Name)
		defer w.Close()
		pods, err = w.WaitForPods(ctx, func(p []kube.RayPod) bool { return allRunning(p, want) })
		if err != nil {
			diags.AddError("RayCluster Not Running", fmt.Sprintf("%s: %s. %sWorkers stay Pending while no slice of their shape is free: "+
				"check the slices' hosts, and for auto-provisioned groups the cluster's node auto-provisioning limits. Terraform taints "+
				"the resource; the next apply replaces it.", action, err, waitingGroups(pods, want)))
		}
	} else {
		pods, err = k.RayClusterPods(ctx, rc.Namespace, rc.Name)
		if err != nil {
			diags.AddWarning("RayCluster Pods Unknown", fmt.Sprintf("%s: %s", action, err))
		}
	}
	problems := placementProblems(pods, want)
	if wait && err == nil && len(problems) > 0 {
		diags.AddError("Ray Workers Not On Whole Slices", fmt.Sprintf("%s: %v. Each replica must run on distinct hosts of one slice, "+
			"whose ICI links them.", action, problems))
	}
	if wait && err == nil && len(problems) == 0 {
		// KubeRay reports the cluster ready a moment after its Pods run; waiting for that keeps
		// the next refresh from finding a status the apply did not report.
		sctx, cancel := context.WithTimeout(ctx, rayStateWait)
		if latest, err := w.WaitForState(sctx, rayv1.Ready); latest != nil && err == nil {
			rc = latest
		}
		cancel()
	} else if latest, err := k.GetRayCluster(ctx, rc.Namespace, rc.Name); err == nil {
		rc = latest
	}
	// State (ready, suspended) is deprecated for Conditions but still set by KubeRay v1.5, and it is
	// the one word users know.
	m.Status = types.StringValue(string(rc.Status.State)) //nolint:staticcheck // see above
	m.Healthy = types.BoolValue(allRunning(pods, want) && len(problems) == 0 && everyWorkerRunning(pods))
	m.Placement = flattenPlacement(pods)
}

// checkServiceAccounts requires the ServiceAccounts the head and the groups name to exist: KubeRay
// could not create the Pods otherwise, and the create would wait until its timeout.
func checkServiceAccounts(ctx context.Context, k *kube.Client, spec kube.RayClusterSpec, action string, diags *diag.Diagnostics) {
	check := func(p path.Path, name string) {
		if name == "" {
			return
		}
		switch err := k.GetServiceAccount(ctx, spec.Namespace, name); {
		case errors.Is(err, kube.ErrNotFound):
			diags.AddAttributeError(p, "Service Account Not Found", fmt.Sprintf("%s: service_account_name %q: namespace %s has no such "+
				"ServiceAccount, so KubeRay could not create the Pods. Create it first (kubernetes_service_account, or kubectl create "+
				"serviceaccount %s -n %s), annotated iam.gke.io/gcp-service-account for Workload Identity.", action, name, spec.Namespace, name, spec.Namespace))
		case err != nil:
			diags.AddAttributeError(p, "Error Reading Service Account", fmt.Sprintf("%s: %s", action, err))
		}
	}
	check(path.Root("head").AtName("service_account_name"), spec.Head.Pod.ServiceAccountName)
	for i, g := range spec.Groups {
		check(path.Root("worker_groups").AtListIndex(i).AtName("service_account_name"), g.Pod.ServiceAccountName)
	}
}

func everyWorkerRunning(pods []kube.RayPod) bool {
	for _, p := range pods {
		if !p.Running {
			return false
		}
	}
	return true
}

// specHash identifies a RayCluster's spec as the API server stores it.
func specHash(rc *rayv1.RayCluster) string {
	data, _ := json.Marshal(rc.Spec)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
