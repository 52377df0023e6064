// Package tpuwebhooktest builds the RayClusters the tests of package tpuwebhook and of the
// emulator send. It is for tests only.
package tpuwebhooktest

import (
	"strconv"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rayTestImage = "rayproject/ray:2.55.0-py310-tpu"

// RayCluster is a RayCluster with one TPU worker group of replicas slices, each of hosts Pods
// asking chips google.com/tpu, on the v6e topology given, as raytpu writes them.
func RayCluster(name, group string, replicas, hosts int32, chips int64, topology string) *rayv1.RayCluster {
	tpus := resource.MustParse(strconv.FormatInt(chips, 10))
	zero := int32(0)
	head := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	worker := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), "google.com/tpu": tpus}
	return &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.55.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "ray-head", Image: rayTestImage, Resources: corev1.ResourceRequirements{Requests: head, Limits: head},
				}}}},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: group, Replicas: &replicas, MinReplicas: &zero, MaxReplicas: &replicas, NumOfHosts: hosts,
				RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "ray-worker", Image: rayTestImage, Resources: corev1.ResourceRequirements{Requests: worker, Limits: worker},
					}},
					NodeSelector: map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": topology},
					Tolerations:  []corev1.Toleration{{Key: "google.com/tpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				}},
			}},
		},
	}
}
