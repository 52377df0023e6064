package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// rayPodConfig is rayPodModel as the configuration annotation keeps it; nil is unset.
type rayPodConfig struct {
	Image              *string           `json:"image,omitempty"`
	Env                map[string]string `json:"env,omitempty"`
	ServiceAccountName *string           `json:"service_account_name,omitempty"`
	Labels             map[string]string `json:"labels,omitempty"`
	Annotations        map[string]string `json:"annotations,omitempty"`
	NodeSelector       map[string]string `json:"node_selector,omitempty"`
	Volumes            []rayVolumeConfig `json:"volumes,omitempty"`
}

func podConfigOf(ctx context.Context, m rayPodModel) (rayPodConfig, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := rayPodConfig{Image: m.Image.ValueStringPointer(), ServiceAccountName: m.ServiceAccountName.ValueStringPointer()}
	diags.Append(m.Env.ElementsAs(ctx, &c.Env, false)...)
	diags.Append(m.Labels.ElementsAs(ctx, &c.Labels, false)...)
	diags.Append(m.Annotations.ElementsAs(ctx, &c.Annotations, false)...)
	diags.Append(m.NodeSelector.ElementsAs(ctx, &c.NodeSelector, false)...)
	diags.Append(m.Volumes.ElementsAs(ctx, &c.Volumes, false)...)
	return c, diags
}

// model is the configuration back as attributes (for an import).
func (c rayPodConfig) model(ctx context.Context) (rayPodModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := rayPodModel{Image: types.StringPointerValue(c.Image), ServiceAccountName: types.StringPointerValue(c.ServiceAccountName)}
	for _, f := range []struct {
		from map[string]string
		to   *types.Map
	}{{c.Env, &m.Env}, {c.Labels, &m.Labels}, {c.Annotations, &m.Annotations}, {c.NodeSelector, &m.NodeSelector}} {
		v, d := stringMap(ctx, f.from)
		diags.Append(d...)
		*f.to = v
	}
	m.Volumes = types.ListNull(types.ObjectType{AttrTypes: rayVolumeAttrTypes})
	if len(c.Volumes) > 0 {
		v, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: rayVolumeAttrTypes}, c.Volumes)
		diags.Append(d...)
		m.Volumes = v
	}
	return m, diags
}

// settings are the configuration as kube renders it.
func (c rayPodConfig) settings() (kube.PodSettings, error) {
	s := kube.PodSettings{
		Image: deref(c.Image), Env: c.Env, ServiceAccountName: deref(c.ServiceAccountName),
		Labels: c.Labels, Annotations: c.Annotations, NodeSelector: c.NodeSelector,
	}
	for _, v := range c.Volumes {
		src, err := v.source()
		if err != nil {
			return kube.PodSettings{}, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		s.Volumes = append(s.Volumes, kube.Volume{Name: v.Name, MountPath: v.MountPath, ReadOnly: v.ReadOnly != nil && *v.ReadOnly, Source: src})
	}
	return s, nil
}

func (v rayVolumeConfig) source() (corev1.VolumeSource, error) {
	switch {
	case v.EmptyDir != nil:
		e := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(deref(v.EmptyDir.Medium))}
		if v.EmptyDir.SizeLimit != nil {
			q, err := k8sresource.ParseQuantity(*v.EmptyDir.SizeLimit)
			if err != nil {
				return corev1.VolumeSource{}, fmt.Errorf("empty_dir.size_limit %q: %w", *v.EmptyDir.SizeLimit, err)
			}
			e.SizeLimit = &q
		}
		return corev1.VolumeSource{EmptyDir: e}, nil
	case v.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: v.ConfigMap.Name}}}, nil
	case v.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: v.Secret.SecretName}}, nil
	case v.PersistentVolumeClaim != nil:
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: v.PersistentVolumeClaim.ClaimName, ReadOnly: v.ReadOnly != nil && *v.ReadOnly}}, nil
	case v.CSI != nil:
		return corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: v.CSI.Driver, VolumeAttributes: v.CSI.VolumeAttributes,
			ReadOnly: v.ReadOnly}}, nil
	}
	return corev1.VolumeSource{}, fmt.Errorf("no source")
}

// webhookEnv are the variables GKE's TPU webhook sets in a TPU container, which a worker group's
// env must leave to it (ai-on-gke kuberay-tpu-webhook main.go, mutatePod, WH:875-989), and
// MEGASCALE_NUM_SLICES, which raytpu sets on multislice groups.
var webhookEnv = []string{"TPU_WORKER_ID", "TPU_WORKER_HOSTNAMES", "TPU_NAME", "TPU_PROCESS_ADDRESSES", "TPU_PROCESS_PORT",
	"TPU_DEVICE_PLUGIN_HOST_IP", "TPU_DEVICE_PLUGIN_ADDR", "MEGASCALE_NUM_SLICES", "MEGASCALE_SLICE_ID",
	"MEGASCALE_COORDINATOR_ADDRESS", "MEGASCALE_PORT"}

// raytpuLabelPrefix marks the labels and annotations raytpu keeps for itself.
const raytpuLabelPrefix = "raytpu.dev/"

