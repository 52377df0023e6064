package emulator

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"time"

	compute "google.golang.org/api/compute/v1"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// resourcePolicy is a Compute Engine resource policy.
type resourcePolicy struct {
	Key, Project, Region string
	PB                   *compute.ResourcePolicy
	// Ready is false while the insert operation runs: Compute Engine serves the policy once it is
	// created.
	Ready bool
	// Deleting is true while the delete operation runs.
	Deleting bool
}

// computeNameRE is Compute Engine's rule for resource names (RFC 1035 labels).
var computeNameRE = regexp.MustCompile(`^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$`)

// acceleratorTopologyRE is the shape of a workload policy's accelerator topology (AxB or AxBxC,
// as "4x4x4" in `gcloud compute resource-policies create workload-policy --accelerator-topology`).
var acceleratorTopologyRE = regexp.MustCompile(`^[1-9][0-9]*x[1-9][0-9]*(x[1-9][0-9]*)?$`)

// validateWorkloadPolicy applies Compute Engine's workload policy rules: type HIGH_AVAILABILITY or
// HIGH_THROUGHPUT, maxTopologyDistance BLOCK, CLUSTER or SUBBLOCK, acceleratorTopologyMode
// AUTO_CONNECT or PROVISION_ONLY (google.golang.org/api/compute/v1 ResourcePolicyWorkloadPolicy);
// acceleratorTopology "only when ... HIGH_THROUGHPUT and cannot be set if max topology distance is
// set" (terraform-provider-google website/docs/r/compute_resource_policy.html.markdown).
func validateWorkloadPolicy(w *compute.ResourcePolicyWorkloadPolicy) *apierr.Error {
	if w == nil {
		return nil
	}
	switch w.Type {
	case "HIGH_AVAILABILITY", "HIGH_THROUGHPUT":
	default:
		return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.type': '%s'. Must be HIGH_AVAILABILITY or HIGH_THROUGHPUT.", w.Type)
	}
	switch w.MaxTopologyDistance {
	case "", "BLOCK", "CLUSTER", "SUBBLOCK":
	default:
		return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.maxTopologyDistance': '%s'.", w.MaxTopologyDistance)
	}
	switch w.AcceleratorTopologyMode {
	case "", "AUTO_CONNECT", "PROVISION_ONLY":
	default:
		return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.acceleratorTopologyMode': '%s'.", w.AcceleratorTopologyMode)
	}
	if w.AcceleratorTopology == "" {
		if w.AcceleratorTopologyMode != "" {
			return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.acceleratorTopologyMode': '%s'. It needs an acceleratorTopology.", w.AcceleratorTopologyMode)
		}
		return nil
	}
	switch {
	case !acceleratorTopologyRE.MatchString(w.AcceleratorTopology):
		return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.acceleratorTopology': '%s'. Must be a topology such as 4x4x4.", w.AcceleratorTopology)
	case w.Type != "HIGH_THROUGHPUT":
		return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.acceleratorTopology': '%s'. An accelerator topology can only be set for a HIGH_THROUGHPUT workload policy.", w.AcceleratorTopology)
	case w.MaxTopologyDistance != "":
		return errComputeInvalid("Invalid value for field 'resource.workloadPolicy.acceleratorTopology': '%s'. An accelerator topology cannot be set together with maxTopologyDistance.", w.AcceleratorTopology)
	}
	return nil
}

// newResourcePolicyLocked validates a policy for project/region and registers it (not Ready).
func (e *Emulator) newResourcePolicyLocked(project, region string, in *compute.ResourcePolicy) (*resourcePolicy, *apierr.Error) {
	if err := rules.ValidateLocation(region); err != nil || rules.IsZone(region) {
		return nil, errComputeNotFound("projects/" + project + "/regions/" + region)
	}
	if !computeNameRE.MatchString(in.Name) {
		return nil, errComputeInvalid("Invalid value for field 'resource.name': '%s'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'", in.Name)
	}
	if err := validateWorkloadPolicy(in.WorkloadPolicy); err != nil {
		return nil, err
	}
	key := "projects/" + project + "/regions/" + region + "/resourcePolicies/" + in.Name
	if e.st.policies[key] != nil {
		return nil, apierr.New(codes.AlreadyExists, "The resource '%s' already exists", key)
	}
	pb := &compute.ResourcePolicy{
		Kind:                       "compute#resourcePolicy",
		Id:                         randomID(),
		CreationTimestamp:          computeTime(time.Now()),
		Name:                       in.Name,
		Description:                in.Description,
		Region:                     e.computeURL("projects/" + project + "/regions/" + region),
		SelfLink:                   e.computeURL(key),
		Status:                     "READY",
		WorkloadPolicy:             in.WorkloadPolicy,
		GroupPlacementPolicy:       in.GroupPlacementPolicy,
		SnapshotSchedulePolicy:     in.SnapshotSchedulePolicy,
		InstanceSchedulePolicy:     in.InstanceSchedulePolicy,
		DiskConsistencyGroupPolicy: in.DiskConsistencyGroupPolicy,
	}
	p := &resourcePolicy{Key: key, Project: project, Region: region, PB: pb}
	e.st.policies[key] = p
	return p, nil
}

