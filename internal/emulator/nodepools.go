package emulator

import (
	"context"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

func (e *Emulator) listNodePools(n resourceName) (*containerpb.ListNodePoolsResponse, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, err
	}
	out := &containerpb.ListNodePoolsResponse{}
	for _, p := range c.Pools {
		out.NodePools = append(out.NodePools, cloneNodePool(p.PB))
	}
	return out, nil
}

func (e *Emulator) lookupPoolLocked(n resourceName) (*cluster, *rules.NodePool, *apierr.Error) {
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, nil, err
	}
	p := c.pool(n.NodePool)
	if p == nil {
		return nil, nil, errPoolNotFound(n)
	}
	return c, p, nil
}

func (e *Emulator) getNodePool(n resourceName) (*containerpb.NodePool, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, p, err := e.lookupPoolLocked(n)
	if err != nil {
		return nil, err
	}
	return cloneNodePool(p.PB), nil
}

// clusterReadyLocked refuses a change of node pool pool while an operation it must wait for runs
// (admitLocked) or while the cluster is not RUNNING, as GKE does.
func (e *Emulator) clusterReadyLocked(c *cluster, pool string) *apierr.Error {
	if err := e.admitLocked(c, pool); err != nil {
		return err
	}
	if c.PB.Status != containerpb.Cluster_RUNNING {
		return apierr.New(codes.FailedPrecondition, "Cluster %q is in state %s; node pools can only be changed while it is RUNNING.", c.PB.Name, c.PB.Status)
	}
	return nil
}

func (e *Emulator) createNodePool(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.CreateNodePoolRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	return e.startCreateNodePool(n, req.NodePool)
}

// startCreateNodePool validates node pool np of the cluster n names and starts its
// CREATE_NODE_POOL operation: the path of CreateNodePool and of node auto-provisioning alike.
func (e *Emulator) startCreateNodePool(n resourceName, np *containerpb.NodePool) (*containerpb.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, err
	}
	plan, err := rules.PlanNodePool(rules.ClusterFacts{Location: c.Location, Locations: c.PB.Locations, MasterVersion: c.PB.CurrentMasterVersion, Channel: c.PB.GetReleaseChannel().GetChannel(),
		Policies: e.policyLookupLocked(c.Project, c.Location)}, np)
	if err != nil {
		return nil, err
	}
	p := plan.Pool
	rules.SetPodRange(p.PB, c.PB)
	n.NodePool = p.PB.Name
	if c.pool(p.PB.Name) != nil {
		return nil, errAlreadyExists(n.poolKey())
	}
	if err := e.clusterReadyLocked(c, p.PB.Name); err != nil {
		return nil, err
	}
	if err := e.checkQuotaLocked(c.Project, []*rules.NodePool{p}); err != nil {
		return nil, err
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_CREATE_NODE_POOL, n.poolKey(), p.PB.Name)
	if err != nil {
		return nil, err
	}
	p.PB.SelfLink = e.endpoint + "/v1/" + n.poolKey()
	c.Pools = append(c.Pools, p)
	e.persistLocked()
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error { return e.provisionPools(ctx, c, []*rules.NodePool{p}) },
		// As in GKE, the creation ends once the nodes have registered: they are Ready moments
		// before the operation is DONE and the pool RUNNING.
		runLast: true,
		finish: func(err *apierr.Error) {
			if err != nil {
				e.failPoolLocked(c, p, err)
				return
			}
			p.PB.Status = containerpb.NodePool_RUNNING
		},
	}), nil
}

// failPoolLocked leaves a pool whose creation failed in ERROR, holding no capacity and no nodes
// (a slice is all or nothing).
func (e *Emulator) failPoolLocked(c *cluster, p *rules.NodePool, err *apierr.Error) {
	p.PB.Status, p.PB.StatusMessage = containerpb.NodePool_ERROR, err.Message //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	p.Reserved = false
	name := p.PB.Name
	e.goBackground(func(ctx context.Context) { _ = e.deletePoolNodes(ctx, c, name) })
}

// provisionPools reserves zone capacity for the pools (all or none: a pool that does not fit is a
// GCE_STOCKOUT) and registers their nodes.
func (e *Emulator) provisionPools(ctx context.Context, c *cluster, pools []*rules.NodePool) *apierr.Error {
	e.mu.Lock()
	for _, p := range pools {
		if err := e.checkCapacityLocked(c, p, p.NodeCount); err != nil {
			for _, q := range pools {
				q.Reserved = false
			}
			e.mu.Unlock()
			return err
		}
		p.Reserved = true
	}
	specs := make([]poolNodesSpec, len(pools))
	for i, p := range pools {
		p.PB.InstanceGroupUrls = e.instanceGroupURLs(c, p)
		specs[i] = nodesSpecLocked(c, p)
	}
	e.mu.Unlock()
	for _, s := range specs {
		if err := e.syncPoolNodes(ctx, c, s); err != nil {
			return apierr.New(codes.Internal, "Registering the nodes of node pool %q: %v", s.pool, err)
		}
	}
	return nil
}

