package emulator

import (
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// The RPCs that set a maintenance policy or a node pool's autoscaling: each applies package rules' checks to the emulator's state.

// setMaintenancePolicy serves SetMaintenancePolicy. The request must carry the policy's current
// resource version ("Make a get() request to the cluster to get the current resource version and
// include it with requests to set the policy", containerpb MaintenancePolicy.resource_version). A
// stale one is a read-modify-write conflict: 409 ABORTED, as Google's API design guide assigns
// ("Concurrency conflict, such as read-modify-write conflict", cloud.google.com/apis/design/errors);
// GKE's own text for it was not found.
func (e *Emulator) setMaintenancePolicy(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.SetMaintenancePolicyRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if req.MaintenancePolicy == nil {
		return nil, apierr.Invalid("Maintenance policy is required.")
	}
	return e.reconcileCluster(n, func(c *cluster) (func(), containerpb.Operation_Type, *apierr.Error) {
		current := c.PB.GetMaintenancePolicy()
		if got, want := req.MaintenancePolicy.GetResourceVersion(), current.GetResourceVersion(); got != want {
			return nil, 0, apierr.New(codes.Aborted, "Maintenance policy resource version %q does not match the cluster's current "+
				"version %q: the policy changed since it was read. Read the cluster again and resend.", got, want)
		}
		if err := rules.CheckMaintenancePolicy(req.MaintenancePolicy, rules.InReleaseChannel(c.PB), time.Now()); err != nil {
			return nil, 0, err
		}
		policy := rules.StoredMaintenancePolicy(req.MaintenancePolicy)
		return func() { c.PB.MaintenancePolicy = policy }, containerpb.Operation_UPDATE_CLUSTER, nil
	})
}

// setNodePoolAutoscaling serves POST .../nodePools/{np}:setAutoscaling
// (ClusterManager.SetNodePoolAutoscaling): the pool's autoscaling is replaced once the operation
// is done, checked first by the same rules as a new pool's. The operation is UPGRADE_NODES ("most
// forms of updates to node pools", containerpb Operation.Type), as for the emulator's other node
// pool updates (setNodePoolField); the type GKE reports for this call was not found.
func (e *Emulator) setNodePoolAutoscaling(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.SetNodePoolAutoscalingRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if req.Autoscaling == nil {
		return nil, apierr.Invalid("Autoscaling is required.")
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
	autoscaling, err := e.planAutoscalingLocked(c, p, req.Autoscaling)
	if err != nil {
		return nil, err
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_UPGRADE_NODES, n.poolKey(), p.PB.Name)
	if err != nil {
		return nil, err
	}
	prev := p.PB.Status
	p.PB.Status = containerpb.NodePool_RECONCILING
	e.persistLocked()
	return e.startOperation(op, opWork{
		finish: func(err *apierr.Error) {
			p.PB.Status = restoredStatus(prev, p)
			if err == nil {
				p.PB.Autoscaling = autoscaling
				p.PB.Etag = rules.RandomHex(8)
			}
		},
	}), nil
}

// checkDesiredNodePoolAutoscaling checks ClusterUpdate.desired_node_pool_autoscaling (UpdateCluster
// with desired_node_pool_id) by the same rules, and replaces it with what GKE reports.
func (e *Emulator) checkDesiredNodePoolAutoscaling(c *cluster, u *containerpb.ClusterUpdate) *apierr.Error {
	if u.GetDesiredNodePoolAutoscaling() == nil {
		return nil
	}
	p := c.pool(u.DesiredNodePoolId)
	if p == nil {
		return nil // applyClusterUpdate answers for a missing pool
	}
	a, err := e.planAutoscalingLocked(c, p, u.DesiredNodePoolAutoscaling)
	if err != nil {
		return err
	}
	u.DesiredNodePoolAutoscaling = a
	return nil
}

// planAutoscalingLocked validates pool p of cluster c with autoscaling a in place of its own,
// by every node pool rule (queued provisioning and flex-start need autoscaling, a multi-host
// slice a valid maximum), and returns a as GKE reports it.
func (e *Emulator) planAutoscalingLocked(c *cluster, p *rules.NodePool, a *containerpb.NodePoolAutoscaling) (*containerpb.NodePoolAutoscaling, *apierr.Error) {
	check := cloneNodePool(p.PB)
	check.Autoscaling = cloneMsg(a)
	plan, err := rules.PlanNodePool(e.clusterFactsLocked(c, p.Zones), check)
	if err != nil {
		return nil, err
	}
	return plan.Pool.PB.Autoscaling, nil
}

// clusterFactsLocked is what node pool validation needs to know of cluster c, for a pool in zones.
func (e *Emulator) clusterFactsLocked(c *cluster, zones []string) rules.ClusterFacts {
	return rules.ClusterFacts{
		Location: c.Location, Locations: zones, MasterVersion: c.PB.CurrentMasterVersion, Channel: c.PB.GetReleaseChannel().GetChannel(),
		Policies: e.policyLookupLocked(c.Project, c.Location),
	}
}