func (e *Emulator) insertResourcePolicy(rt computeRoute, body []byte) (*compute.Operation, *apierr.Error) {
	var in compute.ResourcePolicy
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, apierr.Invalid("Invalid JSON payload received. %v", err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p, err := e.newResourcePolicyLocked(rt.project, rt.where, &in)
	if err != nil {
		return nil, err
	}
	const method = "compute.resourcePolicies.insert"
	op := e.newComputeOperationLocked(rt, "insert", p.PB.SelfLink, p.PB.Id, e.ctl.takeOperationFault(method, p.Key))
	e.persistLocked()
	return e.runComputeOperation(op, func(err *apierr.Error) {
		if err != nil {
			delete(e.st.policies, p.Key)
			return
		}
		p.Ready = true
	}), nil
}

// readyPolicyLocked is the policy at key when it exists (its insert done).
func (e *Emulator) readyPolicyLocked(key string) *resourcePolicy {
	if p := e.st.policies[key]; p != nil && p.Ready {
		return p
	}
	return nil
}

func (e *Emulator) getResourcePolicy(rt computeRoute) (*compute.ResourcePolicy, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := rt.parent() + "/resourcePolicies/" + rt.name
	p := e.readyPolicyLocked(key)
	if p == nil {
		return nil, errComputeNotFound(key)
	}
	return p.view(), nil
}

func (p *resourcePolicy) view() *compute.ResourcePolicy {
	out := *p.PB
	if p.Deleting {
		out.Status = "DELETING"
	}
	return &out
}

func (e *Emulator) listResourcePolicies(rt computeRoute) *compute.ResourcePolicyList {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := &compute.ResourcePolicyList{
		Kind:     "compute#resourcePolicyList",
		Id:       rt.parent() + "/resourcePolicies",
		SelfLink: e.computeURL(rt.parent() + "/resourcePolicies"),
	}
	prefix := rt.parent() + "/resourcePolicies/"
	var keys []string
	for k, p := range e.st.policies {
		if strings.HasPrefix(k, prefix) && p.Ready {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Items = append(out.Items, e.st.policies[k].view())
	}
	return out
}

// policyUserLocked names an instance group manager (of a GKE node pool) that uses the policy.
func (e *Emulator) policyUserLocked(p *resourcePolicy) string {
	for _, c := range e.st.allClusters() {
		if c.Project != p.Project || rules.ZoneRegion(c.Location) != p.Region {
			continue
		}
		for _, np := range c.Pools {
			name := np.PB.GetPlacementPolicy().GetPolicyName()
			if key, ok := policyKey(name, c.Project, p.Region); name != "" && ok && key == p.Key {
				return igmPath(c, np, np.Zones[0])
			}
		}
	}
	return ""
}

// deleteResourcePolicy deletes a policy that no node pool uses. Compute Engine refuses to delete a
// resource another one uses with 400 resourceInUseByAnotherResource ("The resource_policy resource
// '...' is already being used by '...'").
func (e *Emulator) deleteResourcePolicy(rt computeRoute) (*compute.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := rt.parent() + "/resourcePolicies/" + rt.name
	p := e.readyPolicyLocked(key)
	if p == nil {
		return nil, errComputeNotFound(key)
	}
	if p.Deleting {
		err := apierr.New(codes.FailedPrecondition, "The resource '%s' is not ready", key)
		err.LegacyReason = "resourceNotReady"
		return nil, err
	}
	if user := e.policyUserLocked(p); user != "" {
		err := apierr.New(codes.FailedPrecondition, "The resource_policy resource '%s' is already being used by '%s'", key, user)
		err.LegacyReason = "resourceInUseByAnotherResource"
		return nil, err
	}
	const method = "compute.resourcePolicies.delete"
	op := e.newComputeOperationLocked(rt, "delete", p.PB.SelfLink, p.PB.Id, e.ctl.takeOperationFault(method, p.Key))
	p.Deleting = true
	e.persistLocked()
	return e.runComputeOperation(op, func(err *apierr.Error) {
		p.Deleting = false
		if err == nil {
			delete(e.st.policies, p.Key)
		}
	}), nil
}

// policyKey resolves a node pool's placementPolicy.policyName in the pool's project and region:
// a name, or a full or partial URL (projects/p/regions/r/resourcePolicies/n,
// regions/r/resourcePolicies/n), the forms Compute Engine takes for a workload policy
// (InstanceGroupManagerResourcePolicies.workloadPolicy). ok is false for a policy in another
// project or region.
func policyKey(name, project, region string) (key string, ok bool) {
	rest := name
	if i := strings.Index(rest, "/projects/"); i >= 0 {
		rest = rest[i+1:]
	}
	seg := strings.Split(rest, "/")
	p, r, n := project, region, name
	switch {
	case len(seg) == 1:
	case len(seg) == 4 && seg[0] == "regions" && seg[2] == "resourcePolicies":
		r, n = seg[1], seg[3]
	case len(seg) == 6 && seg[0] == "projects" && seg[2] == "regions" && seg[4] == "resourcePolicies":
		p, r, n = seg[1], seg[3], seg[5]
	default:
		return "", false
	}
	if p != project || r != region {
		return "", false
	}
	return "projects/" + p + "/regions/" + r + "/resourcePolicies/" + n, true
}
