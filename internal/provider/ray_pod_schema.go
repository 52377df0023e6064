package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// What a Ray Pod carries beyond what raytpu derives from its slices (kube.PodSettings), with the
// same attributes in the head and in every worker group, of a RayCluster or of a RayService.

// rayPodModel is embedded in the head's and the worker groups' models.
type rayPodModel struct {
	Image              types.String `tfsdk:"image"`
	Env                types.Map    `tfsdk:"env"`
	ServiceAccountName types.String `tfsdk:"service_account_name"`
	Labels             types.Map    `tfsdk:"labels"`
	Annotations        types.Map    `tfsdk:"annotations"`
	NodeSelector       types.Map    `tfsdk:"node_selector"`
	Volumes            types.List   `tfsdk:"volumes"`
}

// rayVolumeConfig is one element of volumes, read once it is known (an unset source is nil).
type rayVolumeConfig struct {
	Name                  string        `tfsdk:"name" json:"name"`
	MountPath             string        `tfsdk:"mount_path" json:"mount_path"`
	ReadOnly              *bool         `tfsdk:"read_only" json:"read_only,omitempty"`
	EmptyDir              *rayEmptyDir  `tfsdk:"empty_dir" json:"empty_dir,omitempty"`
	ConfigMap             *rayConfigMap `tfsdk:"config_map" json:"config_map,omitempty"`
	Secret                *raySecret    `tfsdk:"secret" json:"secret,omitempty"`
	PersistentVolumeClaim *rayClaim     `tfsdk:"persistent_volume_claim" json:"persistent_volume_claim,omitempty"`
	CSI                   *rayCSIVolume `tfsdk:"csi" json:"csi,omitempty"`
}

type rayEmptyDir struct {
	Medium    *string `tfsdk:"medium" json:"medium,omitempty"`
	SizeLimit *string `tfsdk:"size_limit" json:"size_limit,omitempty"`
}
type rayConfigMap struct {
	Name string `tfsdk:"name" json:"name"`
}
type raySecret struct {
	SecretName string `tfsdk:"secret_name" json:"secret_name"`
}
type rayClaim struct {
	ClaimName string `tfsdk:"claim_name" json:"claim_name"`
}
type rayCSIVolume struct {
	Driver           string            `tfsdk:"driver" json:"driver"`
	VolumeAttributes map[string]string `tfsdk:"volume_attributes" json:"volume_attributes,omitempty"`
}

var (
	rayVolumeAttrTypes = map[string]attr.Type{
		"name": types.StringType, "mount_path": types.StringType, "read_only": types.BoolType,
		"empty_dir":               types.ObjectType{AttrTypes: map[string]attr.Type{"medium": types.StringType, "size_limit": quantityType{}}},
		"config_map":              types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType}},
		"secret":                  types.ObjectType{AttrTypes: map[string]attr.Type{"secret_name": types.StringType}},
		"persistent_volume_claim": types.ObjectType{AttrTypes: map[string]attr.Type{"claim_name": types.StringType}},
		"csi": types.ObjectType{AttrTypes: map[string]attr.Type{
			"driver": types.StringType, "volume_attributes": types.MapType{ElemType: types.StringType},
		}},
	}
	rayPodAttrTypes = map[string]attr.Type{
		"image": types.StringType, "env": types.MapType{ElemType: types.StringType}, "service_account_name": types.StringType,
		"labels": types.MapType{ElemType: types.StringType}, "annotations": types.MapType{ElemType: types.StringType},
		"node_selector": types.MapType{ElemType: types.StringType},
		"volumes":       types.ListType{ElemType: types.ObjectType{AttrTypes: rayVolumeAttrTypes}},
	}
)

// withPodAttrTypes adds the Pod settings to the attribute types of the head or a worker group.
func withPodAttrTypes(m map[string]attr.Type) map[string]attr.Type {
	out := make(map[string]attr.Type, len(m)+len(rayPodAttrTypes))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range rayPodAttrTypes {
		out[k] = v
	}
	return out
}

