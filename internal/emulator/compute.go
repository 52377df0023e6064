package emulator

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// computePrefix is where the emulator serves Compute Engine: the base path for
// google.golang.org/api/compute/v1 (option.WithEndpoint(Endpoint()+"/compute/v1/")) and for
// terraform-provider-google's compute_custom_endpoint.
const computePrefix = "/compute/v1/"

// The slice of Compute Engine that GKE users (and terraform-provider-google) touch around TPU node
// pools, in the JSON of google.golang.org/api/compute/v1:
//   - instanceGroupManagers get and list (zonal), one per zone of every node pool, named by the
//     pool's instanceGroupUrls: terraform-provider-google reads a node pool's node_count as the sum
//     of their targetSize divided by their number (google/services/container/
//     resource_container_node_pool.go, flattenNodePool), and takes a 404 there as the pool gone;
//   - machineTypes get and list (zonal), from the emulator's table (machines): what the cluster
//     autoscaler reads of a machine type (guestCpus, memoryMb) and raytpu's plan-time check of
//     node auto-provisioning limits;
//   - resourcePolicies insert, get, list and delete (regional), the workload policies that place
//     multi-host tpu7x slices (placementPolicy.policyName);
//   - zonal and regional operations get and wait.

// computeRoute is a resolved Compute Engine request.
type computeRoute struct {
	method  string // the Compute Engine method id, e.g. compute.resourcePolicies.insert
	project string
	scope   string // "zones" or "regions"
	where   string // the zone or the region
	name    string // the resource or operation named, "" for a collection
}

func (r computeRoute) parent() string {
	return "projects/" + r.project + "/" + r.scope + "/" + r.where
}

// parseComputeRoute maps a method and path to a Compute Engine method, with the paths of
// google.golang.org/api/compute/v1: projects/{p}/zones/{z}/{instanceGroupManagers|machineTypes}[/{name}],
// projects/{p}/regions/{r}/resourcePolicies[/{name}] and
// projects/{p}/{zones|regions}/{z|r}/operations/{op}[/wait].
func parseComputeRoute(method, path string) (computeRoute, *apierr.Error) {
	notFound := func() (computeRoute, *apierr.Error) {
		return computeRoute{}, apierr.NotFound("The requested URL %s was not found on this server.", path)
	}
	rest, ok := strings.CutPrefix(path, computePrefix)
	if !ok {
		return notFound()
	}
	seg := strings.Split(rest, "/")
	if len(seg) < 5 || len(seg) > 7 || seg[0] != "projects" || (seg[2] != "zones" && seg[2] != "regions") {
		return notFound()
	}
	for _, s := range seg {
		if s == "" {
			return notFound()
		}
	}
	rt := computeRoute{project: seg[1], scope: seg[2], where: seg[3]}
	zonal := rt.scope == "zones"
	is := func(m, id string) bool {
		if method == m {
			rt.method = id
			return true
		}
		return false
	}
	opMethods := "compute.regionOperations."
	if zonal {
		opMethods = "compute.zoneOperations."
	}
	coll := seg[4]
	if len(seg) >= 6 {
		rt.name = seg[5]
	}
	switch {
	case len(seg) == 5 && zonal && coll == "instanceGroupManagers":
		if is("GET", "compute.instanceGroupManagers.list") {
			return rt, nil
		}
	case len(seg) == 6 && zonal && coll == "instanceGroupManagers":
		if is("GET", "compute.instanceGroupManagers.get") {
			return rt, nil
		}
	case len(seg) == 5 && zonal && coll == "machineTypes":
		if is("GET", "compute.machineTypes.list") {
			return rt, nil
		}
	case len(seg) == 6 && zonal && coll == "machineTypes":
		if is("GET", "compute.machineTypes.get") {
			return rt, nil
		}
	case len(seg) == 5 && !zonal && coll == "resourcePolicies":
		if is("GET", "compute.resourcePolicies.list") || is("POST", "compute.resourcePolicies.insert") {
			return rt, nil
		}
	case len(seg) == 6 && !zonal && coll == "resourcePolicies":
		if is("GET", "compute.resourcePolicies.get") || is("DELETE", "compute.resourcePolicies.delete") {
			return rt, nil
		}
	case len(seg) == 6 && coll == "operations":
		if is("GET", opMethods+"get") {
			return rt, nil
		}
	case len(seg) == 7 && coll == "operations" && seg[6] == "wait":
		if is("POST", opMethods+"wait") {
			return rt, nil
		}
	}
	return notFound()
}

