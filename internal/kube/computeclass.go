package kube

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GKE's custom ComputeClass (cloud.google.com/v1, cluster-scoped): an ordered list of node
// configurations node auto-provisioning tries for the Pods that select the class with the node
// selector ComputeClassLabel (GKE docs, "About custom compute classes"; the fields are those of
// GKE's "ComputeClass CRD reference").

// ComputeClassLabel is the node selector, node label and taint key of a ComputeClass.
const ComputeClassLabel = "cloud.google.com/compute-class"

var computeClassGVR = schema.GroupVersionResource{Group: "cloud.google.com", Version: "v1", Resource: "computeclasses"}

// ErrComputeClassNotFound is wrapped by the errors of a ComputeClass the cluster does not have.
var ErrComputeClassNotFound = errors.New("ComputeClass not found")

// ComputeClass is the part of a ComputeClass raytpu manages.
type ComputeClass struct {
	Name       string
	Priorities []ComputeClassPriority
	// WhenUnsatisfiable is ScaleUpAnyway or DoNotScaleUp.
	WhenUnsatisfiable string
	// AutoCreation is spec.nodePoolAutoCreation.enabled.
	AutoCreation bool
}

// ComputeClassPriority is one TPU rule of spec.priorities and its capacity: a specific
// reservation, flex-start, Spot, or on demand when none of them.
type ComputeClassPriority struct {
	// TPUType is the accelerator (tpu.type, the gke-tpu-accelerator label), Chips the chips of
	// each node (tpu.count), Topology the slice's (tpu.topology).
	TPUType     string
	Chips       int
	Topology    string
	MachineType string

	Spot bool
	// Reservation, with ReservationProject and ReservationBlock, is reservations.specific[0]
	// with affinity Specific.
	Reservation, ReservationProject, ReservationBlock string
	FlexStart                                         bool
	// NodeRecyclingLeadTimeSeconds is flexStart.nodeRecycling.leadTimeSeconds, 0 for none.
	NodeRecyclingLeadTimeSeconds int64
	// MaxRunDurationSeconds is maxRunDurationSeconds, 0 for none.
	MaxRunDurationSeconds int64
}

func (p ComputeClassPriority) object() map[string]any {
	o := map[string]any{
		"machineType": p.MachineType,
		"tpu":         map[string]any{"type": p.TPUType, "count": int64(p.Chips), "topology": p.Topology},
	}
	switch {
	case p.Reservation != "":
		r := map[string]any{"name": p.Reservation}
		if p.ReservationProject != "" {
			r["project"] = p.ReservationProject
		}
		if p.ReservationBlock != "" {
			r["reservationBlock"] = map[string]any{"name": p.ReservationBlock}
		}
		o["reservations"] = map[string]any{"affinity": "Specific", "specific": []any{r}}
	case p.FlexStart:
		f := map[string]any{"enabled": true}
		if p.NodeRecyclingLeadTimeSeconds > 0 {
			f["nodeRecycling"] = map[string]any{"leadTimeSeconds": p.NodeRecyclingLeadTimeSeconds}
		}
		o["flexStart"] = f
	default:
		o["spot"] = p.Spot
	}
	if p.MaxRunDurationSeconds > 0 {
		o["maxRunDurationSeconds"] = p.MaxRunDurationSeconds
	}
	return o
}

// ApplyComputeClass creates or updates the class by server-side apply as FieldManager, taking
// over fields another manager changed.
func (c *Client) ApplyComputeClass(ctx context.Context, cc ComputeClass) error {
	ps := make([]any, len(cc.Priorities))
	for i, p := range cc.Priorities {
		ps[i] = p.object()
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass",
		"metadata": map[string]any{"name": cc.Name, "labels": map[string]any{"app.kubernetes.io/managed-by": FieldManager}},
		"spec": map[string]any{
			"priorities":           ps,
			"nodePoolAutoCreation": map[string]any{"enabled": cc.AutoCreation},
			"whenUnsatisfiable":    cc.WhenUnsatisfiable,
		},
	}}
	if _, err := c.dynamic.Resource(computeClassGVR).Apply(ctx, cc.Name, u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return c.explain(fmt.Errorf("kube: applying ComputeClass %s: %w", cc.Name, err))
	}
	return nil
}

// GetComputeClass reads a class back; a missing one gives an error wrapping
// ErrComputeClassNotFound.
func (c *Client) GetComputeClass(ctx context.Context, name string) (ComputeClass, error) {
	u, err := c.dynamic.Resource(computeClassGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ComputeClass{}, fmt.Errorf("kube: ComputeClass %s: %w", name, ErrComputeClassNotFound)
	}
	if err != nil {
		return ComputeClass{}, c.explain(fmt.Errorf("kube: reading ComputeClass %s: %w", name, err))
	}
	cc := ComputeClass{Name: name}
	cc.WhenUnsatisfiable, _, _ = unstructured.NestedString(u.Object, "spec", "whenUnsatisfiable")
	cc.AutoCreation, _, _ = unstructured.NestedBool(u.Object, "spec", "nodePoolAutoCreation", "enabled")
	items, _, _ := unstructured.NestedSlice(u.Object, "spec", "priorities")
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		cc.Priorities = append(cc.Priorities, priorityOf(m))
	}
	return cc, nil
}

func priorityOf(m map[string]any) ComputeClassPriority {
	var p ComputeClassPriority
	p.MachineType, _, _ = unstructured.NestedString(m, "machineType")
	p.TPUType, _, _ = unstructured.NestedString(m, "tpu", "type")
	p.Topology, _, _ = unstructured.NestedString(m, "tpu", "topology")
	count, _, _ := unstructured.NestedInt64(m, "tpu", "count")
	p.Chips = int(count)
	p.Spot, _, _ = unstructured.NestedBool(m, "spot")
	p.FlexStart, _, _ = unstructured.NestedBool(m, "flexStart", "enabled")
	p.NodeRecyclingLeadTimeSeconds, _, _ = unstructured.NestedInt64(m, "flexStart", "nodeRecycling", "leadTimeSeconds")
	p.MaxRunDurationSeconds, _, _ = unstructured.NestedInt64(m, "maxRunDurationSeconds")
	if affinity, _, _ := unstructured.NestedString(m, "reservations", "affinity"); affinity == "Specific" {
		if rs, _, _ := unstructured.NestedSlice(m, "reservations", "specific"); len(rs) > 0 {
			if r, ok := rs[0].(map[string]any); ok {
				p.Reservation, _, _ = unstructured.NestedString(r, "name")
				p.ReservationProject, _, _ = unstructured.NestedString(r, "project")
				p.ReservationBlock, _, _ = unstructured.NestedString(r, "reservationBlock", "name")
			}
		}
	}
	return p
}

// DeleteComputeClass deletes a class; one already gone is no error.
func (c *Client) DeleteComputeClass(ctx context.Context, name string) error {
	err := c.dynamic.Resource(computeClassGVR).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return c.explain(fmt.Errorf("kube: deleting ComputeClass %s: %w", name, err))
	}
	return nil
}
