package provider

import (
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// plannedSlices are the slices that the Ray resources planned by one provider instance (one
// Terraform plan or apply) list, with the worker group that lists each. Claims on the node pools
// only show what an earlier apply did: two resources of one configuration listing the same slice
// would both pass them and race at apply, so the second to plan is refused.
type plannedSlices struct {
	mu sync.Mutex
	by map[gke.NodePoolID]kube.SliceClaim
}

// claim records that claim's group lists slice id, and returns the other RayCluster's or
// RayService's group that listed it first, if any; groups of one RayCluster or RayService are
// checked against each other by checkShapesApart.
func (p *plannedSlices) claim(id gke.NodePoolID, claim kube.SliceClaim) (kube.SliceClaim, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if held, ok := p.by[id]; ok && !held.SameRayCluster(claim) {
		return held, true
	}
	if p.by == nil {
		p.by = map[gke.NodePoolID]kube.SliceClaim{}
	}
	p.by[id] = claim
	return kube.SliceClaim{}, false
}

// checkPlannedApart refuses the slices (ids) of want's group that another RayCluster's or
// RayService's group of the same run lists too.
func (b *resourceBase) checkPlannedApart(want kube.SliceClaim, ids []string, p path.Path, diags *diag.Diagnostics) {
	if b.data == nil {
		return
	}
	for k, s := range ids {
		id, err := gke.ParseNodePoolID(s)
		if err != nil {
			continue // ValidateConfig's to report
		}
		if other, ok := b.data.planned.claim(id, want); ok {
			diags.AddAttributeError(p.AtListIndex(k), "Slice Listed By Two Worker Groups",
				fmt.Sprintf("worker group %q cannot run on slice %s: %s lists it too, in the same configuration. A slice runs the replicas "+
					"of one worker group: list it in one of them, and give the other a slice of its own.", want.Group, id.Name, other))
		}
	}
}