// withPodAttributes adds the Pod settings to the attributes of the head or (worker) a worker
// group.
func withPodAttributes(attrs map[string]schema.Attribute, worker bool) map[string]schema.Attribute {
	whose, image := "the head Pod", "Container image of the head; default the RayCluster's `image`."
	nodeSelector := "Extra node selector of the head, such as a CPU node pool: `{\"cloud.google.com/gke-nodepool\" = \"ray-head\"}`."
	env := "Environment variables of the Ray container."
	if worker {
		whose, image = "the group's Pods", "Container image of the group's workers; default the RayCluster's `image`. Keep the Ray version the same."
		nodeSelector = "Extra node selector of the group's workers, added to the one raytpu derives from the slices (whose keys it may " +
			"not repeat: the TPU accelerator and topology, the node pool and raytpu's `raytpu.dev/` labels)."
		env = "Environment variables of the Ray container. The names GKE's TPU webhook sets (`TPU_WORKER_ID`, `TPU_WORKER_HOSTNAMES`, " +
			"`TPU_NAME`, `TPU_PROCESS_*`, `TPU_DEVICE_PLUGIN_*`, `MEGASCALE_*`) are refused. Values are kept in the state and in " +
			"the Pod spec in plain text: mount a `secret` volume for secrets."
	}
	stringMap := func(d string) schema.MapAttribute {
		return schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: d}
	}
	out := make(map[string]schema.Attribute, len(attrs)+len(rayPodAttrTypes))
	for k, v := range attrs {
		out[k] = v
	}
	out["image"] = schema.StringAttribute{
		Optional: true, MarkdownDescription: image,
		Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
	}
	out["env"] = stringMap(env)
	out["service_account_name"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Kubernetes ServiceAccount of " + whose + ", in the RayCluster's namespace; it must exist (checked before " +
			"the RayCluster is applied). With Workload Identity, which `raytpu_cluster` enables, this is how the Pods act as a " +
			"Google service account (a ServiceAccount annotated `iam.gke.io/gcp-service-account`, or one granted roles directly). " +
			"Default: the namespace's `default`.",
	}
	out["labels"] = stringMap("Labels of " + whose + ". KubeRay's (`ray.io/`, `app.kubernetes.io/name`, `app.kubernetes.io/created-by`) and raytpu's (`raytpu.dev/`) are refused.")
	out["annotations"] = stringMap("Annotations of " + whose + " (for example `gke-gcsfuse/volumes = \"true\"` for a Cloud Storage FUSE `csi` volume). raytpu's (`raytpu.dev/`) are refused.")
	out["node_selector"] = stringMap(nodeSelector)
	out["volumes"] = rayVolumesSchema(whose)
	return out
}

func rayVolumesSchema(whose string) schema.ListNestedAttribute {
	source := func(d string, attrs map[string]schema.Attribute) schema.SingleNestedAttribute {
		return schema.SingleNestedAttribute{Optional: true, MarkdownDescription: d, Attributes: attrs}
	}
	required := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Required: true, MarkdownDescription: d}
	}
	return schema.ListNestedAttribute{
		Optional: true,
		MarkdownDescription: "Volumes of " + whose + ", each mounted in the Ray container at `mount_path`. Each has exactly one source: " +
			"`empty_dir`, `config_map`, `secret`, `persistent_volume_claim` or `csi`.",
		Validators: []validator.List{listvalidator.SizeAtLeast(1)},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name":       required("Volume name, a DNS label unique in the Pod."),
			"mount_path": required("Absolute path in the Ray container."),
			"read_only":  schema.BoolAttribute{Optional: true, MarkdownDescription: "Mount read-only. Default `false`."},
			"empty_dir": source("A scratch directory for the Pod's life; `medium = \"Memory\"` makes a tmpfs, as a large `/dev/shm` for JAX wants.", map[string]schema.Attribute{
				"medium":     schema.StringAttribute{Optional: true, MarkdownDescription: "`Memory` for a tmpfs; unset, the node's disk.", Validators: []validator.String{stringvalidator.OneOf("Memory")}},
				"size_limit": schema.StringAttribute{Optional: true, CustomType: quantityType{}, MarkdownDescription: "Size limit, a Kubernetes quantity such as `32Gi`."},
			}),
			"config_map": source("A ConfigMap of the namespace.", map[string]schema.Attribute{"name": required("ConfigMap name.")}),
			"secret":     source("A Secret of the namespace.", map[string]schema.Attribute{"secret_name": required("Secret name.")}),
			"persistent_volume_claim": source("A PersistentVolumeClaim of the namespace.", map[string]schema.Attribute{
				"claim_name": required("PersistentVolumeClaim name."),
			}),
			"csi": source("A CSI ephemeral volume, such as Cloud Storage FUSE (`driver = \"gcsfuse.csi.storage.gke.io\"`, `volume_attributes = { bucketName = \"...\" }`, with the Pod annotation `gke-gcsfuse/volumes = \"true\"`).", map[string]schema.Attribute{
				"driver":            required("CSI driver name."),
				"volume_attributes": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "The driver's volume attributes."},
			}),
		}},
	}
}