func (e *Emulator) serveCompute(w http.ResponseWriter, r *http.Request) {
	rt, rerr := parseComputeRoute(r.Method, r.URL.Path)
	e.serveAPI(w, r, apiRequest{
		rpc:      rt.method,
		routeErr: rerr,
		writeErr: writeComputeError,
		run: func(ctx context.Context, body []byte) ([]byte, *apierr.Error) {
			resp, aerr := e.dispatchCompute(ctx, rt, body)
			if aerr != nil {
				return nil, aerr
			}
			b, err := json.Marshal(resp)
			if err != nil {
				return nil, apierr.New(codes.Internal, "encoding the response: %v", err)
			}
			return b, nil
		},
	})
}

func (e *Emulator) dispatchCompute(ctx context.Context, rt computeRoute, body []byte) (any, *apierr.Error) {
	switch rt.method {
	case "compute.instanceGroupManagers.list":
		return e.listInstanceGroupManagers(rt), nil
	case "compute.instanceGroupManagers.get":
		return e.getInstanceGroupManager(rt)
	case "compute.machineTypes.list":
		return e.listMachineTypes(rt)
	case "compute.machineTypes.get":
		return e.getMachineType(rt)
	case "compute.resourcePolicies.list":
		return e.listResourcePolicies(rt), nil
	case "compute.resourcePolicies.get":
		return e.getResourcePolicy(rt)
	case "compute.resourcePolicies.insert":
		return e.insertResourcePolicy(rt, body)
	case "compute.resourcePolicies.delete":
		return e.deleteResourcePolicy(rt)
	case "compute.zoneOperations.get", "compute.regionOperations.get":
		return e.getComputeOperation(rt)
	case "compute.zoneOperations.wait", "compute.regionOperations.wait":
		return e.waitComputeOperation(ctx, rt)
	}
	return nil, apierr.New(codes.Unimplemented, "%s is not implemented", rt.method)
}

// computeURL is the URL of a Compute Engine resource at the emulator (Compute's selfLinks name
// https://www.googleapis.com/compute/v1/...; the emulator's resolve).
func (e *Emulator) computeURL(path string) string { return e.endpoint + computePrefix + path }

// computeTime is Compute Engine's timestamp format (RFC 3339 with milliseconds and an offset).
func computeTime(t time.Time) string { return t.Format("2006-01-02T15:04:05.000-07:00") }

// stableID is a Compute Engine numeric id derived from a string, so a resource that the emulator
// derives from GKE state (an instance group manager) keeps its id.
func stableID(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(sum[:8]) >> 1
}

func randomID() uint64 { return stableID(rules.RandomHex(16)) }

// errComputeNotFound is Compute Engine's 404: "The resource 'projects/p/regions/r/resourcePolicies/x'
// was not found".
func errComputeNotFound(path string) *apierr.Error {
	return apierr.NotFound("The resource '%s' was not found", path)
}

// errComputeInvalid is Compute Engine's 400 for a bad field value, legacy reason "invalid".
func errComputeInvalid(format string, args ...any) *apierr.Error {
	e := apierr.Invalid(format, args...)
	e.LegacyReason = "invalid"
	return e
}

// Instance group managers.

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

// Resource policies.

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

// Operations.

// computeOperation is a Compute Engine operation (zonal or regional).
type computeOperation struct {
	Key  string
	PB   *compute.Operation
	fail *apierr.Error
	done chan struct{} // closed when the operation is DONE
}

