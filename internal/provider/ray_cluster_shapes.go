package provider

import (
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// shapedGroup is a worker group whose shape is known: from its slices (pools set) or, with no
// pools, the shape node auto-provisioning is to create.
type shapedGroup struct {
	index int
	name  string
	slice *tpu.Slice
	pools []string
}

// checkShapesApart refuses a multi-host auto-provisioned group whose node labels are those of a
// slice of another group. Nothing would keep its workers off that slice: GKE's TPU webhook sets
// the affinity of a multi-host worker to its own pod (anti-)affinity, replacing the node affinity
// that keeps the group off the other groups' slices (ai-on-gke/kuberay-tpu-webhook main.go,
// injectPodAffinity: a JSON patch "add" of /spec/affinity). The scheduler may then start the
// group's workers on that slice (a single-host v6e-8 is labelled 2x4, like a v6e 2x4 of two
// 4-chip hosts) and leave the slice's own workers, held to their pool, waiting for ever.
// Single-host groups keep their affinity, so they may share labels.
func checkShapesApart(groups []shapedGroup, diags *diag.Diagnostics) {
	for _, g := range groups {
		if len(g.pools) > 0 || !g.slice.MultiHost {
			continue
		}
		for _, other := range groups {
			if len(other.pools) == 0 || !maps.Equal(g.slice.NodeSelector(), other.slice.NodeSelector()) {
				continue
			}
			diags.AddAttributeError(path.Root("worker_groups").AtListIndex(g.index), "Worker Group Shape Matches A Slice",
				fmt.Sprintf("worker group %q asks node auto-provisioning for %s %s, whose nodes carry the labels of slice %s of worker group %q "+
					"(%s=%s, %s=%s). GKE's TPU webhook replaces the node affinity of a multi-host group's Pods, so nothing keeps %q off that "+
					"slice and the two groups could wait on each other for ever. Give %q a topology no slice of this RayCluster has, or a raytpu_slice of its own.",
					g.name, g.slice.Generation.Name, g.slice.Topology, other.pools[0], other.name,
					tpu.LabelAccelerator, g.slice.Generation.GKEAccelerator, tpu.LabelTopology, g.slice.Topology,
					g.name, g.name))
			break
		}
	}
}
