package gke

import (
	"context"
	"sort"
	"strings"

	compute "google.golang.org/api/compute/v1"
	"google.golang.org/grpc/codes"
)

// Compute Engine reservations, read so that a slice naming one is checked at plan time against
// what the reservation holds (compute v1 Reservation): its zone, the machine type of its VMs
// (specificReservation.instanceProperties.machineType), how many it reserves and how many are in
// use (specificReservation.count and inUseCount, in VMs, one a TPU host), whether only VMs that
// name it consume it (specificReservationRequired), and the projects it is shared with.

// Reservation is what raytpu reads of a Compute Engine reservation.
type Reservation struct {
	Project, Zone, Name string
	// MachineType is the reserved VMs' machine type, by name (Compute Engine may send a URL).
	MachineType string
	// Count and InUse are VMs: TPU hosts.
	Count, InUse int64
	// SpecificRequired is specificReservationRequired: only VMs naming it consume it.
	SpecificRequired bool
	// ShareType is shareSettings.shareType ("LOCAL", "SPECIFIC_PROJECTS", ""), SharedWith the
	// projects of a SPECIFIC_PROJECTS one.
	ShareType  string
	SharedWith []string
}

// Free is how many of its VMs no one uses.
func (r Reservation) Free() int64 { return max(r.Count-r.InUse, 0) }

// IsPermissionDenied reports a 403: the principal may not make the call.
func IsPermissionDenied(err error) bool { return code(err) == codes.PermissionDenied }

// GetReservation reads a zonal reservation (compute.reservations.get).
func (c *Client) GetReservation(ctx context.Context, project, zone, name string) (*Reservation, error) {
	r, err := call(ctx, c, "compute.reservations.get", func(ctx context.Context) (*compute.Reservation, error) {
		return c.compute.Reservations.Get(project, zone, name).Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	return reservationOf(project, r), nil
}

// ReservationZones are the zones where project has a reservation of that name
// (compute.reservations.list, aggregated over the project's zones), sorted: a name is unique only
// within a zone.
func (c *Client) ReservationZones(ctx context.Context, project, name string) ([]string, error) {
	var zones []string
	_, err := call(ctx, c, "compute.reservations.aggregatedList", func(ctx context.Context) (struct{}, error) {
		zones = zones[:0]
		return struct{}{}, c.compute.Reservations.AggregatedList(project).Context(ctx).Pages(ctx,
			func(page *compute.ReservationAggregatedList) error {
				for _, scoped := range page.Items {
					for _, r := range scoped.Reservations {
						if r.Name == name {
							zones = append(zones, lastSegment(r.Zone))
						}
					}
				}
				return nil
			})
	})
	sort.Strings(zones)
	return zones, err
}

func reservationOf(project string, r *compute.Reservation) *Reservation {
	out := &Reservation{Project: project, Zone: lastSegment(r.Zone), Name: r.Name, SpecificRequired: r.SpecificReservationRequired}
	if s := r.SpecificReservation; s != nil {
		out.Count, out.InUse = s.Count, s.InUseCount
		if p := s.InstanceProperties; p != nil {
			out.MachineType = lastSegment(p.MachineType)
		}
	}
	if s := r.ShareSettings; s != nil {
		out.ShareType = s.ShareType
		for id := range s.ProjectMap {
			out.SharedWith = append(out.SharedWith, id)
		}
		sort.Strings(out.SharedWith)
	}
	return out
}

// lastSegment is the name at the end of a Compute Engine URL, or the name itself.
func lastSegment(s string) string { return s[strings.LastIndex(s, "/")+1:] }
