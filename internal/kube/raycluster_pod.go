package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodSettings are what a Ray Pod carries beyond what raytpu derives from its slices: its image,
// environment, Kubernetes identity, metadata, volumes and extra node selector. The same for the
// head and for every worker group, of a RayCluster or of a RayService.
type PodSettings struct {
	// Image replaces the RayCluster's image for these Pods when set.
	Image string
	// Env is set in the Ray container.
	Env map[string]string
	// ServiceAccountName is the Pods' Kubernetes ServiceAccount (Workload Identity maps it to a
	// Google service account); empty, the namespace's default.
	ServiceAccountName string
	// Labels and Annotations go on the Pod template; KubeRay adds its own labels.
	Labels, Annotations map[string]string
	// NodeSelector is added to raytpu's selector, whose keys it must not repeat.
	NodeSelector map[string]string
	// Volumes are mounted in the Ray container.
	Volumes []Volume
}

// Volume is a volume of the Pod mounted in its Ray container.
type Volume struct {
	Name, MountPath string
	ReadOnly        bool
	Source          corev1.VolumeSource
}

// template puts the settings on base, whose first container is the Ray container and whose node
// selector is raytpu's.
func (p PodSettings) template(base corev1.PodSpec) corev1.PodTemplateSpec {
	spec := *base.DeepCopy()
	ray := &spec.Containers[0]
	if p.Image != "" {
		ray.Image = p.Image
	}
	for _, name := range slices.Sorted(maps.Keys(p.Env)) {
		ray.Env = append(ray.Env, corev1.EnvVar{Name: name, Value: p.Env[name]})
	}
	for _, v := range p.Volumes {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: v.Name, VolumeSource: v.Source})
		ray.VolumeMounts = append(ray.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: v.ReadOnly})
	}
	spec.ServiceAccountName = p.ServiceAccountName
	if len(p.NodeSelector) > 0 {
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		for k, v := range p.NodeSelector {
			if _, raytpus := spec.NodeSelector[k]; !raytpus {
				spec.NodeSelector[k] = v
			}
		}
	}
	t := corev1.PodTemplateSpec{Spec: spec}
	t.Labels, t.Annotations = maps.Clone(p.Labels), maps.Clone(p.Annotations)
	return t
}

// ErrNotFound is returned (wrapped) for an object that does not exist.
var ErrNotFound = errors.New("not found")

// GetServiceAccount checks that the ServiceAccount namespace/name exists; a missing one gives an
// error wrapping ErrNotFound.
func (c *Client) GetServiceAccount(ctx context.Context, namespace, name string) error {
	_, err := c.core.ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("kube: ServiceAccount %s/%s: %w", namespace, name, ErrNotFound)
	case err != nil:
		return fmt.Errorf("kube: reading ServiceAccount %s/%s: %w", namespace, name, c.explain(err))
	}
	return nil
}
