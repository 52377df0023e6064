package rules

import (
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Custom ComputeClasses (cloud.google.com/v1 ComputeClass, cluster-scoped): what node pool a
// priority of a class asks node auto-provisioning for. The loop that tries them in order is
// package nodeagent's.
//
// Sources:
//   - GKE docs, "About custom compute classes": available "in version 1.30.3-gke.1451000 and
//     later"; "If the most preferred configuration is unavailable, GKE automatically chooses the
//     next configuration in the hierarchy"; a Pod selects a class with the node selector
//     cloud.google.com/compute-class; node pools associated with a class carry the node label
//     cloud.google.com/compute-class=CLASS and the taint cloud.google.com/compute-class=CLASS:
//     NoSchedule, which GKE sets itself on the pools it creates for the class.
//   - The CRD's fields (GKE's ComputeClass CRD reference, as google/skills
//     gke-compute-classes/SKILL.md reproduces it): spec.priorities[] with tpu {type, count,
//     topology}, spot, reservations {affinity: Specific | AnyBestEffort | None, specific[]
//     {name, project, reservationBlock {name}}}, flexStart {enabled, nodeRecycling
//     {leadTimeSeconds}}, maxRunDurationSeconds; spec.nodePoolAutoCreation.enabled;
//     spec.whenUnsatisfiable ScaleUpAnyway | DoNotScaleUp. Google's v6e class
//     (GoogleCloudPlatform/accelerated-platforms@8bb167bd platforms/gke/base/core/
//     custom_compute_class/manifests/ccc/tpu/v6e/custom-compute-tpu-v6e-2x4.yaml) orders a
//     specific reservation, on-demand (spot: false), flex-start for 7 days then 1 day
//     (maxRunDurationSeconds 604800, 86400; leadTimeSeconds 3600), then Spot, with tpu
//     {count: 8, topology: 2x4, type: tpu-v6e-slice}.
//   - nodePoolAutoCreation.enabled in a class creates pools for it from GKE
//     1.33.3-gke.1136000, without cluster-level node auto-provisioning (google/skills, above).
//   - A priority that cannot be provisioned (a stockout) is put in backoff by the cluster
//     autoscaler and the next is tried (google/skills, "Fallback and Backoff Mechanics": "CCC
//     fallbacks work using Cluster Autoscaler backoffs as the main mechanism").
//
// INFERRED: whenUnsatisfiable ScaleUpAnyway makes nodes outside the priorities, which for a TPU
// Pod are no TPU nodes at all; the emulator leaves such a Pod pending as DoNotScaleUp does. A
// priority without reservations takes GKE's default affinity (unset).

// LabelComputeClass is the node selector and the node label of a custom ComputeClass.
const LabelComputeClass = "cloud.google.com/compute-class"

// ComputeClassMinVersion is the lowest GKE version with custom ComputeClasses, and
// ComputeClassAutoCreationMinVersion the lowest whose classes create node pools themselves.
const (
	ComputeClassMinVersion             = "1.30.3-gke.1451000"
	ComputeClassAutoCreationMinVersion = "1.33.3-gke.1136000"
)

// ComputeClass is the part of a ComputeClass object node auto-provisioning reads.
type ComputeClass struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Priorities           []ClassPriority `json:"priorities"`
		NodePoolAutoCreation *struct {
			Enabled bool `json:"enabled"`
		} `json:"nodePoolAutoCreation"`
		WhenUnsatisfiable string `json:"whenUnsatisfiable"`
	} `json:"spec"`
}

// ClassPriority is one rule of spec.priorities.
type ClassPriority struct {
	TPU *struct {
		Type     string `json:"type"`
		Count    int    `json:"count"`
		Topology string `json:"topology"`
	} `json:"tpu"`
	Spot         bool `json:"spot"`
	Reservations *struct {
		Affinity string `json:"affinity"`
		Specific []struct {
			Name             string `json:"name"`
			Project          string `json:"project"`
			ReservationBlock *struct {
				Name string `json:"name"`
			} `json:"reservationBlock"`
		} `json:"specific"`
	} `json:"reservations"`
	FlexStart *struct {
		Enabled bool `json:"enabled"`
	} `json:"flexStart"`
	MaxRunDurationSeconds int64 `json:"maxRunDurationSeconds"`
}

