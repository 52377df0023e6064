package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// parseNamespacedImportID reads the import id of a Kubernetes object of a cluster that raytpu
// manages: {cluster_id}/{kind}/{namespace}/{name}, {cluster_id}/{namespace}/{name},
// {project}/{location}/{cluster}/{namespace}/{name} or, with a default project,
// {location}/{cluster}/{namespace}/{name}.
func parseNamespacedImportID(id, kind, defaultProject string) (cluster gke.ClusterID, namespace, name string, err error) {
	parts := strings.Split(id, "/")
	fail := fmt.Errorf("import id %q is not {cluster_id}/%s/{namespace}/{name}, {cluster_id}/{namespace}/{name}, "+
		"{project}/{location}/{cluster}/{namespace}/{name} or (with the provider's project set) {location}/{cluster}/{namespace}/{name}, "+
		"with cluster_id projects/{project}/locations/{location}/clusters/{cluster}", id, kind)
	clusterID := strings.Join(parts[:min(6, len(parts))], "/")
	switch {
	case len(parts) == 9 && parts[6] == kind:
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
	if err != nil || !namespacePat.MatchString(namespace) || !rayNamePattern.MatchString(name) {
		return gke.ClusterID{}, "", "", fail
	}
	return cluster, namespace, name, nil
}

// clusterIDAttribute is the cluster_id of a resource that lives in a cluster's Kubernetes API;
// what says which clusters it takes.
func clusterIDAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		Required:            true,
		MarkdownDescription: "Cluster id, `projects/{project}/locations/{location}/clusters/{name}`: " + what,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:          []validator.String{clusterIDValidator{}},
	}
}

// namespaceAttribute is the Kubernetes namespace of such a resource.
func namespaceAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true, Computed: true, Default: stringdefault.StaticString("default"),
		MarkdownDescription: "Kubernetes namespace; it must exist. Default `default`.",
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators: []validator.String{stringvalidator.RegexMatches(namespacePat,
			"must be a DNS label: lower-case letters, digits and hyphens, at most 63 characters")},
	}
}