// newComputeOperationLocked registers an operation on the resource at targetLink, PENDING.
func (e *Emulator) newComputeOperationLocked(rt computeRoute, opType, targetLink string, targetID uint64, fail *apierr.Error) *computeOperation {
	now := time.Now()
	// Compute Engine names operations operation-<ms>-<13 hex>-<8 hex>-<8 hex>.
	name := fmt.Sprintf("operation-%d-%s-%s-%s", now.UnixMilli(), rules.RandomHex(7)[:13], rules.RandomHex(4), rules.RandomHex(4))
	key := rt.parent() + "/operations/" + name
	pb := &compute.Operation{
		Kind:          "compute#operation",
		Id:            randomID(),
		Name:          name,
		OperationType: opType,
		TargetLink:    targetLink,
		TargetId:      targetID,
		Status:        "PENDING",
		InsertTime:    computeTime(now),
		StartTime:     computeTime(now),
		SelfLink:      e.computeURL(key),
	}
	where := e.computeURL("projects/" + rt.project + "/" + rt.scope + "/" + rt.where)
	if rt.scope == "zones" {
		pb.Zone = where
	} else {
		pb.Region = where
	}
	op := &computeOperation{Key: key, PB: pb, fail: fail, done: make(chan struct{})}
	e.st.computeOps[key] = op
	e.st.computeOrder = append(e.st.computeOrder, key)
	return op
}

// runComputeOperation runs op in the background as Compute Engine reports it: PENDING, RUNNING
// after a fifth of the default latency, DONE (progress 100, endTime) after it, with error.errors[]
// when it failed; finish applies the outcome under e.mu.
func (e *Emulator) runComputeOperation(op *computeOperation, finish func(err *apierr.Error)) *compute.Operation {
	latency := e.ctl.latency("", "default")
	snapshot := *op.PB
	e.goBackground(func(ctx context.Context) {
		start := time.Now()
		if !sleepCtx(ctx, latency/5) {
			return
		}
		e.mu.Lock()
		op.PB.Status = "RUNNING"
		op.PB.Progress = 0
		e.mu.Unlock()
		if !sleepCtx(ctx, latency-time.Since(start)) {
			return // the emulator is closing: a stateful restart completes the operation
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.finishComputeOperationLocked(op, op.fail)
		finish(op.fail)
		e.persistLocked()
	})
	return &snapshot
}

func (e *Emulator) finishComputeOperationLocked(op *computeOperation, err *apierr.Error) {
	op.PB.Status = "DONE"
	op.PB.Progress = 100
	op.PB.EndTime = computeTime(time.Now())
	if err != nil {
		code := err.Reason
		if code == "" {
			code = apierr.StatusName(err.Code)
		}
		op.PB.Error = &compute.OperationError{Errors: []*compute.OperationErrorErrors{{Code: code, Message: err.Message}}}
		op.PB.HttpErrorStatusCode = int64(err.HTTPStatus)
		op.PB.HttpErrorMessage = strings.ToUpper(http.StatusText(err.HTTPStatus))
	}
	select {
	case <-op.done:
	default:
		close(op.done)
	}
}

func (e *Emulator) lookupComputeOperationLocked(rt computeRoute) (*computeOperation, *apierr.Error) {
	key := rt.parent() + "/operations/" + rt.name
	op := e.st.computeOps[key]
	if op == nil {
		return nil, errComputeNotFound(key)
	}
	return op, nil
}

func (e *Emulator) getComputeOperation(rt computeRoute) (*compute.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	op, err := e.lookupComputeOperationLocked(rt)
	if err != nil {
		return nil, err
	}
	out := *op.PB
	return &out, nil
}

// computeWaitLimit is how long operations.wait waits: Compute Engine returns "when the operation
// is DONE or when the request is approaching the 2 minute deadline" (compute v1 zoneOperations.wait
// and regionOperations.wait).
const computeWaitLimit = 2 * time.Minute

func (e *Emulator) waitComputeOperation(ctx context.Context, rt computeRoute) (*compute.Operation, *apierr.Error) {
	e.mu.Lock()
	op, err := e.lookupComputeOperationLocked(rt)
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(computeWaitLimit - 5*time.Second)
	defer t.Stop()
	select {
	case <-op.done:
	case <-t.C:
	case <-ctx.Done():
	case <-e.bgCtx.Done():
	}
	return e.getComputeOperation(rt)
}
