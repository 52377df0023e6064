package provider

import (
	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// poolHealthy reports a slice whose node pool GKE reports RUNNING with all of its want hosts
// there and Ready. An autoscaled slice is whole with all of its hosts or none: it scales as one
// unit.
func poolHealthy(pool *containerpb.NodePool, hosts []kube.Host, want int) bool {
	present := len(hosts)
	whole := present == want || (present == 0 && pool.GetAutoscaling().GetEnabled())
	return pool.GetStatus() == containerpb.NodePool_RUNNING && whole && readyHosts(hosts) == present
}

func readyHosts(hosts []kube.Host) int {
	ready := 0
	for _, h := range hosts {
		if h.Ready {
			ready++
		}
	}
	return ready
}

// poolHosts is the number of hosts of the slice pool holds: its shape's, or, for a pool whose
// shape cannot be derived, its node count over its zones.
func poolHosts(pool *containerpb.NodePool) int {
	if s, err := nodePoolSlice(pool, nil); err == nil {
		return s.Hosts
	}
	return int(pool.GetInitialNodeCount()) * max(len(pool.GetLocations()), 1)
}