// validatePod checks the Pod settings at p that are known; worker says a worker group's.
func validatePod(ctx context.Context, m rayPodModel, p path.Path, worker bool, diags *diag.Diagnostics) {
	bad := func(attr, what string) {
		diags.AddAttributeError(p.AtName(attr), "Invalid Ray Pod Setting", what)
	}
	if env, ok := knownMap(ctx, m.Env); ok {
		for _, name := range sortedKeys(env) {
			if errs := validation.IsEnvVarName(name); len(errs) > 0 {
				bad("env", fmt.Sprintf("env %q is not an environment variable name: %s.", name, strings.Join(errs, "; ")))
			}
			if worker && contains(webhookEnv, name) {
				bad("env", fmt.Sprintf("env %q is set by GKE's TPU webhook (or, MEGASCALE_NUM_SLICES, by raytpu for a multislice group) "+
					"on every TPU worker: remove it.", name))
			}
		}
	}
	checkKeys := func(attr string, m map[string]string, labelValues bool, reserved func(string) bool) {
		for _, k := range sortedKeys(m) {
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				bad(attr, fmt.Sprintf("%s key %q is not a Kubernetes label key: %s.", attr, k, strings.Join(errs, "; ")))
				continue
			}
			if reserved(k) {
				bad(attr, fmt.Sprintf("%s key %q is set by KubeRay or raytpu, which would override it: use another key.", attr, k))
			}
			if errs := validation.IsValidLabelValue(m[k]); labelValues && len(errs) > 0 {
				bad(attr, fmt.Sprintf("%s[%q] = %q is not a label value: %s.", attr, k, m[k], strings.Join(errs, "; ")))
			}
		}
	}
	raytpus := func(k string) bool { return strings.HasPrefix(k, raytpuLabelPrefix) }
	if labels, ok := knownMap(ctx, m.Labels); ok {
		checkKeys("labels", labels, true, func(k string) bool {
			return raytpus(k) || strings.HasPrefix(k, "ray.io/") || k == "app.kubernetes.io/name" || k == "app.kubernetes.io/created-by"
		})
	}
	if annotations, ok := knownMap(ctx, m.Annotations); ok {
		checkKeys("annotations", annotations, false, raytpus)
	}
	if selector, ok := knownMap(ctx, m.NodeSelector); ok {
		checkKeys("node_selector", selector, true, func(k string) bool {
			return raytpus(k) || (worker && (k == tpu.LabelAccelerator || k == tpu.LabelTopology || k == tpu.LabelNodePool))
		})
	}
	if sa := m.ServiceAccountName; !sa.IsNull() && !sa.IsUnknown() {
		if errs := validation.IsDNS1123Subdomain(sa.ValueString()); len(errs) > 0 {
			bad("service_account_name", fmt.Sprintf("service_account_name %q is not a ServiceAccount name: %s.", sa.ValueString(), strings.Join(errs, "; ")))
		}
	}
	if m.Volumes.IsNull() || m.Volumes.IsUnknown() {
		return
	}
	var volumes []rayVolumeConfig
	if m.Volumes.ElementsAs(ctx, &volumes, false).HasError() {
		return // not all known yet
	}
	names, mounts := map[string]int{}, map[string]int{}
	for i, v := range volumes {
		vp := p.AtName("volumes").AtListIndex(i)
		if errs := validation.IsDNS1123Label(v.Name); len(errs) > 0 {
			diags.AddAttributeError(vp.AtName("name"), "Invalid Ray Pod Setting", fmt.Sprintf("volume name %q is not a DNS label: %s.", v.Name, strings.Join(errs, "; ")))
		}
		if j, dup := names[v.Name]; dup {
			diags.AddAttributeError(vp.AtName("name"), "Invalid Ray Pod Setting", fmt.Sprintf("volume name %q is also volumes[%d]'s.", v.Name, j))
		}
		if j, dup := mounts[v.MountPath]; dup {
			diags.AddAttributeError(vp.AtName("mount_path"), "Invalid Ray Pod Setting", fmt.Sprintf("mount_path %q is also volumes[%d]'s.", v.MountPath, j))
		}
		if !strings.HasPrefix(v.MountPath, "/") {
			diags.AddAttributeError(vp.AtName("mount_path"), "Invalid Ray Pod Setting", fmt.Sprintf("mount_path %q is not an absolute path.", v.MountPath))
		}
		names[v.Name], mounts[v.MountPath] = i, i
		n := 0
		for _, set := range []bool{v.EmptyDir != nil, v.ConfigMap != nil, v.Secret != nil, v.PersistentVolumeClaim != nil, v.CSI != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			diags.AddAttributeError(vp, "Invalid Ray Pod Setting", fmt.Sprintf("volume %q has %d sources: give exactly one of empty_dir, "+
				"config_map, secret, persistent_volume_claim and csi.", v.Name, n))
		}
	}
}

// knownMap reads a map of strings when it is set and known.
func knownMap(ctx context.Context, m types.Map) (map[string]string, bool) {
	if m.IsNull() || m.IsUnknown() {
		return nil, false
	}
	out := map[string]string{}
	if m.ElementsAs(ctx, &out, false).HasError() {
		return nil, false
	}
	return out, true
}
