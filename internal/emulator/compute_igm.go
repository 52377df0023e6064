package emulator

import (
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// instanceGroupURLs are the URLs GKE reports as a pool's instanceGroupUrls: one instance group
// manager per zone, named after the pool's nodes (gke-<cluster>-<pool>-<hash>-grp, the names GKE
// gives, e.g. .../zones/us-central1-a/instanceGroupManagers/gke-default-cluster-green-40bc61d2-grp
// in terraform-provider-google #10366).
func (e *Emulator) instanceGroupURLs(c *cluster, p *rules.NodePool) []string {
	var out []string
	for _, z := range p.Zones {
		out = append(out, e.computeURL(igmPath(c, p, z)))
	}
	return out
}

func igmName(c *cluster, p *rules.NodePool) string {
	return nodeNamePrefix(c.PB.Name, p.PB.Name, p.UID) + "-grp"
}

func igmPath(c *cluster, p *rules.NodePool, zone string) string {
	return fmt.Sprintf("projects/%s/zones/%s/instanceGroupManagers/%s", c.Project, zone, igmName(c, p))
}

// igmLocked is the instance group manager of pool p in zone: targetSize is the pool's nodes in
// that zone; currentActions and status follow the pool (creating while it provisions, deleting
// while it is deleted, stable when it runs).
func (e *Emulator) igmLocked(c *cluster, p *rules.NodePool, zone string) *compute.InstanceGroupManager {
	base := nodeNamePrefix(c.PB.Name, p.PB.Name, p.UID)
	project := "projects/" + c.Project
	template := e.computeURL(project + "/global/instanceTemplates/" + base)
	n := int64(p.NodeCount)
	actions := &compute.InstanceGroupManagerActionsSummary{ForceSendFields: []string{
		"Abandoning", "Creating", "CreatingWithoutRetries", "Deleting", "None", "Recreating", "Refreshing", "Restarting",
		"Resuming", "Starting", "Stopping", "Suspending", "Verifying"}}
	stable := false
	switch p.PB.Status {
	case containerpb.NodePool_PROVISIONING, containerpb.NodePool_ERROR:
		actions.Creating = n
	case containerpb.NodePool_STOPPING:
		actions.Deleting = n
	default:
		failed := int64(0)
		for _, w := range p.FailedHosts {
			if w/max(p.NodeCount, 1) < len(p.Zones) && p.Zones[w/max(p.NodeCount, 1)] == zone {
				failed++
			}
		}
		actions.None, actions.Recreating = n-failed, failed
		stable = failed == 0 && p.PB.Status != containerpb.NodePool_RECONCILING
	}
	created, _ := time.Parse(time.RFC3339, c.PB.CreateTime)
	igm := &compute.InstanceGroupManager{
		Kind:              "compute#instanceGroupManager",
		Id:                stableID(p.UID + "/" + zone),
		CreationTimestamp: computeTime(created),
		Name:              igmName(c, p),
		Zone:              e.computeURL(project + "/zones/" + zone),
		InstanceTemplate:  template,
		Versions:          []*compute.InstanceGroupManagerVersion{{InstanceTemplate: template}},
		InstanceGroup:     e.computeURL(project + "/zones/" + zone + "/instanceGroups/" + igmName(c, p)),
		BaseInstanceName:  base,
		Fingerprint:       fmt.Sprintf("%x", stableID(p.PB.Etag)),
		CurrentActions:    actions,
		Status: &compute.InstanceGroupManagerStatus{
			IsStable:        stable,
			VersionTarget:   &compute.InstanceGroupManagerStatusVersionTarget{IsReached: stable, ForceSendFields: []string{"IsReached"}},
			Stateful:        &compute.InstanceGroupManagerStatusStateful{PerInstanceConfigs: &compute.InstanceGroupManagerStatusStatefulPerInstanceConfigs{}},
			ForceSendFields: []string{"IsStable"},
		},
		TargetSize: n,
		UpdatePolicy: &compute.InstanceGroupManagerUpdatePolicy{
			Type: "OPPORTUNISTIC", MinimalAction: "REPLACE", ReplacementMethod: "SUBSTITUTE",
			MaxSurge:       &compute.FixedOrPercent{Fixed: 1, Calculated: 1},
			MaxUnavailable: &compute.FixedOrPercent{ForceSendFields: []string{"Fixed", "Calculated"}},
		},
		SelfLink:        e.computeURL(igmPath(c, p, zone)),
		ForceSendFields: []string{"TargetSize"},
	}
	if name := p.PB.GetPlacementPolicy().GetPolicyName(); name != "" {
		if key, ok := policyKey(name, c.Project, rules.ZoneRegion(c.Location)); ok {
			igm.ResourcePolicies = &compute.InstanceGroupManagerResourcePolicies{WorkloadPolicy: e.computeURL(key)}
		}
	}
	return igm
}

// igmsLocked are the instance group managers of the project's node pools in zone (those GKE has
// created: a pool has them once its provisioning started), by name.
func (e *Emulator) igmsLocked(project, zone string) []*compute.InstanceGroupManager {
	var out []*compute.InstanceGroupManager
	for _, c := range e.st.allClusters() {
		if c.Project != project {
			continue
		}
		for _, p := range c.Pools {
			if len(p.PB.InstanceGroupUrls) > 0 && contains(p.Zones, zone) {
				out = append(out, e.igmLocked(c, p, zone))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (e *Emulator) listInstanceGroupManagers(rt computeRoute) *compute.InstanceGroupManagerList {
	e.mu.Lock()
	defer e.mu.Unlock()
	return &compute.InstanceGroupManagerList{
		Kind:     "compute#instanceGroupManagerList",
		Id:       rt.parent() + "/instanceGroupManagers",
		Items:    e.igmsLocked(rt.project, rt.where),
		SelfLink: e.computeURL(rt.parent() + "/instanceGroupManagers"),
	}
}

func (e *Emulator) getInstanceGroupManager(rt computeRoute) (*compute.InstanceGroupManager, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, igm := range e.igmsLocked(rt.project, rt.where) {
		if igm.Name == rt.name {
			return igm, nil
		}
	}
	return nil, errComputeNotFound(rt.parent() + "/instanceGroupManagers/" + rt.name)
}
