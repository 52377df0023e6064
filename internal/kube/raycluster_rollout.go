package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KubeRay v1.5 does not recreate Pods when their template changes: it creates missing Pods from
// the template and leaves running ones alone (ray-operator controllers/ray/raycluster_controller.go,
// reconcilePods). So raytpu stamps each template with a hash of what the Pods are made from, and
// replaces the Pods whose stamp is not their template's: the RayCluster runs what it says.

// PodTemplateAnnotation holds, on a Pod template and so on every Pod KubeRay makes from it, the
// hash of what the Pod is made from.
const PodTemplateAnnotation = "raytpu.dev/pod-template"

// stamp puts the hash of the template and of what else makes the Pods (the Ray version, the
// group's shape and ray start parameters) on the template.
func stamp(t *corev1.PodTemplateSpec, with ...any) {
	delete(t.Annotations, PodTemplateAnnotation)
	data, _ := json.Marshal(append([]any{t}, with...))
	sum := sha256.Sum256(data)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[PodTemplateAnnotation] = hex.EncodeToString(sum[:8])
}

// Templates are the stamps of a RayCluster's head template and of each worker group's.
type Templates struct {
	Head   string
	Groups map[string]string
}

// TemplatesOf reads the stamps of rc.
func TemplatesOf(rc *rayv1.RayCluster) Templates {
	t := Templates{Head: rc.Spec.HeadGroupSpec.Template.Annotations[PodTemplateAnnotation], Groups: map[string]string{}}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		t.Groups[g.GroupName] = g.Template.Annotations[PodTemplateAnnotation]
	}
	return t
}

// Stale reports whether p was made from another template than t's. A Pod without a stamp, made
// before raytpu stamped its templates, counts as current: nothing says it is not.
func (t Templates) Stale(p RayPod) bool {
	want := t.Groups[p.Group]
	if p.Head {
		want = t.Head
	}
	return p.Template != "" && p.Template != want
}

// DeletePods deletes the Pods (those already gone are no error), each only if it is still the Pod
// that was seen (its UID): KubeRay makes Pods again under new names.
func (c *Client) DeletePods(ctx context.Context, namespace string, pods []RayPod) error {
	for _, p := range pods {
		uid := types.UID(p.UID)
		err := c.core.Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("kube: deleting Pod %s/%s: %w", namespace, p.Name, c.explain(err))
		}
	}
	return nil
}
