package emulator

import (
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
)

// checkCapacityLocked reports a GCE_STOCKOUT when a zone of pool p has fewer free chips of its
// generation than count nodes per zone need. Chips the pool already holds count as free for it.
func (e *Emulator) checkCapacityLocked(c *cluster, p *nodePool, count int) *apiError {
	if p.Generation == "" {
		return nil
	}
	for _, z := range p.Zones {
		limit := e.ctl.limit(e.ctl.capacity, z, p.Generation)
		if limit < 0 {
			continue
		}
		used := 0
		for _, oc := range e.st.clusters {
			for _, op := range oc.Pools {
				if op != p && op.Reserved && op.Generation == p.Generation && contains(op.Zones, z) {
					used += op.ChipsPerNode * op.NodeCount
				}
			}
		}
		if used+count*p.ChipsPerNode > limit {
			return &apiError{
				HTTPStatus: 429, Code: codes.ResourceExhausted, Reason: containerpb.StatusCondition_GCE_STOCKOUT.String(),
				Message: fmt.Sprintf("Google Compute Engine: The zone 'projects/%s/zones/%s' does not have enough resources "+
					"available to fulfill the request. Try a different zone, or try again later. (node pool %q needs %d %s "+
					"chips, %d of %d are free)", c.Project, z, p.PB.Name, count*p.ChipsPerNode, p.Generation, max(limit-used, 0), limit),
			}
		}
	}
	return nil
}

// checkQuotaLocked refuses, with RESOURCE_EXHAUSTED, pools that would take a project over its TPU
// chip quota for a generation. Pools in ERROR hold no chips.
func (e *Emulator) checkQuotaLocked(project string, pools []*nodePool) *apiError {
	want := map[string]int{}
	for _, p := range pools {
		if p.Generation != "" {
			want[p.Generation] += p.chips()
		}
	}
	for gen, n := range want {
		limit := e.ctl.limit(e.ctl.quota, project, gen)
		if limit < 0 {
			continue
		}
		used := 0
		for _, c := range e.st.clusters {
			if c.Project != project {
				continue
			}
			for _, p := range c.Pools {
				if p.Generation == gen && p.PB.Status != containerpb.NodePool_ERROR {
					used += p.chips()
				}
			}
		}
		if used+n > limit {
			return &apiError{
				HTTPStatus: 429, Code: codes.ResourceExhausted, Reason: containerpb.StatusCondition_GCE_QUOTA_EXCEEDED.String(),
				Message: fmt.Sprintf("Insufficient quota to satisfy the request: Quota '%s' exceeded. Limit: %d in project %s "+
					"(in use: %d, requested: %d).", quotaName(gen), limit, project, used, n),
			}
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
