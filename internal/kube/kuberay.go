package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeRayCRDs are the CRDs that GKE's Ray Operator add-on installs (KubeRay's), sorted.
var KubeRayCRDs = []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io"}

// KubeRayStatus is how far the KubeRay CRDs are in a cluster.
type KubeRayStatus struct {
	// Ready is true when every CRD in KubeRayCRDs is Established.
	Ready bool
	// Established are the CRDs whose Established condition is True, sorted.
	Established []string
	// Missing are the others, sorted: absent, or present but not yet Established.
	Missing []string
}

// KubeRayStatus reads the KubeRay CRDs once. GKE reports the Ray Operator add-on enabled before
// they serve, so anything that creates Ray objects must wait until Ready.
func (c *Client) KubeRayStatus(ctx context.Context) (KubeRayStatus, error) {
	var st KubeRayStatus
	for _, name := range KubeRayCRDs {
		crd, err := c.apiext.CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			st.Missing = append(st.Missing, name)
		case err != nil:
			return KubeRayStatus{}, fmt.Errorf("kube: reading CRD %s: %w", name, c.explain(err))
		case established(crd):
			st.Established = append(st.Established, name)
		default:
			st.Missing = append(st.Missing, name)
		}
	}
	sort.Strings(st.Established)
	sort.Strings(st.Missing)
	st.Ready = len(st.Missing) == 0
	return st, nil
}

// established is the CRD's Established condition; a CRD being deleted no longer counts.
func established(crd *apiextv1.CustomResourceDefinition) bool {
	if crd.DeletionTimestamp != nil {
		return false
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextv1.Established {
			return cond.Status == apiextv1.ConditionTrue
		}
	}
	return false
}

// WaitForKubeRay reads the KubeRay CRDs every poll (DefaultPollInterval when poll ≤ 0) until all
// are Established or ctx ends. Connection trouble and 5xx answers are retried; a rejected
// certificate or token ends the wait at once. When ctx ends first, the error wraps ctx's error,
// names the CRDs still missing and says how long it waited; the status is the last one read.
func (c *Client) WaitForKubeRay(ctx context.Context, poll time.Duration) (KubeRayStatus, error) {
	var (
		last KubeRayStatus
		read bool
	)
	err := waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		st, err := c.KubeRayStatus(ctx)
		if err != nil {
			return false, err
		}
		last, read = st, true
		return st.Ready, nil
	}, func(waited time.Duration) string {
		if !read {
			return fmt.Sprintf("kube: KubeRay readiness unknown after waiting %s: the CRDs %s could not be read",
				waited, strings.Join(KubeRayCRDs, ", "))
		}
		return fmt.Sprintf("kube: KubeRay is not ready after waiting %s: %s not established yet "+
			"(GKE's Ray Operator add-on installs the KubeRay CRDs shortly after it is enabled)",
			waited, plural(last.Missing, "CRD", "CRDs"))
	})
	return last, err
}

// plural names a list: "CRD a" or "CRDs a, b".
func plural(items []string, one, many string) string {
	if len(items) == 1 {
		return one + " " + items[0]
	}
	return many + " " + strings.Join(items, ", ")
}