func (e *Emulator) deleteNodePool(n resourceName) (*containerpb.Operation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, p, err := e.lookupPoolLocked(n)
	if err != nil {
		return nil, err
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_DELETE_NODE_POOL, n.poolKey(), p.PB.Name)
	if err != nil {
		return nil, err
	}
	p.PB.Status = containerpb.NodePool_STOPPING
	e.persistLocked()
	name := p.PB.Name
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error {
			if err := e.deletePoolNodes(ctx, c, name); err != nil {
				return apierr.New(codes.Internal, "Deleting the nodes of node pool %q: %v", name, err)
			}
			return nil
		},
		finish: func(err *apierr.Error) {
			if err != nil {
				p.PB.Status, p.PB.StatusMessage = containerpb.NodePool_ERROR, err.Message //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
				return
			}
			c.removePool(name)
		},
	}), nil
}

func (e *Emulator) updateNodePool(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.UpdateNodePoolRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c, p, err := e.lookupPoolLocked(n)
	if err != nil {
		return nil, err
	}
	if err := e.clusterReadyLocked(c, p.PB.Name); err != nil {
		return nil, err
	}
	// The updated pool is validated like a new one with the same shape, so version and TPU rules
	// come from one place.
	next := cloneNodePool(p.PB)
	if req.NodeVersion != "" {
		next.Version = req.NodeVersion
	}
	if req.Labels != nil {
		next.Config.Labels = req.Labels.Labels
	}
	if req.Taints != nil {
		next.Config.Taints = req.Taints.Taints
	}
	if req.ResourceLabels != nil {
		next.Config.ResourceLabels = req.ResourceLabels.Labels
	}
	if err := applyNodeConfigUpdate(p, &req, next.Config); err != nil {
		return nil, err
	}
	if len(req.Locations) > 0 {
		return nil, apierr.Invalid("Node pool %q: changing node locations is not supported by the emulator.", p.PB.Name)
	}
	// The pool keeps the initial node count it was created with, which its rules held then.
	checked, err := rules.PlanNodePool(rules.ClusterFacts{Location: c.Location, Locations: p.Zones, MasterVersion: c.PB.CurrentMasterVersion, Channel: c.PB.GetReleaseChannel().GetChannel(),
		Policies: e.policyLookupLocked(c.Project, c.Location)}, cloneNodePool(next))
	if err != nil {
		return nil, err
	}
	next.Version = checked.Pool.PB.Version
	// GKE's reserved labels and its TPU taint stay whatever the update asked, and the boot disk it
	// reports follows the disk (rules.SetReservedLabels, addNodeConfigAnswers).
	next.Config.ResourceLabels = checked.Pool.PB.Config.ResourceLabels
	next.Config.Taints, next.Config.BootDisk = checked.Pool.PB.Config.Taints, checked.Pool.PB.Config.BootDisk
	op, err := e.newOperationLocked(c, containerpb.Operation_UPGRADE_NODES, n.poolKey(), p.PB.Name)
	if err != nil {
		return nil, err
	}
	prev := p.PB.Status
	p.PB.Status = containerpb.NodePool_RECONCILING
	e.persistLocked()
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error {
			e.mu.Lock()
			spec := nodesSpecLocked(c, p)
			spec.applyConfig(next)
			e.mu.Unlock()
			if err := e.syncPoolNodes(ctx, c, spec); err != nil {
				return apierr.New(codes.Internal, "Updating the nodes of node pool %q: %v", p.PB.Name, err)
			}
			return nil
		},
		finish: func(err *apierr.Error) {
			p.PB.Status = restoredStatus(prev, p)
			if err != nil {
				return
			}
			p.PB.Version = next.Version
			p.PB.Config = cloneMsg(next.Config)
			p.PB.Etag = rules.RandomHex(8)
			e.refreshNodeVersionLocked(c)
		},
	}), nil
}

