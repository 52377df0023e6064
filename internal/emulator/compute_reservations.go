package emulator

import (
	compute "google.golang.org/api/compute/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// Compute Engine's reservations, get and list (zonal) and aggregatedList, from the reservations
// the emulator holds, in the fields of compute v1 Reservation that say whether a slice fits:
// specificReservation {count, inUseCount, instanceProperties.machineType} in VMs,
// specificReservationRequired, zone, status READY. Only reservations made with a machine type are
// served: Compute Engine reserves VMs of one machine type, and one made by chips alone has no
// count to report. shareSettings is left out: the emulator lets any project consume a reservation
// by name, without the list of projects it is shared with. An aggregated list holds only the zones
// that have reservations (Compute Engine adds every other zone with a NO_RESULTS_ON_PAGE warning).

// reservationViewLocked is r as Compute Engine reports it; the VMs in use are those of the node
// pools holding chips of it.
func (e *Emulator) reservationViewLocked(r Reservation) *compute.Reservation {
	key := reservationKey(r.Project, r.Zone, r.Name)
	m, _ := gketpu.LookupMachineType(r.MachineType)
	used := 0
	for _, c := range e.st.clusters {
		for _, p := range c.Pools {
			if p.Reserved && contains(p.Zones, r.Zone) && parseCapacitySource(p.Source) == (capacitySource{reservation: key}) {
				used += p.ChipsPerNode * p.NodeCount
			}
		}
	}
	return &compute.Reservation{
		Kind: "compute#reservation", Id: stableID(key), Name: r.Name, Status: "READY",
		Zone: e.computeURL("projects/" + r.Project + "/zones/" + r.Zone), SelfLink: e.computeURL(key),
		SpecificReservationRequired: r.SpecificOnly,
		SpecificReservation: &compute.AllocationSpecificSKUReservation{
			Count: int64(r.Chips / m.ChipsPerVM), InUseCount: int64(used / m.ChipsPerVM),
			InstanceProperties: &compute.AllocationSpecificSKUAllocationReservedInstanceProperties{MachineType: r.MachineType},
		},
	}
}

// servedReservationsLocked are the reservations Compute Engine serves for project, in zone (any
// zone when ""), by name.
func (e *Emulator) servedReservationsLocked(project, zone string) []Reservation {
	return e.capacity.reservationsMatching(func(r Reservation) bool {
		return r.MachineType != "" && r.Project == project && (zone == "" || r.Zone == zone)
	})
}

func (e *Emulator) getReservation(rt computeRoute) (*compute.Reservation, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := rt.parent() + "/reservations/" + rt.name
	r, ok := e.capacity.reservation(key)
	if !ok || r.MachineType == "" || !rules.IsZone(rt.where) {
		return nil, errComputeNotFound(key)
	}
	return e.reservationViewLocked(r), nil
}

func (e *Emulator) listReservations(rt computeRoute) (*compute.ReservationList, *apierr.Error) {
	if !rules.IsZone(rt.where) {
		return nil, errComputeNotFound(rt.parent())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := &compute.ReservationList{Kind: "compute#reservationList", Id: rt.parent() + "/reservations",
		SelfLink: e.computeURL(rt.parent() + "/reservations")}
	for _, r := range e.servedReservationsLocked(rt.project, rt.where) {
		out.Items = append(out.Items, e.reservationViewLocked(r))
	}
	return out, nil
}

func (e *Emulator) aggregatedReservations(rt computeRoute) (*compute.ReservationAggregatedList, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	path := "projects/" + rt.project + "/aggregated/reservations"
	out := &compute.ReservationAggregatedList{Kind: "compute#reservationAggregatedList", Id: path,
		SelfLink: e.computeURL(path), Items: map[string]compute.ReservationsScopedList{}}
	for _, r := range e.servedReservationsLocked(rt.project, "") {
		scope := out.Items["zones/"+r.Zone]
		scope.Reservations = append(scope.Reservations, e.reservationViewLocked(r))
		out.Items["zones/"+r.Zone] = scope
	}
	return out, nil
}
