package provider

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type rayHistoryServerModel struct {
	ID                   types.String   `tfsdk:"id"`
	ClusterID            types.String   `tfsdk:"cluster_id"`
	Namespace            types.String   `tfsdk:"namespace"`
	Name                 types.String   `tfsdk:"name"`
	Bucket               types.String   `tfsdk:"bucket"`
	GoogleServiceAccount types.String   `tfsdk:"google_service_account"`
	Image                types.String   `tfsdk:"image"`
	CPU                  quantityValue  `tfsdk:"cpu"`
	Memory               quantityValue  `tfsdk:"memory"`
	MemoryLimit          quantityValue  `tfsdk:"memory_limit"`
	ServiceAccount       types.String   `tfsdk:"kubernetes_service_account"`
	Address              types.String   `tfsdk:"address"`
	PortForward          types.String   `tfsdk:"port_forward_command"`
	Timeouts             timeouts.Value `tfsdk:"timeouts"`
}

// The History Server of KubeRay v1.7.0, the first release to call it beta (KubeRay's v1.7.0
// release notes); its image is published with each KubeRay release (quay.io/kuberay). Its requests
// and memory limit are those of KubeRay's manifest (historyserver/config/historyserver-gcs.yaml:
// "Cache is soft-bounded at 8 GiB; 12 GiB leaves decode headroom").
const (
	defaultHistoryServerImage       = "quay.io/kuberay/historyserver:v1.7.0"
	defaultHistoryServerCPU         = "500m"
	defaultHistoryServerMemory      = "2Gi"
	defaultHistoryServerMemoryLimit = "12Gi"
)

var (
	// bucketNamePattern is a Cloud Storage bucket name without dots (Cloud Storage, "Bucket naming
	// rules": 3 to 63 characters, lower-case letters, digits, dashes and underscores, starting
	// and ending with a letter or digit). Names with dots, up to 222 characters, are accepted too.
	bucketNamePattern = regexp.MustCompile(`^[a-z0-9][-a-z0-9_.]{1,220}[a-z0-9]$`)
	// googleServiceAccountPattern is a Google service account email.
	googleServiceAccountPattern = regexp.MustCompile(`^[a-z0-9][-a-z0-9]*@[a-z0-9][-a-z0-9.]*\.gserviceaccount\.com$`)
)

const (
	bucketNameMessage = "must be a Cloud Storage bucket name, such as my-ray-history: 3 to 222 lower-case letters, digits, dashes, " +
		"underscores and dots, without the gs:// prefix"
	googleServiceAccountMessage = "must be a Google service account email, such as history@my-project.iam.gserviceaccount.com"
)

func (r *rayHistoryServerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computed := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	optional := func(def, d string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(def), MarkdownDescription: d + " Default `" + def + "`."}
	}
	quantity := func(def, d string) schema.StringAttribute {
		a := optional(def, d)
		a.CustomType = quantityType{}
		return a
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Ray History Server of a cluster: KubeRay's server of the logs and events that RayClusters' collector " +
			"sidecars write to a Cloud Storage bucket, for debugging a run after its RayCluster and slices are gone. It runs as a " +
			"Deployment and a ClusterIP Service, with a Kubernetes service account bound through Workload Identity to a Google " +
			"service account that may read the bucket, and allowed to read RayClusters. Create waits until its Pod is ready.",
		Attributes: map[string]schema.Attribute{
			"id": computed("`{cluster_id}/historyServers/{namespace}/{name}`."),
			"cluster_id": clusterIDAttribute("the `id` of a `raytpu_cluster`. The cluster needs Workload Identity for the server to " +
				"read the bucket."),
			"namespace": namespaceAttribute(),
			"name": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("historyserver"),
				MarkdownDescription: "Name of the Deployment, Service and Kubernetes service account. Default `historyserver`, KubeRay's.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{stringvalidator.RegexMatches(rayNamePattern,
					"must be a DNS-1035 label of at most 40 characters: a lower-case letter, then lower-case letters, digits and hyphens")},
			},
			"bucket": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the Cloud Storage bucket the RayClusters' collectors write to (`my-ray-history`, not `gs://my-ray-history`).",
				Validators:          []validator.String{stringvalidator.RegexMatches(bucketNamePattern, bucketNameMessage)},
			},
			"google_service_account": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Email of the Google service account the server reads the bucket as, through Workload Identity " +
					"(`iam.gke.io/gcp-service-account` on its Kubernetes service account). Grant it `roles/storage.objectViewer` on the " +
					"bucket and `roles/iam.workloadIdentityUser` to `serviceAccount:{project}.svc.id.goog[{namespace}/{name}]`.",
				Validators: []validator.String{stringvalidator.RegexMatches(googleServiceAccountPattern, googleServiceAccountMessage)},
			},
			"image":                      optional(defaultHistoryServerImage, "History Server image, pinned to a KubeRay release."),
			"cpu":                        quantity(defaultHistoryServerCPU, "CPU the server requests."),
			"memory":                     quantity(defaultHistoryServerMemory, "Memory the server requests."),
			"memory_limit":               quantity(defaultHistoryServerMemoryLimit, "Memory limit of the server; its cache of sessions is bounded below it."),
			"kubernetes_service_account": computed("The Kubernetes service account the server runs as (`name`)."),
			"address":                    computed("In-cluster address of the server, `http://{name}.{namespace}.svc.cluster.local:30080`."),
			"port_forward_command": computed("A kubectl command that makes the server reachable at `http://localhost:8080` from where it " +
				"runs: `kubectl port-forward -n {namespace} svc/{name} 8080:30080`."),
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
