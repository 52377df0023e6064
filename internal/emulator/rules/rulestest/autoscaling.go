package rulestest

import "cloud.google.com/go/container/apiv1/containerpb"

// Autoscaling is a Cluster.autoscaling with node auto-provisioning on or off and resource limits ls.
func Autoscaling(enabled bool, ls ...*containerpb.ResourceLimit) *containerpb.ClusterAutoscaling {
	return &containerpb.ClusterAutoscaling{EnableNodeAutoprovisioning: enabled, ResourceLimits: ls}
}

// Limit is a resource limit of type typ from minimum to maximum.
func Limit(typ string, minimum, maximum int64) *containerpb.ResourceLimit {
	return &containerpb.ResourceLimit{ResourceType: typ, Minimum: minimum, Maximum: maximum}
}
