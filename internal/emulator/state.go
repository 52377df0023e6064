package emulator

import (
	"context"
	"sort"
	"sync"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// state is everything the emulated GKE knows. It is guarded by Emulator.mu.
type state struct {
	clusters map[string]*cluster   // by projects/{p}/locations/{l}/clusters/{c}
	ops      map[string]*operation // by projects/{p}/locations/{l}/operations/{id}
	opOrder  []string
	// Compute Engine: resource policies by projects/{p}/regions/{r}/resourcePolicies/{name} and
	// operations by projects/{p}/{zones|regions}/{z|r}/operations/{name}.
	policies     map[string]*resourcePolicy
	computeOps   map[string]*computeOperation
	computeOrder []string
}

func newState() *state {
	return &state{clusters: map[string]*cluster{}, ops: map[string]*operation{},
		policies: map[string]*resourcePolicy{}, computeOps: map[string]*computeOperation{}}
}

func (s *state) allClusters() []*cluster {
	out := make([]*cluster, 0, len(s.clusters))
	for _, c := range s.clusters {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// cluster is one GKE cluster and its kube-apiserver.
type cluster struct {
	Key      string
	Project  string
	Location string
	// UID names the cluster's folder and etcd prefix, so that a cluster re-created under the same
	// name starts from an empty store.
	UID string
	// PB is the cluster as GKE reports it, without NodePools (those live in Pools).
	PB    *containerpb.Cluster
	Pools []*rules.NodePool
	// APIPort is the kube-apiserver port, kept across restarts when it is free.
	APIPort int
	// RayCRDs records whether the KubeRay CRDs have been created in the cluster.
	RayCRDs bool

	dir     string
	running map[string]*operation

	// k8s is the cluster's Kubernetes side, with its own lock.
	k8s clusterKube

	// rayTarget is the state of the KubeRay CRDs the last add-on change asked for.
	rayTarget bool
	// rayGen increases with every add-on change, so a delayed CRD install that was overtaken by a
	// later change does nothing.
	rayGen int
	// rayMu serialises the add-on's installs and removals: a removal still stopping the Ray stack
	// must not delete the CRDs that a later install has just created.
	rayMu sync.Mutex
}

func (c *cluster) pool(name string) *rules.NodePool {
	for _, p := range c.Pools {
		if p.PB.Name == name {
			return p
		}
	}
	return nil
}

func (c *cluster) removePool(name string) {
	for i, p := range c.Pools {
		if p.PB.Name == name {
			c.Pools = append(c.Pools[:i], c.Pools[i+1:]...)
			return
		}
	}
}

// view is the cluster as the API returns it: a copy with its node pools.
func (c *cluster) view() *containerpb.Cluster {
	out := cloneCluster(c.PB)
	for _, p := range c.Pools {
		out.NodePools = append(out.NodePools, cloneNodePool(p.PB))
	}
	return out
}

func (c *cluster) rayEnabled() bool {
	return c.PB.GetAddonsConfig().GetRayOperatorConfig().GetEnabled()
}

func (c *cluster) stopAPIServer() {
	// The components that talk to the kube-apiserver go first.
	c.stopRuntime()
	api, proxy := c.k8s.detach()
	api.Stop()
	if proxy != nil {
		proxy.Close()
	}
}

func (c *cluster) clients() (kubernetes.Interface, dynamic.Interface) { return c.k8s.clients() }

// operation is one GKE operation.
type operation struct {
	Key        string
	Project    string
	Location   string
	ClusterKey string
	// Pool is the node pool a node pool operation acts on; empty for a cluster-level operation.
	Pool string
	PB   *containerpb.Operation

	cancel context.CancelFunc
	// fail is set when a fault makes this operation end with an error.
	fail *apierr.Error
}

func (o *operation) done() bool { return o.PB.Status == containerpb.Operation_DONE }

// resourceName splits projects/{p}/locations/{l}/... into its parts.
type resourceName struct {
	Project, Location, Cluster, NodePool, Operation string
}

func (n resourceName) parent() string { return "projects/" + n.Project + "/locations/" + n.Location }

func (n resourceName) clusterKey() string { return n.parent() + "/clusters/" + n.Cluster }

func (n resourceName) poolKey() string { return n.clusterKey() + "/nodePools/" + n.NodePool }

func (n resourceName) opKey() string { return n.parent() + "/operations/" + n.Operation }
