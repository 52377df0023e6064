package emulator

import (
	"context"
	"path/filepath"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// cloneMsg deep-copies a message; the state never shares messages with requests or responses.
func cloneMsg[T proto.Message](m T) T {
	c, _ := proto.Clone(m).(T)
	return c
}

func cloneCluster(c *containerpb.Cluster) *containerpb.Cluster { return cloneMsg(c) }

func cloneNodePool(p *containerpb.NodePool) *containerpb.NodePool { return cloneMsg(p) }

func (e *Emulator) listClusters(n resourceName) *containerpb.ListClustersResponse {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := &containerpb.ListClustersResponse{}
	for _, c := range e.st.allClusters() {
		if c.Project == n.Project && (n.Location == "-" || c.Location == n.Location) {
			out.Clusters = append(out.Clusters, c.view())
		}
	}
	return out
}

// lookupClusterLocked finds the cluster a request names.
func (e *Emulator) lookupClusterLocked(n resourceName) (*cluster, *apierr.Error) {
	c := e.st.clusters[n.clusterKey()]
	if c == nil {
		return nil, errClusterNotFound(n)
	}
	return c, nil
}

func (e *Emulator) getCluster(n resourceName) (*containerpb.Cluster, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, err
	}
	return c.view(), nil
}

// defaultNodeLocations: a zonal cluster's nodes live in its zone, a regional one's in three zones.
func defaultNodeLocations(location string) []string {
	if rules.IsZone(location) {
		return []string{location}
	}
	return []string{location + "-a", location + "-b", location + "-c"}
}

