package provider

import (
	"fmt"
	"strings"

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

// parseImportID accepts {cluster_id}/{collection}/{namespace}/{name},
// {cluster_id}/{namespace}/{name}, {project}/{location}/{cluster}/{namespace}/{name} and, with a
// default project, {location}/{cluster}/{namespace}/{name}.
func (k rayKind) parseImportID(id, defaultProject string) (cluster gke.ClusterID, namespace, name string, err error) {
	parts := strings.Split(id, "/")
	fail := fmt.Errorf("import id %q is not {cluster_id}/%s/{namespace}/{name}, {cluster_id}/{namespace}/{name}, "+
		"{project}/{location}/{cluster}/{namespace}/{name} or (with the provider's project set) {location}/{cluster}/{namespace}/{name}, "+
		"with cluster_id projects/{project}/locations/{location}/clusters/{cluster} and a %s name of at most %d characters",
		id, k.collection(), k.kind, k.nameLength)
	clusterID := strings.Join(parts[:min(6, len(parts))], "/")
	switch {
	case len(parts) == 9 && parts[6] == k.collection():
		namespace, name = parts[7], parts[8]
	case len(parts) == 8:
		namespace, name = parts[6], parts[7]
	case len(parts) == 5:
		clusterID, namespace, name = gke.ClusterID{Project: parts[0], Location: parts[1], Name: parts[2]}.String(), parts[3], parts[4]
	case len(parts) == 4 && defaultProject != "":
		clusterID, namespace, name = gke.ClusterID{Project: defaultProject, Location: parts[0], Name: parts[1]}.String(), parts[2], parts[3]
	default:
		return gke.ClusterID{}, "", "", fail
	}
	cluster, err = gke.ParseClusterID(clusterID)
	if err != nil || !namespacePat.MatchString(namespace) || !k.namePattern.MatchString(name) {
		return gke.ClusterID{}, "", "", fail
	}
	return cluster, namespace, name, nil
}
