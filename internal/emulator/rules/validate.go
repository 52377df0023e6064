package rules

import (
	"regexp"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/machines"
)

// GKE's name rule for clusters and node pools, and its message for a name that breaks it.
var nameRE = regexp.MustCompile(`^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$`)

func ValidateName(field, name string) *apierr.Error {
	if nameRE.MatchString(name) {
		return nil
	}
	return apierr.Invalid("Invalid value for field %q: %q. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' "+
		"(only alphanumerics and '-' allowed, must start with a letter and end with an alphanumeric, and must be no "+
		"longer than 40 characters).", field, name)
}

var locationRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+(-[a-z])?$`)

func ValidateLocation(loc string) *apierr.Error {
	if !locationRE.MatchString(loc) {
		return apierr.Invalid("Location %q does not exist.", loc)
	}
	return nil
}

// PoolPlan is a validated node pool request.
type PoolPlan struct {
	Pool *NodePool
}

// ClusterFacts is what node pool validation needs to know about its cluster.
type ClusterFacts struct {
	Location      string
	Locations     []string // the cluster's node zones
	MasterVersion string
	// Channel is the cluster's release channel (CheckManagement).
	Channel containerpb.ReleaseChannel_Channel
	// Policies resolves placementPolicy.policyName; nil when not enforced (checkPlacementPolicy).
	Policies PolicyLookup
}

// PlanNodePool validates a node pool as GKE does (TPU rules from gketpu's tables) and returns it
// normalized as GKE reports it, in PROVISIONING.
func PlanNodePool(cf ClusterFacts, in *containerpb.NodePool) (*PoolPlan, *apierr.Error) {
	if in == nil {
		return nil, apierr.Invalid("Node pool is required.")
	}
	np := proto.CloneOf(in)
	if err := ValidateName("node_pool.name", np.Name); err != nil {
		return nil, err
	}
	if np.Config == nil {
		np.Config = &containerpb.NodeConfig{}
	}
	cfg := np.Config
	if cfg.MachineType == "" {
		cfg.MachineType = "e2-medium"
	}
	bootDiskSettings(cfg)
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
	if err := ValidateResourceLabels("node_pool.config.resource_labels", cfg.ResourceLabels); err != nil {
		return nil, err
	}

	zones := np.Locations
	if len(zones) == 0 {
		zones = cf.Locations
	}
	for _, z := range zones {
		if !IsZone(z) || ZoneRegion(z) != ZoneRegion(cf.Location) {
			return nil, apierr.Invalid("Node pool %q: location %q is not a zone of the cluster's region %q.", np.Name, z, ZoneRegion(cf.Location))
		}
	}
	np.Locations = append([]string(nil), zones...)

	version, verr := resolveNodeVersion(np.Version, cf.MasterVersion)
	if verr != nil {
		return nil, verr
	}
	np.Version = version

	if np.InitialNodeCount < 0 {
		return nil, apierr.Invalid("Node pool %q: initial_node_count must not be negative.", np.Name)
	}
	pool := &NodePool{PB: np, UID: RandomHex(8), Zones: zones, NodeCount: int(np.InitialNodeCount)}
	plan := &PoolPlan{Pool: pool}

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
	if err := CheckManagement(cf.Channel, np); err != nil {
		return nil, err
	}
	if !isTPU {
		if _, ok := machines.Lookup(cfg.MachineType); !ok {
			return nil, apierr.Invalid("Machine type %q does not exist in zone %q.", cfg.MachineType, zones[0])
		}
		if np.PlacementPolicy.GetTpuTopology() != "" {
			return nil, apierr.Invalid("TPU topology can only be specified for TPU machine types; %q is not one.", cfg.MachineType)
		}
		normalizeNodePool(plan.Pool)
		return plan, nil
	}

	if err := planTPU(plan, np, machine); err != nil {
		return nil, err
	}
	normalizeNodePool(plan.Pool)
	return plan, nil
}

// planTPU applies GKE's TPU node pool rules: the slice the machine type and topology make
// (gketpu), the generation's minimum version, and for a multi-host slice one zone, one node per
// host and its placement.
func planTPU(plan *PoolPlan, np *containerpb.NodePool, machine *gketpu.MachineType) *apierr.Error {
	cfg := np.Config
	pp := np.PlacementPolicy
	slice, err := machine.Slice(pp.GetTpuTopology())
	if err != nil {
		return apierr.Invalid("%s", err.Error())
	}
	g := machine.Generation
	if g.MinGKEVersion != "" && VersionLess(np.Version, g.MinGKEVersion) {
		return apierr.Invalid("Node pool %q: TPU %s (machine type %s) requires GKE version %s or later; the node version is %s.",
			np.Name, g.Name, cfg.MachineType, g.MinGKEVersion, np.Version)
	}
	pool := plan.Pool
	queued := np.QueuedProvisioning.GetEnabled()
	if slice.MultiHost {
		if len(pool.Zones) != 1 {
			return apierr.Invalid("Node pool %q: a multi-host TPU slice node pool must be in exactly one zone, got %d (%s).",
				np.Name, len(pool.Zones), strings.Join(pool.Zones, ", "))
		}
		// A queued provisioning or flex-start slice starts empty (checkCapacityOptions); any other
		// starts whole.
		if !queued && !cfg.GetFlexStart() && int(np.InitialNodeCount) != slice.Hosts {
			return apierr.Invalid("Node pool %q: the node count of a multi-host TPU slice node pool must equal the number of hosts of "+
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
				return apierr.Invalid("Creation of a managed instance group with %s machine type with placement policy is not supported. "+
					"Use workload policy instead.", cfg.MachineType)
			}
			if pp.GetPolicyName() == "" {
				return apierr.Invalid("Node pool %q: a multi-host %s TPU slice needs a workload policy: set placementPolicy.policyName "+
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
func normalizeNodePool(p *NodePool) {
	np := p.PB
	SetReservedLabels(p)
	addNodeConfigAnswers(p)
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
	np.Etag = RandomHex(8)
}

// CheckRayVersion refuses the Ray Operator add-on below its minimum cluster version.
func CheckRayVersion(addons *containerpb.AddonsConfig, version string) *apierr.Error {
	if !addons.GetRayOperatorConfig().GetEnabled() {
		return nil
	}
	if floor := gketpu.RayOperatorMinVersion(); VersionLess(version, floor) {
		return apierr.Invalid("The Ray Operator add-on requires GKE version %s or later; the cluster version is %s.", floor, version)
	}
	return nil
}
