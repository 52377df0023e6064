package provider

import (
	"fmt"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// The ids of raytpu_ray_cluster and raytpu_ray_service: {cluster_id}/rayClusters/{namespace}/{name}
// and {cluster_id}/rayServices/{namespace}/{name}.

// collection is the kind's part of its ids.
func (k rayKind) collection() string {
	if k.kind == rayServiceKind.kind {
		return "rayServices"
	}
	return "rayClusters"
}

// id is {cluster}/{collection}/{namespace}/{name}.
func (k rayKind) id(cluster, namespace, name string) string {
	return cluster + "/" + k.collection() + "/" + namespace + "/" + name
}

// parseImportID accepts the ids parseNamespacedImportID accepts, with the kind's collection, and
// names of the kind's length.
func (k rayKind) parseImportID(id, defaultProject string) (cluster gke.ClusterID, namespace, name string, err error) {
	cluster, namespace, name, err = parseNamespacedImportID(id, k.collection(), defaultProject)
	if err == nil && !k.namePattern.MatchString(name) {
		return gke.ClusterID{}, "", "", fmt.Errorf("import id %q: %q is not a %s name: a lower-case letter, then letters, digits and "+
			"hyphens, at most %d characters", id, name, k.kind, k.nameLength)
	}
	return cluster, namespace, name, err
}
