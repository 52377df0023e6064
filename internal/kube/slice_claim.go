package kube

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

// A slice a worker group runs on is claimed by it: raytpu puts three labels on the slice's nodes
// (its node pool's Kubernetes labels, which GKE updates on running nodes in place and keeps on the
// nodes it adds later: "Update Kubernetes node labels and taints for node pools") and the group's
// node selector asks for them. GKE's TPU webhook replaces a multi-host Pod's affinity with its own
// (kuberay-tpu-webhook main.go, injectPodAffinity) but leaves its node selector alone, so the
// selector holds every group, multi-host or not, to exactly its slices, and no group of any
// RayCluster that raytpu manages selects a slice another group claimed.
const (
	ClaimNamespaceLabel = "raytpu.dev/ray-namespace"
	ClaimClusterLabel   = "raytpu.dev/ray-cluster"
	ClaimGroupLabel     = "raytpu.dev/ray-group"
)

// claimLabels are the claim's keys, in the order messages name them.
var claimLabels = []string{ClaimNamespaceLabel, ClaimClusterLabel, ClaimGroupLabel}

// SliceClaim says which worker group of which RayCluster, or RayService, a slice is for.
type SliceClaim struct {
	// Cluster is the RayCluster's name, or RayServiceClaimer of a RayService's name.
	Namespace, Cluster, Group string
}

// rayServicePrefix marks the claims of a RayService's groups. KubeRay names a RayService's
// RayClusters <service>-<5 random characters>, new ones at each upgrade (ray-operator v1.5.0
// controllers/ray/utils/util.go, GenerateRayClusterName), so its claims name the RayService; the
// dot, which no RayCluster name holds (a DNS-1035 label), keeps them apart from the claims of a
// RayCluster of the same name.
const rayServicePrefix = "rayservice."

// RayServiceClaimer is the Cluster of the claims of RayService name's worker groups (its first
// generation).
func RayServiceClaimer(name string) string { return rayServicePrefix + name }

// RayServiceGenerationClaimer is the Cluster of the claims of generation gen of RayService name's
// worker groups. Each upgrade's new RayCluster selects the slices of the next generation, so that
// it never selects one of the RayCluster it replaces, whose spares are free: KubeRay would place
// its workers there (the node selector is part of what KubeRay hashes, so a new generation is a
// new RayCluster, as an upgrade is).
func RayServiceGenerationClaimer(name string, gen int) string {
	if gen == 0 {
		return RayServiceClaimer(name)
	}
	return fmt.Sprintf("%s%s.%d", rayServicePrefix, name, gen)
}

// RayServiceGeneration is the generation of claimer, a Cluster of RayService name's claims; ok is
// false when it is not one.
func RayServiceGeneration(claimer, name string) (gen int, ok bool) {
	rest, ok := strings.CutPrefix(claimer, RayServiceClaimer(name))
	if !ok {
		return 0, false
	}
	if rest == "" {
		return 0, true
	}
	gen, err := strconv.Atoi(strings.TrimPrefix(rest, "."))
	return gen, err == nil && strings.HasPrefix(rest, ".") && gen > 0
}

// Owner is the RayCluster, or rayservice.<name> of a RayService of any generation, the claim is
// for.
func (c SliceClaim) Owner() string {
	name, ok := strings.CutPrefix(c.Cluster, rayServicePrefix)
	if !ok {
		return c.Cluster
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		if _, ok := RayServiceGeneration(c.Cluster, name[:i]); ok {
			name = name[:i]
		}
	}
	return rayServicePrefix + name
}

func (c SliceClaim) String() string {
	if name, ok := strings.CutPrefix(c.Owner(), rayServicePrefix); ok {
		return fmt.Sprintf("worker group %q of RayService %s/%s", c.Group, c.Namespace, name)
	}
	return fmt.Sprintf("worker group %q of RayCluster %s/%s", c.Group, c.Namespace, c.Cluster)
}

// Labels are the node labels of the claim.
func (c SliceClaim) Labels() map[string]string {
	return map[string]string{ClaimNamespaceLabel: c.Namespace, ClaimClusterLabel: c.Cluster, ClaimGroupLabel: c.Group}
}

// SameRayCluster reports whether o is a group of the same RayCluster, or of the same RayService
// whatever its generation.
func (c SliceClaim) SameRayCluster(o SliceClaim) bool {
	return c.Namespace == o.Namespace && c.Owner() == o.Owner()
}

// ClaimOf reads the claim of a slice from its node labels; ok is false when it has none.
func ClaimOf(labels map[string]string) (c SliceClaim, ok bool) {
	c = SliceClaim{Namespace: labels[ClaimNamespaceLabel], Cluster: labels[ClaimClusterLabel], Group: labels[ClaimGroupLabel]}
	return c, c != SliceClaim{}
}

// WithClaim returns labels with the claim set, replacing any other; a nil claim removes it.
func WithClaim(labels map[string]string, c *SliceClaim) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range claimLabels {
		delete(out, k)
	}
	if c != nil {
		maps.Copy(out, c.Labels())
	}
	return out
}

// IsClaimLabel reports whether a label key is one raytpu keeps for its claims (raytpu.dev/ray-*).
func IsClaimLabel(key string) bool {
	return strings.HasPrefix(key, "raytpu.dev/ray-")
}

// RayServiceClaimerOf is the Cluster of the claims the worker groups of rs select: the claimer of
// its generation.
func RayServiceClaimerOf(rs *rayv1.RayService) string {
	for _, g := range rs.Spec.RayClusterSpec.WorkerGroupSpecs {
		if c := g.Template.Spec.NodeSelector[ClaimClusterLabel]; c != "" {
			if _, ok := RayServiceGeneration(c, rs.Name); ok {
				return c
			}
		}
	}
	return RayServiceClaimer(rs.Name)
}
