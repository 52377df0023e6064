package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/ray"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// What raytpu_slice hands to Ray and KubeRay, derived from the slice alone so that every value
// is known in the plan.

var (
	// sliceRayAttrTypes are Ray's names for the slice (rayShapeAttrTypes), its image and the Ray
	// version of that image.
	sliceRayAttrTypes       = withAttr(withAttr(rayShapeAttrTypes, "image", attr.Type(types.StringType)), "version", attr.Type(types.StringType))
	placementGroupAttrTypes = map[string]attr.Type{
		"topology":            types.StringType,
		"accelerator_version": types.StringType,
		"chips_per_vm":        types.Int64Type,
		"num_slices":          types.Int64Type,
	}
	tolerationAttrTypes = map[string]attr.Type{
		"key": types.StringType, "operator": types.StringType, "value": types.StringType, "effect": types.StringType,
	}
)

// withAttr returns a copy of m with key set to v.
func withAttr[V any](m map[string]V, key string, v V) map[string]V {
	out := make(map[string]V, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[key] = v
	return out
}

// sliceOutputs are the derived attributes of raytpu_slice.
type sliceOutputs struct {
	GKEAccelerator      types.String
	MachineType         types.String
	ChipsPerHost        types.Int64
	NumHosts            types.Int64
	TotalChips          types.Int64
	MultiHost           types.Bool
	PlacementType       types.String
	NodeSelector        types.Map
	Tolerations         types.List
	TPUResource         types.Map
	Ray                 types.Object
	SlicePlacementGroup types.Object
	KubeRayWorkerGroup  types.String
}

// deriveSliceOutputs computes the outputs of the slice named pool.
func deriveSliceOutputs(ctx context.Context, s *tpu.Slice, pool, rayVersion, pythonVersion string) (sliceOutputs, diag.Diagnostics) {
	var diags diag.Diagnostics
	selector := s.NodeSelector()
	selector[tpu.LabelNodePool] = pool
	nodeSelector, d := types.MapValueFrom(ctx, types.StringType, selector)
	diags.Append(d...)
	chips := strconv.Itoa(s.ChipsPerHost())
	tpuResource, d := types.MapValueFrom(ctx, types.StringType, map[string]string{tpu.ResourceName: chips})
	diags.Append(d...)
	toleration := types.ObjectValueMust(tolerationAttrTypes, map[string]attr.Value{
		"key": types.StringValue(tpu.ResourceName), "operator": types.StringValue("Equal"),
		"value": types.StringValue(tpu.TaintValue), "effect": types.StringValue(tpu.TaintEffect),
	})
	tolerations, d := types.ListValue(types.ObjectType{AttrTypes: tolerationAttrTypes}, []attr.Value{toleration})
	diags.Append(d...)
	image := tpu.RayImage(rayVersion, pythonVersion)
	row := rayRow(rayVersion)
	ray := types.ObjectValueMust(sliceRayAttrTypes, withAttr(withAttr(rayNames(s, row), "image", attr.Value(types.StringValue(image))),
		"version", attr.Value(types.StringValue(rayVersion))))
	placementGroup := slicePlacementGroupArgs(s, row, 1)
	group, err := kubeRayWorkerGroup(s, pool, image, selector)
	if err != nil {
		diags.AddError("Worker Group Error", fmt.Sprintf("rendering the KubeRay worker group of %s: %s. Please report this issue to the provider developers.", pool, err))
	}
	return sliceOutputs{
		GKEAccelerator:      types.StringValue(s.Generation.GKEAccelerator),
		MachineType:         types.StringValue(s.MachineType.Name),
		ChipsPerHost:        types.Int64Value(int64(s.ChipsPerHost())),
		NumHosts:            types.Int64Value(int64(s.Hosts)),
		TotalChips:          types.Int64Value(int64(s.TotalChips())),
		MultiHost:           types.BoolValue(s.MultiHost),
		PlacementType:       types.StringValue(string(s.Placement)),
		NodeSelector:        nodeSelector,
		Tolerations:         tolerations,
		TPUResource:         tpuResource,
		Ray:                 ray,
		SlicePlacementGroup: placementGroup,
		KubeRayWorkerGroup:  types.StringValue(group),
	}, diags
}

// slicePlacementGroupArgs are the arguments of ray.util.tpu.slice_placement_group that reserve
// numSlices slices of s in the Ray release of row: chips_per_vm only where that release takes it
// (null otherwise, as passing it would be a TypeError).
func slicePlacementGroupArgs(s *tpu.Slice, row ray.Names, numSlices int) types.Object {
	chipsPerVM := types.Int64Null()
	if row.ChipsPerVM {
		chipsPerVM = types.Int64Value(int64(s.ChipsPerHost()))
	}
	return types.ObjectValueMust(placementGroupAttrTypes, map[string]attr.Value{
		"topology":            types.StringValue(s.Topology.String()),
		"accelerator_version": types.StringValue(s.Generation.RayAcceleratorVersion),
		"chips_per_vm":        chipsPerVM,
		"num_slices":          types.Int64Value(int64(numSlices)),
	})
}

// kubeRayWorkerGroup renders one KubeRay WorkerGroupSpec for the slice with KubeRay's own Go
// types, so the JSON always has the CRD's shape: one replica (this slice), numOfHosts hosts, the
// TPU chips of a host as limits and requests, the node selector and the TPU toleration.
func kubeRayWorkerGroup(s *tpu.Slice, pool, image string, selector map[string]string) (string, error) {
	one := int32(1)
	chips := resource.MustParse(strconv.Itoa(s.ChipsPerHost()))
	tpuResources := corev1.ResourceList{corev1.ResourceName(tpu.ResourceName): chips}
	spec := rayv1.WorkerGroupSpec{
		GroupName:      pool,
		Replicas:       &one,
		MinReplicas:    &one,
		MaxReplicas:    &one,
		NumOfHosts:     int32(s.Hosts),
		RayStartParams: map[string]string{},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:      "ray-worker",
				Image:     image,
				Resources: corev1.ResourceRequirements{Limits: tpuResources, Requests: tpuResources},
			}},
			NodeSelector: selector,
			Tolerations: []corev1.Toleration{{
				Key: tpu.ResourceName, Operator: corev1.TolerationOpEqual, Value: tpu.TaintValue, Effect: corev1.TaintEffectNoSchedule,
			}},
		}},
	}
	out, err := json.Marshal(spec)
	return string(out), err
}