// ParseComputeClass reads a ComputeClass object's JSON.
func ParseComputeClass(b []byte) (*ComputeClass, error) {
	var c ComputeClass
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// AutoCreates says whether the class's nodePoolAutoCreation creates pools on a cluster of version.
func (c *ComputeClass) AutoCreates(version string) bool {
	return c.Spec.NodePoolAutoCreation != nil && c.Spec.NodePoolAutoCreation.Enabled && !VersionLess(version, ComputeClassAutoCreationMinVersion)
}

// Capacity names the capacity a priority asks for, as the emulator's capacity kinds name it.
func (p ClassPriority) Capacity() string {
	switch {
	case p.Reservations != nil && p.Reservations.Affinity == "Specific" && len(p.Reservations.Specific) > 0:
		return "reservation:" + p.Reservations.Specific[0].Name
	case p.FlexStart != nil && p.FlexStart.Enabled:
		return "flex-start"
	case p.Spot:
		return "spot"
	}
	return "on-demand"
}

// ClassShape is the slice a TPU priority asks for, or why it asks for none (the emulator's words).
func ClassShape(p ClassPriority) (NAPShape, string) {
	if p.TPU == nil {
		return NAPShape{}, "the priority asks for no TPU"
	}
	return NAPShapeFor(p.TPU.Type, p.TPU.Topology, p.TPU.Count)
}

// ClassNodePool is NAP's pool for a class's priority: NAPNodePool's, with the priority's capacity
// and the class's label and taint.
func ClassNodePool(class string, p ClassPriority, s NAPShape, zone string, defaults *containerpb.AutoprovisioningNodePoolDefaults) *containerpb.NodePool {
	np := NAPNodePool(s, zone, defaults)
	cfg := np.Config
	cfg.Labels = map[string]string{LabelComputeClass: class}
	cfg.Taints = append(cfg.Taints, &containerpb.NodeTaint{Key: LabelComputeClass, Value: class, Effect: containerpb.NodeTaint_NO_SCHEDULE})
	switch {
	case p.Reservations != nil && p.Reservations.Affinity == "Specific" && len(p.Reservations.Specific) > 0:
		r := p.Reservations.Specific[0]
		value := r.Name
		if r.Project != "" {
			value = fmt.Sprintf("projects/%s/reservations/%s", r.Project, r.Name)
		}
		if r.ReservationBlock != nil && r.ReservationBlock.Name != "" {
			value += "/reservationBlocks/" + r.ReservationBlock.Name
		}
		cfg.ReservationAffinity = &containerpb.ReservationAffinity{
			ConsumeReservationType: containerpb.ReservationAffinity_SPECIFIC_RESERVATION,
			Key:                    "compute.googleapis.com/reservation-name", Values: []string{value},
		}
	case p.Reservations != nil && p.Reservations.Affinity == "None":
		cfg.ReservationAffinity = &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_NO_RESERVATION}
	}
	if p.Reservations == nil || p.Reservations.Affinity != "Specific" {
		switch {
		case p.FlexStart != nil && p.FlexStart.Enabled:
			// A flex-start pool starts empty and autoscales (checkCapacityOptions).
			flex := true
			cfg.FlexStart = &flex
			cfg.ReservationAffinity = &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_NO_RESERVATION}
			np.InitialNodeCount = 0
			if p.MaxRunDurationSeconds > 0 {
				cfg.MaxRunDuration = durationpb.New(time.Duration(p.MaxRunDurationSeconds) * time.Second)
			}
		case p.Spot:
			cfg.Spot = true
		}
	}
	return np
}