// applyNodeConfigUpdate applies the machine attributes an UpdateNodePoolRequest sets to cfg, the
// pool's configuration to be. GKE changes them in place, in an upgrade that migrates the nodes
// (containerpb UpdateNodePoolRequest: machine_type, disk_type and disk_size_gb each "Initiates an
// upgrade operation that migrates the nodes in the node pool to the specified ..."; GKE "Vertically
// scale your node pools" (node-pools#change-machine-attributes) changes machine type, disk type and
// disk size of an existing pool), and max_run_duration ("The maximum duration for the nodes to
// exist", checked with the flex-start rules as at creation). A zero or empty field leaves its
// attribute as it is. The emulator's nodes keep their names through the migration (INFERRED:
// GKE's new VMs get new names).
func applyNodeConfigUpdate(p *rules.NodePool, req *containerpb.UpdateNodePoolRequest, cfg *containerpb.NodeConfig) *apierr.Error {
	if req.MachineType != "" && req.MachineType != cfg.MachineType {
		if p.Generation != "" {
			// INFERRED: a TPU slice's topology and host count follow from its machine type, so
			// the emulator refuses to migrate one; the provider replaces such a slice.
			return apierr.Invalid("Node pool %q is a TPU slice of %s: its machine type %s cannot be changed in place; create a new node pool.",
				p.PB.Name, cfg.MachineType, p.Topology)
		}
		cfg.MachineType = req.MachineType
	}
	if req.DiskType != "" {
		cfg.DiskType = req.DiskType
	}
	if req.DiskSizeGb != 0 {
		// "The smallest allowed disk size is 10GB." (the field's comment); the message is the
		// emulator's.
		if req.DiskSizeGb < 10 {
			return apierr.Invalid("Node pool %q: disk_size_gb %d is below the smallest allowed disk size, 10GB.", p.PB.Name, req.DiskSizeGb)
		}
		cfg.DiskSizeGb = int32(req.DiskSizeGb)
	}
	if req.MaxRunDuration != nil {
		cfg.MaxRunDuration = cloneMsg(req.MaxRunDuration)
	}
	return nil
}

// restoredStatus is a pool's status after a reconcile: RUNNING unless a host is down.
func restoredStatus(prev containerpb.NodePool_Status, p *rules.NodePool) containerpb.NodePool_Status {
	if len(p.FailedHosts) > 0 {
		return containerpb.NodePool_RUNNING_WITH_ERROR
	}
	if prev == containerpb.NodePool_ERROR {
		return prev
	}
	return containerpb.NodePool_RUNNING
}

// refreshNodeVersionLocked keeps Cluster.currentNodeVersion at the oldest pool version, as GKE does.
func (e *Emulator) refreshNodeVersionLocked(c *cluster) {
	oldest := ""
	for _, p := range c.Pools {
		if oldest == "" || rules.VersionLess(p.PB.Version, oldest) {
			oldest = p.PB.Version
		}
	}
	if oldest != "" {
		c.PB.CurrentNodeVersion = oldest //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}
}

func (e *Emulator) setNodePoolSize(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.SetNodePoolSizeRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c, p, err := e.lookupPoolLocked(n)
	if err != nil {
		return nil, err
	}
	if req.NodeCount < 0 {
		return nil, apierr.Invalid("Node count must not be negative, got %d.", req.NodeCount)
	}
	if err := rules.CheckSetSize(p, req.NodeCount); err != nil {
		return nil, err
	}
	if p.MultiHost && int(req.NodeCount) != p.NodeCount {
		return nil, apierr.Invalid("Node pool %q is a multi-host TPU slice (topology %s, %d hosts); a multi-host TPU slice node pool cannot be resized.",
			p.PB.Name, p.Topology, p.TotalNodes())
	}
	if err := e.clusterReadyLocked(c, p.PB.Name); err != nil {
		return nil, err
	}
	if p.PB.Status != containerpb.NodePool_RUNNING && p.PB.Status != containerpb.NodePool_RUNNING_WITH_ERROR {
		return nil, apierr.New(codes.FailedPrecondition, "Node pool %q is in state %s and cannot be resized.", p.PB.Name, p.PB.Status)
	}
	if grow := int(req.NodeCount) - p.NodeCount; grow > 0 {
		extra := &rules.NodePool{Generation: p.Generation, ChipsPerNode: p.ChipsPerNode, Zones: p.Zones, NodeCount: grow, PB: p.PB}
		if err := e.checkQuotaLocked(c.Project, []*rules.NodePool{extra}); err != nil {
			return nil, err
		}
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_SET_NODE_POOL_SIZE, n.poolKey(), p.PB.Name)
	if err != nil {
		return nil, err
	}
	prev := p.PB.Status
	p.PB.Status = containerpb.NodePool_RECONCILING
	e.persistLocked()
	count := int(req.NodeCount)
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error {
			e.mu.Lock()
			if err := e.checkCapacityLocked(c, p, count); err != nil {
				e.mu.Unlock()
				return err
			}
			p.NodeCount = count
			spec := nodesSpecLocked(c, p)
			e.mu.Unlock()
			if err := e.syncPoolNodes(ctx, c, spec); err != nil {
				return apierr.New(codes.Internal, "Resizing node pool %q: %v", p.PB.Name, err)
			}
			return nil
		},
		finish: func(err *apierr.Error) {
			p.PB.Status = restoredStatus(prev, p)
			p.FailedHosts = keepBelow(p.FailedHosts, p.TotalNodes())
			if len(p.FailedHosts) == 0 && p.PB.Status == containerpb.NodePool_RUNNING_WITH_ERROR {
				p.PB.Status = containerpb.NodePool_RUNNING
			}
		},
	}), nil
}

func keepBelow(xs []int, n int) []int {
	var out []int
	for _, x := range xs {
		if x < n {
			out = append(out, x)
		}
	}
	return out
}
