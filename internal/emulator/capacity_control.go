package emulator

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// PoolScale asks the emulator to do what GKE's cluster autoscaler does for an autoscaled node pool,
// or a fulfilled ProvisioningRequest for a queued one: bring the pool to Nodes nodes per zone.
type PoolScale struct {
	// Cluster is the full name projects/{p}/locations/{l}/clusters/{c}.
	Cluster  string `json:"cluster"`
	NodePool string `json:"nodePool"`
	Nodes    int    `json:"nodes"`
}

// CreateReservation implements Controller.
func (e *Emulator) CreateReservation(_ context.Context, r Reservation) error {
	if r.MachineType != "" {
		m, ok := gketpu.LookupMachineType(r.MachineType)
		if !ok {
			return fmt.Errorf("reservation %s: %q is not a TPU machine type", r.Name, r.MachineType)
		}
		if r.Chips%m.ChipsPerVM != 0 {
			return fmt.Errorf("reservation %s: %d chips are not a whole number of %s VMs (%d chips each)", r.Name, r.Chips, m.Name, m.ChipsPerVM)
		}
		if r.Generation == "" {
			r.Generation = m.Generation.Name
		}
		if g, err := gketpu.LookupGeneration(r.Generation); err != nil || g != m.Generation {
			return fmt.Errorf("reservation %s: machine type %s is TPU %s, not %s", r.Name, m.Name, m.Generation.Name, r.Generation)
		}
	}
	g, err := gketpu.LookupGeneration(r.Generation)
	if err != nil {
		return err
	}
	if r.Project == "" || r.Name == "" || !rules.IsZone(r.Zone) || r.Chips < 0 {
		return fmt.Errorf("a reservation needs a project, a name, a zone (like us-central2-b) and chips >= 0: %+v", r)
	}
	r.Generation = g.Name
	e.capacity.addReservation(r)
	return nil
}

// ScalePool implements Controller. Autoscaling scales a multi-host TPU slice as one unit, to zero
// or to all of its hosts: GKE "treats all interconnected nodes as a single unit ... scales the
// entire node group to 0 and creates new nodes" (GKE "About TPUs in GKE"); the nodes need capacity
// of the pool's kind (a stockout otherwise) and are registered Ready, as for a creation.
func (e *Emulator) ScalePool(ctx context.Context, s PoolScale) error {
	e.mu.Lock()
	c := e.st.clusters[s.Cluster]
	var p *rules.NodePool
	if c != nil {
		p = c.pool(s.NodePool)
	}
	switch {
	case p == nil:
		e.mu.Unlock()
		return fmt.Errorf("no node pool %s in cluster %s", s.NodePool, s.Cluster)
	case !p.PB.GetAutoscaling().GetEnabled() && !p.PB.GetQueuedProvisioning().GetEnabled():
		e.mu.Unlock()
		return fmt.Errorf("node pool %s neither autoscales nor queues: the autoscaler does not scale it", s.NodePool)
	case p.MultiHost && s.Nodes != 0 && s.Nodes != p.SliceHosts():
		e.mu.Unlock()
		return fmt.Errorf("node pool %s is a multi-host slice of %d hosts: it scales to 0 or %d, not %d", s.NodePool, p.SliceHosts(), p.SliceHosts(), s.Nodes)
	case p.PB.Status != containerpb.NodePool_RUNNING && p.PB.Status != containerpb.NodePool_RUNNING_WITH_ERROR:
		e.mu.Unlock()
		return fmt.Errorf("node pool %s is %s", s.NodePool, p.PB.Status)
	}
	if err := e.checkCapacityLocked(c, p, s.Nodes); err != nil {
		e.mu.Unlock()
		return fmt.Errorf("%s", err.Message)
	}
	p.NodeCount, p.Reserved = s.Nodes, s.Nodes > 0
	p.FailedHosts = keepBelow(p.FailedHosts, p.TotalNodes())
	spec := nodesSpecLocked(c, p)
	e.persistLocked()
	e.mu.Unlock()
	return e.syncPoolNodes(ctx, c, spec)
}
