package gke

import (
	"fmt"
	"regexp"
	"strings"
)

// ClusterID names a cluster: projects/{project}/locations/{location}/clusters/{name}.
type ClusterID struct {
	Project, Location, Name string
}

// NodePoolID names a node pool of a cluster.
type NodePoolID struct {
	Cluster ClusterID
	Name    string
}

func (c ClusterID) String() string {
	return fmt.Sprintf("projects/%s/locations/%s/clusters/%s", c.Project, c.Location, c.Name)
}

// Parent is the location that holds the cluster, for create and list calls.
func (c ClusterID) Parent() string {
	return fmt.Sprintf("projects/%s/locations/%s", c.Project, c.Location)
}

// Operation names one of the location's operations.
func (c ClusterID) Operation(name string) string {
	return c.Parent() + "/operations/" + name
}

func (n NodePoolID) String() string {
	return n.Cluster.String() + "/nodePools/" + n.Name
}

var (
	clusterIDPattern  = regexp.MustCompile(`^projects/([^/]+)/(?:locations|zones)/([^/]+)/clusters/([^/]+)$`)
	nodePoolIDPattern = regexp.MustCompile(`^projects/([^/]+)/(?:locations|zones)/([^/]+)/clusters/([^/]+)/nodePools/([^/]+)$`)
)

// ParseClusterID accepts projects/{p}/locations/{l}/clusters/{c} (and the older zones/ form).
func ParseClusterID(id string) (ClusterID, error) {
	m := clusterIDPattern.FindStringSubmatch(id)
	if m == nil {
		return ClusterID{}, fmt.Errorf("%q is not a cluster id: expected projects/{project}/locations/{location}/clusters/{name}", id)
	}
	return ClusterID{Project: m[1], Location: m[2], Name: m[3]}, nil
}

// ParseClusterImportID accepts a full cluster id, {project}/{location}/{name} or, with a default
// project, {location}/{name}.
func ParseClusterImportID(id, defaultProject string) (ClusterID, error) {
	if c, err := ParseClusterID(id); err == nil {
		return c, nil
	}
	parts := strings.Split(id, "/")
	switch {
	case len(parts) == 3 && nonEmpty(parts):
		return ClusterID{Project: parts[0], Location: parts[1], Name: parts[2]}, nil
	case len(parts) == 2 && nonEmpty(parts) && defaultProject != "":
		return ClusterID{Project: defaultProject, Location: parts[0], Name: parts[1]}, nil
	}
	return ClusterID{}, fmt.Errorf("%q is not a cluster id: expected projects/{project}/locations/{location}/clusters/{name}, "+
		"{project}/{location}/{name}, or {location}/{name} with the provider's project set", id)
}

// ParseNodePoolID accepts projects/{p}/locations/{l}/clusters/{c}/nodePools/{n}.
func ParseNodePoolID(id string) (NodePoolID, error) {
	m := nodePoolIDPattern.FindStringSubmatch(id)
	if m == nil {
		return NodePoolID{}, fmt.Errorf("%q is not a node pool id: expected projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}", id)
	}
	return NodePoolID{Cluster: ClusterID{Project: m[1], Location: m[2], Name: m[3]}, Name: m[4]}, nil
}

// ParseNodePoolImportID accepts a full node pool id, {project}/{location}/{cluster}/{name} or,
// with a default project, {location}/{cluster}/{name}.
func ParseNodePoolImportID(id, defaultProject string) (NodePoolID, error) {
	if n, err := ParseNodePoolID(id); err == nil {
		return n, nil
	}
	parts := strings.Split(id, "/")
	switch {
	case len(parts) == 4 && nonEmpty(parts):
		return NodePoolID{Cluster: ClusterID{Project: parts[0], Location: parts[1], Name: parts[2]}, Name: parts[3]}, nil
	case len(parts) == 3 && nonEmpty(parts) && defaultProject != "":
		return NodePoolID{Cluster: ClusterID{Project: defaultProject, Location: parts[0], Name: parts[1]}, Name: parts[2]}, nil
	}
	return NodePoolID{}, fmt.Errorf("%q is not a node pool id: expected projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}, "+
		"{project}/{location}/{cluster}/{name}, or {location}/{cluster}/{name} with the provider's project set", id)
}

func nonEmpty(parts []string) bool {
	for _, p := range parts {
		if p == "" {
			return false
		}
	}
	return true
}