func (e *Emulator) createCluster(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.CreateClusterRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if err := rules.ValidateLocation(n.Location); err != nil {
		return nil, err
	}
	if req.Cluster == nil {
		return nil, apierr.Invalid("Cluster is required.")
	}
	pb := cloneCluster(req.Cluster)
	if err := rules.ValidateName("cluster.name", pb.Name); err != nil {
		return nil, err
	}
	n.Cluster = pb.Name
	if err := rules.ValidateResourceLabels("cluster.resource_labels", pb.ResourceLabels); err != nil {
		return nil, err
	}
	version, verr := rules.ResolveMasterVersion(pb.InitialClusterVersion, pb.GetReleaseChannel().GetChannel())
	if verr != nil {
		return nil, verr
	}
	if err := rules.CheckRayVersion(pb.AddonsConfig, version); err != nil {
		return nil, err
	}
	if err := rules.CheckSliceController(pb.AddonsConfig, version, rules.CreateChannel(pb)); err != nil {
		return nil, err
	}
	if err := rules.ValidateClusterAutoscaling(pb.Autoscaling); err != nil {
		return nil, err
	}
	if err := validateEndpoints(pb); err != nil {
		return nil, err
	}
	if len(pb.Locations) == 0 {
		pb.Locations = defaultNodeLocations(n.Location)
	}
	for _, z := range pb.Locations {
		if !rules.IsZone(z) || rules.ZoneRegion(z) != rules.ZoneRegion(n.Location) {
			return nil, apierr.Invalid("Cluster location %q is not a zone of region %q.", z, rules.ZoneRegion(n.Location))
		}
	}
	// A cluster without node pools gets "default-pool" from initialNodeCount and nodeConfig.
	reqPools := pb.NodePools
	switch {
	case len(reqPools) == 0 && pb.InitialNodeCount > 0: //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		reqPools = []*containerpb.NodePool{{Name: "default-pool", Config: pb.NodeConfig, InitialNodeCount: pb.InitialNodeCount}} //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	case len(reqPools) == 0:
		return nil, apierr.Invalid("Cluster.initial_node_count must be greater than zero.")
	case pb.InitialNodeCount > 0: //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
		return nil, apierr.Invalid("Cluster.initial_node_count and Cluster.node_pools are mutually exclusive.")
	}
	e.mu.Lock()
	policies := e.policyLookupLocked(n.Project, n.Location)
	e.mu.Unlock()
	cf := rules.ClusterFacts{Location: n.Location, Locations: pb.Locations, MasterVersion: version, Policies: policies, Channel: rules.CreateChannel(pb)}
	var plans []*rules.PoolPlan
	seen := map[string]bool{}
	for _, in := range reqPools {
		plan, err := rules.PlanNodePool(cf, in)
		if err != nil {
			return nil, err
		}
		if seen[plan.Pool.PB.Name] {
			return nil, apierr.Invalid("Node pool names must be unique: %q appears twice.", plan.Pool.PB.Name)
		}
		seen[plan.Pool.PB.Name] = true
		plans = append(plans, plan)
	}

	now := time.Now().UTC()
	pb.NodePools = nil
	pb.Location = n.Location
	pb.Zone = n.Location //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	pb.InitialClusterVersion = version
	pb.CurrentMasterVersion = version
	pb.CurrentNodeVersion = version //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	pb.Status = containerpb.Cluster_PROVISIONING
	pb.CreateTime = now.Format(time.RFC3339)
	pb.Id = rules.RandomHex(16)
	pb.Etag = rules.RandomHex(8)
	pb.LabelFingerprint = rules.RandomHex(4)
	pb.SelfLink = e.endpoint + "/v1/" + n.clusterKey()
	if pb.Network == "" {
		pb.Network = "default"
	}
	if pb.Subnetwork == "" {
		pb.Subnetwork = "default"
	}
	if pb.LoggingService == "" {
		pb.LoggingService = "logging.googleapis.com/kubernetes"
	}
	if pb.MonitoringService == "" {
		pb.MonitoringService = "monitoring.googleapis.com/kubernetes"
	}
	if pb.ClusterIpv4Cidr == "" {
		pb.ClusterIpv4Cidr = "10.4.0.0/14"
	}
	pb.ServicesIpv4Cidr = "10.0.0.0/24"
	pb.ReleaseChannel = &containerpb.ReleaseChannel{Channel: rules.CreateChannel(pb)}
	pb.Autoscaling = rules.ReportedClusterAutoscaling(pb.Autoscaling)
	if pb.AddonsConfig == nil {
		pb.AddonsConfig = &containerpb.AddonsConfig{}
	}
	pb.MasterAuth = &containerpb.MasterAuth{}
	var poolPBs []*containerpb.NodePool
	for _, p := range plans {
		poolPBs = append(poolPBs, p.Pool.PB)
	}
	rules.FillClusterDefaults(pb, n.Project, poolPBs)
	if err := rules.AdmitMaintenancePolicy(pb, now); err != nil {
		return nil, err
	}
	refreshEndpoints(pb, 0)

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.clusters[n.clusterKey()] != nil {
		return nil, errAlreadyExists(n.clusterKey())
	}
	c := &cluster{Key: n.clusterKey(), Project: n.Project, Location: n.Location, UID: pb.Id, PB: pb}
	c.dir = filepath.Join(e.workDir, "clusters", c.UID)
	for _, p := range plans {
		p.Pool.PB.SelfLink = pb.SelfLink + "/nodePools/" + p.Pool.PB.Name
		c.Pools = append(c.Pools, p.Pool)
	}
	if err := e.checkQuotaLocked(c.Project, c.Pools); err != nil {
		return nil, err
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_CREATE_CLUSTER, c.Key, "")
	if err != nil {
		return nil, err
	}
	e.st.clusters[c.Key] = c
	e.persistLocked()
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error {
			if err := e.startClusterAPI(ctx, c); err != nil {
				return apierr.New(codes.Internal, "Failed to start the cluster control plane: %v", err)
			}
			return e.provisionPools(ctx, c, c.Pools)
		},
		finish: func(err *apierr.Error) {
			c.PB.Status = containerpb.Cluster_RUNNING
			poolStatus := containerpb.NodePool_RUNNING
			if err != nil {
				c.PB.Status, c.PB.StatusMessage = containerpb.Cluster_ERROR, err.Message //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
				poolStatus = containerpb.NodePool_ERROR
			}
			for _, p := range c.Pools {
				if p.PB.Status == containerpb.NodePool_PROVISIONING {
					p.PB.Status = poolStatus
					if err != nil {
						p.PB.StatusMessage = err.Message //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
					}
				}
			}
			e.scheduleRayLocked(c)
		},
	}), nil
}

