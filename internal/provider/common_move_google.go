package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// Resources move in from terraform-provider-google with `moved` blocks. The state they bring is
// read from its raw JSON rather than through a copy of the google provider's schema: the framework
// decodes a source state only when it conforms exactly to the schema given, and the google
// provider adds attributes in nearly every minor release, so a copy would refuse the state of any
// version but one. The few attributes read here have kept their names and shapes since
// google provider v4 (nested blocks are lists of one object, as SDKv2 writes them).

// googleProviderTypes are the providers whose container resources raytpu takes over, whatever
// the registry host: Terraform resolves hashicorp/google on registry.terraform.io, OpenTofu on
// registry.opentofu.org.
var googleProviderTypes = []string{"hashicorp/google", "hashicorp/google-beta"}

// isGoogleProvider reports whether address (HOSTNAME/NAMESPACE/TYPE) is the google or google-beta
// provider.
func isGoogleProvider(address string) bool {
	parts := strings.Split(address, "/")
	if len(parts) != 3 {
		return false
	}
	for _, t := range googleProviderTypes {
		if strings.EqualFold(parts[1]+"/"+parts[2], t) {
			return true
		}
	}
	return false
}

// movedFromGoogle reports whether req moves a sourceType of the google provider. Any other source
// is answered with an error naming the one that can be moved, since the framework's own answer
// ("no implementation") does not say what would be valid.
func movedFromGoogle(req resource.MoveStateRequest, resp *resource.MoveStateResponse, sourceType, target string) bool {
	if req.SourceTypeName == sourceType && isGoogleProvider(req.SourceProviderAddress) {
		if req.SourceRawState == nil || len(req.SourceRawState.JSON) == 0 {
			resp.Diagnostics.AddError("Unsupported Moved Source State",
				fmt.Sprintf("The %s state to move into %s is not in JSON form (schema version %d): refresh it with a current "+
					"google provider (terraform apply -refresh-only) before moving it.", sourceType, target, req.SourceSchemaVersion))
			return false
		}
		return true
	}
	resp.Diagnostics.AddError("Unsupported Moved Source",
		fmt.Sprintf("A moved block cannot turn %s of provider %s into %s: %s moves in only from %s of the google or google-beta "+
			"provider (%s). To adopt another object, import it instead.", req.SourceTypeName, req.SourceProviderAddress, target,
			target, sourceType, strings.Join(googleProviderTypes, ", ")))
	return false
}

// decodeGoogleState reads the raw state of a google provider resource.
func decodeGoogleState(raw []byte, sourceType string, into any) error {
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("the %s state does not read as the google provider writes it: %w", sourceType, err)
	}
	return nil
}

// googleNodePoolState is what a move reads of google_container_node_pool (schema version 1).
type googleNodePoolState struct {
	ID               string   `json:"id"`
	Project          string   `json:"project"`
	Location         string   `json:"location"`
	Cluster          string   `json:"cluster"`
	Name             string   `json:"name"`
	NodeCount        *int64   `json:"node_count"`
	InitialNodeCount *int64   `json:"initial_node_count"`
	NodeLocations    []string `json:"node_locations"`
	NodeConfig       []struct {
		MachineType string `json:"machine_type"`
	} `json:"node_config"`
	PlacementPolicy []struct {
		Type        string `json:"type"`
		TPUTopology string `json:"tpu_topology"`
		PolicyName  string `json:"policy_name"`
	} `json:"placement_policy"`
	Autoscaling []struct {
		MinNodeCount      *int64 `json:"min_node_count"`
		MaxNodeCount      *int64 `json:"max_node_count"`
		TotalMinNodeCount *int64 `json:"total_min_node_count"`
		TotalMaxNodeCount *int64 `json:"total_max_node_count"`
	} `json:"autoscaling"`
	QueuedProvisioning []struct {
		Enabled bool `json:"enabled"`
	} `json:"queued_provisioning"`
}

// poolID is the node pool the state names: its id, else its project, location, cluster and name
// (cluster may be a name or a cluster id).
func (s googleNodePoolState) poolID() (gke.NodePoolID, error) {
	if id, err := gke.ParseNodePoolID(s.ID); err == nil {
		return id, nil
	}
	cluster, err := gke.ParseClusterID(s.Cluster)
	if err != nil {
		cluster = gke.ClusterID{Project: s.Project, Location: s.Location, Name: s.Cluster}
	}
	id := gke.NodePoolID{Cluster: cluster, Name: s.Name}
	if _, err := gke.ParseNodePoolID(id.String()); err != nil || cluster.Project == "" || cluster.Location == "" {
		return gke.NodePoolID{}, fmt.Errorf("its id %q names no node pool, and project %q, location %q, cluster %q and name %q "+
			"do not make one up: refresh it with the google provider first", s.ID, s.Project, s.Location, s.Cluster, s.Name)
	}
	return id, nil
}

// googleClusterState is what a move reads of google_container_cluster (schema versions 1 and 2).
type googleClusterState struct {
	ID           string `json:"id"`
	Project      string `json:"project"`
	Location     string `json:"location"`
	Name         string `json:"name"`
	AddonsConfig []struct {
		RayOperatorConfig []struct {
			Enabled          bool `json:"enabled"`
			RayLoggingConfig []struct {
				Enabled bool `json:"enabled"`
			} `json:"ray_logging_config"`
			RayClusterMonitoringConfig []struct {
				Enabled bool `json:"enabled"`
			} `json:"ray_cluster_monitoring_config"`
		} `json:"ray_operator_config"`
	} `json:"addons_config"`
}

// clusterID is the cluster the state names: its id, else its project, location and name.
func (s googleClusterState) clusterID() (gke.ClusterID, error) {
	if id, err := gke.ParseClusterID(s.ID); err == nil {
		return id, nil
	}
	id, err := gke.ParseClusterID(gke.ClusterID{Project: s.Project, Location: s.Location, Name: s.Name}.String())
	if err != nil || s.Project == "" || s.Location == "" || s.Name == "" {
		return gke.ClusterID{}, fmt.Errorf("its id %q names no cluster, and project %q, location %q and name %q do not make "+
			"one up: refresh it with the google provider first", s.ID, s.Project, s.Location, s.Name)
	}
	return id, nil
}

// rayOperator reports the add-on settings the state holds.
func (s googleClusterState) rayOperator() (enabled, logging, monitoring bool) {
	for _, addons := range s.AddonsConfig {
		for _, ray := range addons.RayOperatorConfig {
			enabled = ray.Enabled
			for _, l := range ray.RayLoggingConfig {
				logging = l.Enabled
			}
			for _, m := range ray.RayClusterMonitoringConfig {
				monitoring = m.Enabled
			}
		}
	}
	return enabled, logging, monitoring
}

// setAttributes writes attributes into a state that may still be null, as a move or an import
// starts from; Read fills in the rest.
func setAttributes(ctx context.Context, state *tfsdk.State, attributes map[string]any) diag.Diagnostics {
	var diags diag.Diagnostics
	for attribute, value := range attributes {
		diags.Append(state.SetAttribute(ctx, path.Root(attribute), value)...)
	}
	return diags
}
