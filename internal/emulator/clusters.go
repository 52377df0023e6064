package emulator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
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

// startClusterAPI starts (or restarts) the cluster's kube-apiserver and records its endpoint.
func (e *Emulator) startClusterAPI(ctx context.Context, c *cluster) error {
	e.mu.Lock()
	dns := dnsAccess(c.PB)
	e.mu.Unlock()
	return e.startClusterAPIWith(ctx, c, dns)
}

// startClusterAPIWith starts the cluster's kube-apiserver, serving its DNS endpoint when dns.
func (e *Emulator) startClusterAPIWith(ctx context.Context, c *cluster, dns bool) error {
	e.mu.Lock()
	dir, uid, port, name := c.dir, c.UID, c.APIPort, c.PB.Name
	e.mu.Unlock()
	var extra []string
	if dns {
		extra = append(extra, e.sniFlag())
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	pki, err := kubeproc.LoadPKI(filepath.Join(dir, "pki"))
	if err != nil {
		if pki, err = kubeproc.NewPKI(name); err != nil {
			return err
		}
	}
	started := time.Now()
	api, err := kubeproc.StartAPIServer(ctx, kubeproc.APIServerConfig{
		Procs:      e.procs,
		Bin:        e.bins.APIServer,
		Dir:        dir,
		PKI:        pki,
		EtcdURL:    e.etcd.URL(),
		EtcdPrefix: "/raytpu/" + uid,
		Token:      e.token,
		Port:       port,
		ExtraArgs:  extra,
	})
	if err != nil {
		return err
	}
	e.logf("cluster %s: kube-apiserver ready on 127.0.0.1:%d after %s", c.Key, api.Port(), time.Since(started).Round(time.Millisecond))
	kube, dyn, err := kubeClients(api.Port(), pki.CACertPEM, e.token)
	if err != nil {
		api.Stop()
		return err
	}
	e.mu.Lock()
	if e.st.clusters[c.Key] != c {
		// Reset (or Close) took the cluster away while its kube-apiserver started.
		e.mu.Unlock()
		api.Stop()
		return fmt.Errorf("the cluster is gone")
	}
	c.apiMu.Lock()
	c.api, c.pki, c.kube, c.dyn, c.dnsSNI = api, pki, kube, dyn, dns
	c.apiMu.Unlock()
	c.APIPort = api.Port()
	refreshEndpoints(c.PB, api.Port())
	c.PB.MasterAuth = &containerpb.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString(pki.CACertPEM)}
	// A restarted kube-apiserver (a new IP, the DNS endpoint) gets its runtime back, the Ray
	// Operator add-on's part too once its CRDs are there.
	ray := c.RayCRDs && c.rayTarget
	e.mu.Unlock()
	e.startRuntime(c, ray)
	return nil
}

func (e *Emulator) removeClusterDir(c *cluster) {
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
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
	if u.DesiredAddonsConfig != nil {
		if err := rules.CheckRayVersion(u.DesiredAddonsConfig, version); err != nil {
			return nil, 0, err
		}
	}
	var channel *containerpb.ReleaseChannel
	if u.DesiredReleaseChannel != nil {
		channel = cloneMsg(u.DesiredReleaseChannel)
	}
	for _, z := range u.DesiredLocations {
		if !rules.IsZone(z) || rules.ZoneRegion(z) != rules.ZoneRegion(c.Location) {
			return nil, 0, apierr.Invalid("Cluster location %q is not a zone of region %q.", z, rules.ZoneRegion(c.Location))
		}
	}
	if id := u.DesiredNodePoolId; id != "" && c.pool(id) == nil {
		return nil, 0, apierr.NotFound("Node pool %q not found.", id)
	}
	addons := u.DesiredAddonsConfig
	identity := u.DesiredWorkloadIdentityConfig
	rest := cloneMsg(u)
	return func() {
		applyDesired(c, rest)
		c.PB.CurrentMasterVersion = version
		if identity != nil {
			c.PB.WorkloadIdentityConfig = cloneMsg(identity)
		}
		if addons != nil {
			c.PB.AddonsConfig = cloneMsg(addons)
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

// RayCRDsLatency is the SetLatencies key for the gap between enabling the Ray Operator add-on and
// its CRDs being created (Options.RayCRDDelay until set).
const RayCRDsLatency = "RAY_OPERATOR_CRDS"

// rayCRDDelay is the current gap between enabling the add-on and creating its CRDs.
func (e *Emulator) rayCRDDelay(c *cluster) time.Duration {
	if d, ok := e.ctl.rayCRDLatency(c.Key); ok {
		return d
	}
	switch {
	case e.opts.RayCRDDelay == 0:
		return DefaultRayCRDDelay
	case e.opts.RayCRDDelay < 0:
		return 0
	}
	return e.opts.RayCRDDelay
}

// scheduleRayLocked makes the cluster's KubeRay CRDs follow the Ray Operator add-on: created
// RayCRDDelay after it is enabled, removed when it is disabled. A change supersedes any change
// still in flight (including its waits), so quick toggles end in the last state asked for. The
// TPU webhook's registration comes and goes with the CRDs, and once they are served the add-on's
// part of the cluster's runtime (kuberay_stack.go) waits for its first Ray object.
func (e *Emulator) scheduleRayLocked(c *cluster) {
	want := c.rayEnabled() && c.PB.Status != containerpb.Cluster_ERROR
	if want == c.rayTarget {
		return
	}
	c.rayTarget = want
	c.rayGen++
	gen := c.rayGen
	current := func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return c.rayGen == gen
	}
	delay := e.rayCRDDelay(c)
	if !want {
		delay = 0
	}
	enabled := time.Now()
	e.goBackground(func(ctx context.Context) {
		if !sleepCtx(ctx, delay) {
			return
		}
		c.rayMu.Lock()
		defer c.rayMu.Unlock()
		if !current() {
			return
		}
		// Retried until it succeeds or a newer add-on change supersedes it: GKE keeps
		// reconciling an enabled add-on, it does not give up after one failure.
		for {
			var err error
			if want {
				err = e.installRayAddon(ctx, c, current)
			} else {
				err = e.removeRayAddon(ctx, c, current)
			}
			if err == nil {
				break
			}
			if errors.Is(err, errSuperseded) {
				return
			}
			e.logf("cluster %s: KubeRay CRDs: %v (retrying)", c.Key, err)
			if !sleepCtx(ctx, time.Second) || !current() {
				return
			}
		}
		e.mu.Lock()
		if c.rayGen == gen {
			c.RayCRDs = want
			e.persistLocked()
		}
		e.mu.Unlock()
		if want && e.waitRayCRDsEstablished(ctx, c, current) == nil {
			e.ctl.recordRayCRDs(RayCRDInstall{Cluster: c.Key, Start: enabled, End: time.Now()})
			e.captureRayCRDs(ctx, c)
			e.mu.Lock()
			current := c.rayGen == gen
			e.mu.Unlock()
			if r := c.runtimeOf(); current && r != nil {
				r.armRay()
			}
		}
	})
}