func (e *Emulator) deleteCluster(n resourceName) (*containerpb.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, err
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_DELETE_CLUSTER, c.Key, "")
	if err != nil {
		return nil, err
	}
	c.PB.Status = containerpb.Cluster_STOPPING
	for _, p := range c.Pools {
		p.PB.Status = containerpb.NodePool_STOPPING
	}
	e.persistLocked()
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error {
			c.stopAPIServer()
			return nil
		},
		finish: func(err *apierr.Error) {
			if err != nil {
				c.PB.Status, c.PB.StatusMessage = containerpb.Cluster_ERROR, err.Message //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
				return
			}
			c.rayGen++
			delete(e.st.clusters, c.Key)
			e.goBackground(func(context.Context) {
				c.stopAPIServer()
				e.removeClusterDir(c)
			})
		},
	}), nil
}

// applyClusterUpdate validates a ClusterUpdate and returns the function that applies it and the
// operation type GKE reports for it. Fields the emulator does not model are accepted and ignored.
func applyClusterUpdate(c *cluster, u *containerpb.ClusterUpdate) (func(), containerpb.Operation_Type, *apierr.Error) {
	if u == nil {
		return nil, 0, apierr.Invalid("Update is required.")
	}
	typ := containerpb.Operation_UPDATE_CLUSTER
	version := c.PB.CurrentMasterVersion
	if u.DesiredMasterVersion != "" {
		v, err := rules.ResolveMasterUpdate(u.DesiredMasterVersion, c.PB.GetReleaseChannel().GetChannel())
		if err != nil {
			return nil, 0, err
		}
		if rules.VersionLess(v, version) {
			return nil, 0, apierr.Invalid("Master version %q is older than the current master version %q; downgrades are not supported.", v, version)
		}
		version = v
		typ = containerpb.Operation_UPGRADE_MASTER
	}
	var channel *containerpb.ReleaseChannel
	if u.DesiredReleaseChannel != nil {
		channel = cloneMsg(u.DesiredReleaseChannel)
	}
	var addons *containerpb.AddonsConfig
	if u.DesiredAddonsConfig != nil {
		addons = rules.MergeAddons(c.PB.AddonsConfig, u.DesiredAddonsConfig)
		if err := rules.CheckRayVersion(u.DesiredAddonsConfig, version); err != nil {
			return nil, 0, err
		}
		current := c.PB.GetReleaseChannel().GetChannel()
		if channel != nil {
			current = channel.GetChannel()
		}
		if err := rules.CheckSliceController(u.DesiredAddonsConfig, version, current); err != nil {
			return nil, 0, err
		}
	}
	for _, z := range u.DesiredLocations {
		if !rules.IsZone(z) || rules.ZoneRegion(z) != rules.ZoneRegion(c.Location) {
			return nil, 0, apierr.Invalid("Cluster location %q is not a zone of region %q.", z, rules.ZoneRegion(c.Location))
		}
	}
	if id := u.DesiredNodePoolId; id != "" && c.pool(id) == nil {
		return nil, 0, apierr.NotFound("Node pool %q not found.", id)
	}
	identity := u.DesiredWorkloadIdentityConfig
	rest := cloneMsg(u)
	return func() {
		applyDesired(c, rest)
		c.PB.CurrentMasterVersion = version
		if identity != nil {
			c.PB.WorkloadIdentityConfig = cloneMsg(identity)
		}
		if addons != nil {
			c.PB.AddonsConfig = addons
		}
		if channel != nil {
			c.PB.ReleaseChannel = channel
		}
	}, typ, nil
}

