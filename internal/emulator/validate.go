package emulator

import (
	"fmt"
	"regexp"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/machines"
)

// GKE's name rule for clusters and node pools, and its message for a name that breaks it.
var nameRE = regexp.MustCompile(`^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$`)

func validateName(field, name string) *apiError {
	if nameRE.MatchString(name) {
		return nil
	}
	return errInvalid("Invalid value for field %q: %q. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' "+
		"(only alphanumerics and '-' allowed, must start with a letter and end with an alphanumeric, and must be no "+
		"longer than 40 characters).", field, name)
}

var locationRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+(-[a-z])?$`)

func validateLocation(loc string) *apiError {
	if !locationRE.MatchString(loc) {
		return errInvalid("Location %q does not exist.", loc)
	}
	return nil
}

// poolPlan is a validated node pool request.
type poolPlan struct {
	pool *nodePool
}

// clusterFacts is what node pool validation needs to know about its cluster.
type clusterFacts struct {
	location      string
	locations     []string // the cluster's node zones
	masterVersion string
	// channel is the cluster's release channel (checkManagement).
	channel containerpb.ReleaseChannel_Channel
	// policies resolves placementPolicy.policyName; nil when not enforced (checkPlacementPolicy).
	policies policyLookup
}

// planNodePool validates a node pool as GKE does (TPU rules from gketpu's tables) and returns it
// normalized as GKE reports it, in PROVISIONING.
func planNodePool(cf clusterFacts, in *containerpb.NodePool) (*poolPlan, *apiError) {
	if in == nil {
		return nil, errInvalid("Node pool is required.")
	}
	np := cloneNodePool(in)
	if err := validateName("node_pool.name", np.Name); err != nil {
		return nil, err
	}
	if np.Config == nil {
		np.Config = &containerpb.NodeConfig{}
	}
	cfg := np.Config
	if cfg.MachineType == "" {
		cfg.MachineType = "e2-medium"
	}
	if cfg.DiskSizeGb == 0 {
		cfg.DiskSizeGb = 100
	}
	if cfg.DiskType == "" {
		cfg.DiskType = "pd-balanced"
	}
	if cfg.ImageType == "" {
		cfg.ImageType = "COS_CONTAINERD"
	}
	cfg.OauthScopes = nodeOAuthScopes(cfg.OauthScopes)
	if cfg.ServiceAccount == "" {
		cfg.ServiceAccount = "default"
	}
	if err := validateNodeLabels(cfg.Labels); err != nil {
		return nil, err
	}
	if err := validateResourceLabels("node_pool.config.resource_labels", cfg.ResourceLabels); err != nil {
		return nil, err
	}

	zones := np.Locations
	if len(zones) == 0 {
		zones = cf.locations
	}
	for _, z := range zones {
		if !isZone(z) || zoneRegion(z) != zoneRegion(cf.location) {
			return nil, errInvalid("Node pool %q: location %q is not a zone of the cluster's region %q.", np.Name, z, zoneRegion(cf.location))
		}
	}
	np.Locations = append([]string(nil), zones...)

	version, verr := resolveNodeVersion(np.Version, cf.masterVersion)
	if verr != nil {
		return nil, verr
	}
	np.Version = version

	if np.InitialNodeCount < 0 {
		return nil, errInvalid("Node pool %q: initial_node_count must not be negative.", np.Name)
	}
	pool := &nodePool{PB: np, UID: randomHex(8), Zones: zones, NodeCount: int(np.InitialNodeCount)}
	plan := &poolPlan{pool: pool}

	machine, isTPU := gketpu.LookupMachineType(cfg.MachineType)
	if err := checkPlacementPolicy(cf, np, machine); err != nil {
		return nil, err
	}
	if err := checkAutoscaling(np); err != nil {
		return nil, err
	}
	if err := checkCapacityOptions(np, machine); err != nil {
		return nil, err
	}
	if err := checkManagement(cf.channel, np); err != nil {
		return nil, err
	}
	if !isTPU {
		if _, ok := machines.Lookup(cfg.MachineType); !ok {
			return nil, errInvalid("Machine type %q does not exist in zone %q.", cfg.MachineType, zones[0])
		}
		if np.PlacementPolicy.GetTpuTopology() != "" {
			return nil, errInvalid("TPU topology can only be specified for TPU machine types; %q is not one.", cfg.MachineType)
		}
		normalizeNodePool(plan.pool)
		return plan, nil
	}

	if err := planTPU(plan, np, machine); err != nil {
		return nil, err
	}
	normalizeNodePool(plan.pool)
	return plan, nil
}

// planTPU applies GKE's TPU node pool rules: the slice the machine type and topology make
// (gketpu), the generation's minimum version, and for a multi-host slice one zone, one node per
// host and its placement.
func planTPU(plan *poolPlan, np *containerpb.NodePool, machine *gketpu.MachineType) *apiError {
	cfg := np.Config
	pp := np.PlacementPolicy
	slice, err := machine.Slice(pp.GetTpuTopology())
	if err != nil {
		return errInvalid("%s", err.Error())
	}
	g := machine.Generation
	if g.MinGKEVersion != "" && versionLess(np.Version, g.MinGKEVersion) {
		return errInvalid("Node pool %q: TPU %s (machine type %s) requires GKE version %s or later; the node version is %s.",
			np.Name, g.Name, cfg.MachineType, g.MinGKEVersion, np.Version)
	}
	pool := plan.pool
	queued := np.QueuedProvisioning.GetEnabled()
	if slice.MultiHost {
		if len(pool.Zones) != 1 {
			return errInvalid("Node pool %q: a multi-host TPU slice node pool must be in exactly one zone, got %d (%s).",
				np.Name, len(pool.Zones), strings.Join(pool.Zones, ", "))
		}
		// A queued provisioning or flex-start slice starts empty (checkCapacityOptions); any other
		// starts whole.
		if !queued && !cfg.GetFlexStart() && int(np.InitialNodeCount) != slice.Hosts {
			return errInvalid("Node pool %q: the node count of a multi-host TPU slice node pool must equal the number of hosts of "+
				"its topology: TPU topology %s on machine type %s needs %d nodes, got %d.",
				np.Name, slice.Topology, cfg.MachineType, slice.Hosts, np.InitialNodeCount)
		}
		if err := checkSliceAutoscaling(np, slice.Topology, slice.Hosts); err != nil {
			return err
		}
		if g.MultiHostWorkloadPolicy {
			if pp.GetType() == containerpb.NodePool_PlacementPolicy_COMPACT {
				// GKE's text (github.com/vllm-project/ci-infra/pull/547). There GKE accepted the
				// request and the pool went to ERROR; the emulator answers 400 at once, because
				// its requests are validated before an operation exists, and the caller learns
				// the same cause either way.
				return errInvalid("Creation of a managed instance group with %s machine type with placement policy is not supported. "+
					"Use workload policy instead.", cfg.MachineType)
			}
			if pp.GetPolicyName() == "" {
				return errInvalid("Node pool %q: a multi-host %s TPU slice needs a workload policy: set placementPolicy.policyName "+
					"to a HIGH_THROUGHPUT workload policy with accelerator topology %s.", np.Name, g.Name, slice.Topology)
			}
			// GKE reports the policy and the topology with an empty type.
			np.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{PolicyName: pp.GetPolicyName(), TpuTopology: slice.Topology}
		}
	}
	pool.Generation = g.Name
	pool.Accelerator = g.Accelerator
	pool.Topology = slice.Topology
	pool.ChipsPerNode = machine.ChipsPerVM
	pool.MultiHost = slice.MultiHost
	return nil
}

// normalizeNodePool fills what GKE adds to every node pool.
func normalizeNodePool(p *nodePool) {
	np := p.PB
	setReservedLabels(p)
	normalizeCapacityOptions(np)
	normalizeAutoscaling(np)
	if np.Management == nil {
		np.Management = &containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: true}
	}
	if np.UpgradeSettings == nil {
		np.UpgradeSettings = &containerpb.NodePool_UpgradeSettings{MaxSurge: 1, Strategy: containerpb.NodePoolUpdateStrategy_SURGE.Enum()}
	}
	if np.MaxPodsConstraint == nil {
		np.MaxPodsConstraint = &containerpb.MaxPodsConstraint{MaxPodsPerNode: 110}
	}
	if np.PodIpv4CidrSize == 0 {
		np.PodIpv4CidrSize = 24
	}
	np.Status = containerpb.NodePool_PROVISIONING
	np.Etag = randomHex(8)
}

// checkRayVersion refuses the Ray Operator add-on below its minimum cluster version.
func checkRayVersion(addons *containerpb.AddonsConfig, version string) *apiError {
	if !addons.GetRayOperatorConfig().GetEnabled() {
		return nil
	}
	if floor := gketpu.RayOperatorMinVersion(); versionLess(version, floor) {
		return errInvalid("The Ray Operator add-on requires GKE version %s or later; the cluster version is %s.", floor, version)
	}
	return nil
}

// errAlreadyExists and errClusterNotFound use GKE's wording.
func errAlreadyExists(name string) *apiError {
	return newError(codes.AlreadyExists, "Already exists: %s.", name)
}

func errClusterNotFound(n resourceName) *apiError {
	return errNotFound("Not found: %s.", n.clusterKey())
}

func errPoolNotFound(n resourceName) *apiError {
	return errNotFound("Not found: %s.", n.poolKey())
}

func quotaName(gen string) string {
	return fmt.Sprintf("TPU_%s_CHIPS", strings.ToUpper(gen))
}
