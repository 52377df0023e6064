package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeRayCRDs are the CRDs that GKE's Ray Operator add-on installs (KubeRay's), sorted.
var KubeRayCRDs = []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io"}

// The API group and version the KubeRay CRDs serve.
const (
	kubeRayGroup        = "ray.io"
	kubeRayGroupVersion = kubeRayGroup + "/v1"
)

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
//
// It asks the API server's discovery of ray.io/v1, not the CRD objects: a CRD's resource is listed
// there once the CRD is Established, and without the create verb while it is Terminating
// (apiextensions-apiserver, customresource_discovery_controller.go), which is what Ready means. The
// three CRDs are about 3 MB of schema that every refresh would otherwise download, and that the API
// server would decode, convert and encode again for each read.
func (c *Client) KubeRayStatus(ctx context.Context) (KubeRayStatus, error) {
	served := map[string]bool{}
	var list metav1.APIResourceList
	err := c.discovery.Get().AbsPath("/apis", kubeRayGroupVersion).Do(ctx).Into(&list)
	switch {
	case apierrors.IsNotFound(err):
		// No CRD of the group is established: the group version is not served at all.
	case err != nil:
		return KubeRayStatus{}, fmt.Errorf("kube: reading the API server's discovery of %s: %w", kubeRayGroupVersion, c.explain(err))
	default:
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "create") {
				served[r.Name+"."+kubeRayGroup] = true
			}
		}
	}
	var st KubeRayStatus
	for _, name := range KubeRayCRDs {
		if served[name] {
			st.Established = append(st.Established, name)
		} else {
			st.Missing = append(st.Missing, name)
		}
	}
	sort.Strings(st.Established)
	sort.Strings(st.Missing)
	st.Ready = len(st.Missing) == 0
	return st, nil
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