func (e *Emulator) updateCluster(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.UpdateClusterRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	var run func(context.Context, *cluster) *apierr.Error
	if dns := req.GetUpdate().GetDesiredControlPlaneEndpointsConfig().GetDnsEndpointConfig(); dns != nil && dns.AllowExternalTraffic != nil {
		allow := *dns.AllowExternalTraffic
		run = func(ctx context.Context, c *cluster) *apierr.Error { return e.setDNSAccess(ctx, c, allow) }
	}
	return e.reconcileClusterRun(n, func(c *cluster) (func(), containerpb.Operation_Type, *apierr.Error) {
		if err := e.checkDesiredNodePoolAutoscaling(c, req.Update); err != nil {
			return nil, 0, err
		}
		if err := rules.ValidateClusterAutoscaling(req.GetUpdate().GetDesiredClusterAutoscaling()); err != nil {
			return nil, 0, err
		}
		return applyClusterUpdate(c, req.Update)
	}, run)
}

func (e *Emulator) setAddons(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.SetAddonsConfigRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if req.AddonsConfig == nil {
		return nil, apierr.Invalid("Addons config is required.")
	}
	return e.reconcileCluster(n, func(c *cluster) (func(), containerpb.Operation_Type, *apierr.Error) {
		return applyClusterUpdate(c, &containerpb.ClusterUpdate{DesiredAddonsConfig: req.AddonsConfig})
	})
}

// setResourceLabels replaces a cluster's resource labels. As GKE, it refuses a request whose
// label fingerprint is not the current one, so that concurrent writers do not overwrite each other.
func (e *Emulator) setResourceLabels(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.SetLabelsRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if err := rules.ValidateResourceLabels("resource_labels", req.ResourceLabels); err != nil {
		return nil, err
	}
	return e.reconcileCluster(n, func(c *cluster) (func(), containerpb.Operation_Type, *apierr.Error) {
		if req.LabelFingerprint != c.PB.LabelFingerprint {
			return nil, 0, apierr.New(codes.FailedPrecondition,
				"Labels could not be set due to fingerprint mismatch: expected %q, got %q.", c.PB.LabelFingerprint, req.LabelFingerprint)
		}
		return func() {
			c.PB.ResourceLabels = req.ResourceLabels
			c.PB.LabelFingerprint = rules.RandomHex(4)
		}, containerpb.Operation_UPDATE_CLUSTER, nil
	})
}

// reconcileCluster runs a cluster update: RECONCILING while the operation runs, the change
// applied when it succeeds, and the Ray CRDs following the add-on.
func (e *Emulator) reconcileCluster(n resourceName, plan func(*cluster) (func(), containerpb.Operation_Type, *apierr.Error)) (*containerpb.Operation, *apierr.Error) {
	return e.reconcileClusterRun(n, plan, nil)
}

// reconcileClusterRun is reconcileCluster with run, the operation's slow part (nil for none).
func (e *Emulator) reconcileClusterRun(n resourceName, plan func(*cluster) (func(), containerpb.Operation_Type, *apierr.Error),
	run func(context.Context, *cluster) *apierr.Error) (*containerpb.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, err
	}
	apply, typ, err := plan(c)
	if err != nil {
		return nil, err
	}
	if err := e.admitLocked(c, ""); err != nil {
		return nil, err
	}
	if c.PB.Status != containerpb.Cluster_RUNNING {
		return nil, apierr.New(codes.FailedPrecondition, "Cluster %q is in state %s and cannot be updated.", c.PB.Name, c.PB.Status)
	}
	op, err := e.newOperationLocked(c, typ, c.Key, "")
	if err != nil {
		return nil, err
	}
	c.PB.Status = containerpb.Cluster_RECONCILING
	e.persistLocked()
	w := opWork{finish: func(err *apierr.Error) {
		c.PB.Status = containerpb.Cluster_RUNNING
		if err != nil {
			return
		}
		apply()
		refreshEndpoints(c.PB, c.APIPort)
		c.PB.Etag = rules.RandomHex(8)
		e.scheduleRayLocked(c)
	}}
	if run != nil {
		w.run = func(ctx context.Context) *apierr.Error { return run(ctx, c) }
	}
	return e.startOperation(op, w), nil
}
