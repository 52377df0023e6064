package nodeagent

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// Node auto-provisioning for Pods that select a custom ComputeClass (node selector
// cloud.google.com/compute-class): the class's priorities are tried in order, a priority whose
// pool failed to come up (a stockout) in backoff as a shape is, and the Pods get a pool of the
// first one left, labelled and tainted for the class (GKE's rules and their sources in
// rules/computeclass.go). A class with every priority in backoff leaves its Pods pending with
// the cluster autoscaler's backoff event.
//
// INFERRED: GKE waits longer on a TPU priority before it moves on than on other machines
// ("the exception being TPUs and Flex Start", GKE's "Troubleshoot custom ComputeClass issues" as
// dev.to/zingboum quotes it, with no duration); the emulator moves on as soon as the pool's
// creation failed. GKE adds the class's toleration to the Pods that select it at admission; the
// emulated cluster has no such admission, so a Pod that selects a class carries the toleration
// itself.

// classLookup is a ComputeClass read once per NAP round.
type classLookup struct {
	class *rules.ComputeClass
	err   error
}

// classChoice is the priority of a class NAP tries for a Pod.
type classChoice struct {
	name     string
	index    int
	priority rules.ClassPriority
	shape    rules.NAPShape
}

func newNAPDemand(shape rules.NAPShape, c *classChoice) *napDemand {
	d := &napDemand{shape: shape}
	if c != nil {
		d.class, d.index, d.priority = c.name, c.index, &c.priority
	}
	return d
}

// key is the key of the pools that serve the demand: its shape's, and its class's.
func (d *napDemand) key() string {
	if d.priority == nil {
		return d.shape.Key()
	}
	return ClassShapeKey(d.shape.Key(), d.class)
}

// backoffKey is what a failed pool of the demand puts in backoff: its shape, or its class's rule.
func (d *napDemand) backoffKey() string {
	if d.priority == nil {
		return d.shape.Key()
	}
	return classRuleKey(d.class, d.index)
}

// describe is the class and rule of the demand, for the log.
func (d *napDemand) describe() string {
	if d.priority == nil {
		return ""
	}
	return fmt.Sprintf(", ComputeClass %s priority %d, %s", d.class, d.index+1, d.priority.Capacity())
}

// ClassShapeKey keys the pools of a shape labelled for a ComputeClass: the PoolSnapshot.Shape
// of such a pool.
func ClassShapeKey(shape, class string) string { return shape + "@" + class }

func classRuleKey(class string, index int) string {
	return "class/" + class + "/" + strconv.Itoa(index)
}

// classPriority picks the priority of class name NAP tries for Pod p, or says why it tries none.
func (a *Agent) classPriority(ctx context.Context, seen map[string]*classLookup, name string, p *corev1.Pod, cl ClusterSnapshot) (*classChoice, string) {
	l := seen[name]
	if l == nil {
		l = &classLookup{}
		l.class, l.err = a.computeClass(ctx, name)
		seen[name] = l
	}
	switch {
	case rules.VersionLess(cl.Version, rules.ComputeClassMinVersion):
		return nil, fmt.Sprintf("custom ComputeClasses need GKE %s or later, the cluster runs %s", rules.ComputeClassMinVersion, cl.Version)
	case l.err != nil:
		return nil, fmt.Sprintf("reading ComputeClass %q: %v", name, l.err)
	case l.class == nil:
		return nil, fmt.Sprintf("ComputeClass %q not found", name)
	case !cl.NAP && !l.class.AutoCreates(cl.Version):
		return nil, fmt.Sprintf("ComputeClass %q does not create node pools (nodePoolAutoCreation.enabled, GKE %s or later) and node auto-provisioning is off",
			name, rules.ComputeClassAutoCreationMinVersion)
	}
	chips := int(a.cfg.TPUChips(p.Spec.Containers...))
	backedOff := 0
	for i, pr := range l.class.Spec.Priorities {
		shape, why := rules.ClassShape(pr)
		if why != "" || !selectorAllows(p, shape) || chips > shape.Chips {
			continue
		}
		if until, ok := a.napBackoff[classRuleKey(name, i)]; ok && until.After(time.Now()) {
			backedOff++
			continue
		}
		return &classChoice{name: name, index: i, priority: pr, shape: shape}, ""
	}
	if backedOff > 0 {
		return nil, "1 in backoff after failed scale-up"
	}
	return nil, fmt.Sprintf("no priority of ComputeClass %q is a TPU slice the Pod fits", name)
}

// selectorAllows says whether the Pod's own TPU node selectors, if it has them, match the shape.
func selectorAllows(p *corev1.Pod, s rules.NAPShape) bool {
	sel := p.Spec.NodeSelector
	if v := sel[gketpu.LabelAccelerator]; v != "" && v != s.Accelerator {
		return false
	}
	if v := sel[gketpu.LabelTopology]; v != "" && v != s.Topology {
		return false
	}
	return true
}

// computeClass reads a ComputeClass from the cluster; nil when there is none of that name.
func (a *Agent) computeClass(ctx context.Context, name string) (*rules.ComputeClass, error) {
	b, err := a.cfg.Kube.Discovery().RESTClient().Get().AbsPath("/apis/cloud.google.com/v1/computeclasses", name).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rules.ParseComputeClass(b)
}
