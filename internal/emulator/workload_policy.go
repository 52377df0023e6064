package emulator

import (
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// policyLookupLocked is the lookup for a cluster's node pools. It reads a copy of the policies, so
// that validation may run without the lock.
func (e *Emulator) policyLookupLocked(project, location string) rules.PolicyLookup {
	region := rules.ZoneRegion(location)
	ready := map[string]*rules.ResourcePolicy{}
	for k, p := range e.st.policies {
		if p.Ready && p.Project == project && p.Region == region {
			rp := &rules.ResourcePolicy{}
			if wp := p.PB.WorkloadPolicy; wp != nil {
				rp.WorkloadPolicy, rp.AcceleratorTopology = true, wp.AcceleratorTopology
			}
			ready[k] = rp
		}
	}
	return func(name string) (*rules.ResourcePolicy, string) {
		key, ok := policyKey(name, project, region)
		if !ok {
			return nil, ""
		}
		return ready[key], key
	}
}
