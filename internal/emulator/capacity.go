package emulator

import (
	"fmt"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// Where a TPU node pool's chips come from (capacitySource): a reservation it consumes, or one kind
// of zone capacity — on demand, Spot or flex-start (Capacity.Type). Each has its own stock, so a
// zone can be out of on-demand v6e chips while it still has Spot ones, as users meet it: fallback
// from one kind to another is how teams get TPUs (capacity-facts.md §6).
type capacitySource struct {
	reservation string // projects/{p}/zones/{z}/reservations/{name}, or "" for a kind
	kind        string
}

func (s capacitySource) String() string {
	if s.reservation != "" {
		return "reservation:" + s.reservation
	}
	return s.kind
}

func parseCapacitySource(s string) capacitySource {
	if r, ok := strings.CutPrefix(s, "reservation:"); ok {
		return capacitySource{reservation: r}
	}
	return capacitySource{kind: s}
}

// poolKind is the kind of capacity a pool asks for when it consumes no reservation.
func poolKind(p *rules.NodePool) string {
	cfg := p.PB.GetConfig()
	switch {
	case cfg.GetSpot():
		return CapacitySpot
	case cfg.GetFlexStart():
		return CapacityFlexStart
	}
	return CapacityOnDemand
}

// usedLocked is what the pools holding chips of source in zone z hold, p's own chips excepted.
func (e *Emulator) usedLocked(p *rules.NodePool, z string, source capacitySource) int {
	used := 0
	for _, oc := range e.st.clusters {
		for _, op := range oc.Pools {
			if op != p && op.Reserved && op.Generation == p.Generation && contains(op.Zones, z) && parseCapacitySource(op.Source) == source {
				used += op.ChipsPerNode * op.NodeCount
			}
		}
	}
	return used
}

// checkCapacityLocked finds, in every zone of pool p, room for count nodes, and records where
// their chips come from (p.Source). A pool naming a reservation (SPECIFIC_RESERVATION, key
// compute.googleapis.com/reservation-name, value NAME or projects/PROJECT/reservations/NAME, with
// /reservationBlocks/BLOCK for a block: containerpb ReservationAffinity; xpk
// core/reservation.py) takes its chips from it and from nothing else; one with ANY_RESERVATION, or
// no affinity (Compute Engine's default consumes matching reservations), from a matching
// reservation with room that does not require to be named, else from its kind; NO_RESERVATION from
// its kind. A zone without room is a GCE_STOCKOUT. Chips the pool already holds count as free for
// it.
func (e *Emulator) checkCapacityLocked(c *cluster, p *rules.NodePool, count int) *apierr.Error {
	if p.Generation == "" {
		return nil
	}
	affinity := p.PB.GetConfig().GetReservationAffinity()
	need := count * p.ChipsPerNode
	for _, z := range p.Zones {
		var source capacitySource
		switch affinity.GetConsumeReservationType() {
		case containerpb.ReservationAffinity_SPECIFIC_RESERVATION:
			r, err := e.namedReservation(c, p, z, affinity)
			if err != nil {
				return err
			}
			source = capacitySource{reservation: reservationKey(r.Project, r.Zone, r.Name)}
			if free := r.Chips - e.usedLocked(p, z, source); need > free {
				// xpk's test quotes GKE for a reservation without room: "the nodes ... cannot be
				// created now due to lack of capacity in your reservation" (AI-Hypercomputer/xpk
				// src/xpk/core/nodepool_test.py); a stockout for whoever falls back elsewhere.
				return &apierr.Error{
					HTTPStatus: 429, Code: codes.ResourceExhausted, Reason: containerpb.StatusCondition_GCE_STOCKOUT.String(),
					Message: fmt.Sprintf("TPU: the nodes of node pool %q cannot be created now due to lack of capacity in your "+
						"reservation %s (%d chips needed, %d of %d free).", p.PB.Name, reservationKey(r.Project, r.Zone, r.Name), need, max(free, 0), r.Chips),
				}
			}
		case containerpb.ReservationAffinity_NO_RESERVATION:
			source = capacitySource{kind: poolKind(p)}
		default:
			source = capacitySource{kind: poolKind(p)}
			if r, ok := e.anyReservationLocked(c.Project, p, z, need); ok {
				source = capacitySource{reservation: reservationKey(r.Project, r.Zone, r.Name)}
			}
		}
		if source.kind != "" {
			limit := e.capacity.capacityOf(z, p.Generation, source.kind)
			if used := e.usedLocked(p, z, source); limit >= 0 && used+need > limit {
				kind := ""
				if source.kind != CapacityOnDemand {
					kind = source.kind + " "
				}
				return &apierr.Error{
					HTTPStatus: 429, Code: codes.ResourceExhausted, Reason: containerpb.StatusCondition_GCE_STOCKOUT.String(),
					Message: fmt.Sprintf("Google Compute Engine: The zone 'projects/%s/zones/%s' does not have enough resources "+
						"available to fulfill the request. Try a different zone, or try again later. (node pool %q needs %d %s%s "+
						"chips, %d of %d are free)", c.Project, z, p.PB.Name, need, kind, p.Generation, max(limit-used, 0), limit),
				}
			}
		}
		p.Source = source.String()
	}
	return nil
}

// namedReservation is the reservation a SPECIFIC_RESERVATION affinity names, in zone z.
func (e *Emulator) namedReservation(c *cluster, p *rules.NodePool, z string, a *containerpb.ReservationAffinity) (Reservation, *apierr.Error) {
	if a.GetKey() != reservationNameKey || len(a.GetValues()) != 1 {
		return Reservation{}, apierr.Invalid("Node pool %q: a SPECIFIC_RESERVATION affinity needs key %q and one value, the reservation's name.",
			p.PB.Name, reservationNameKey)
	}
	project, name, block := c.Project, a.GetValues()[0], ""
	if rest, ok := strings.CutPrefix(name, "projects/"); ok {
		if project, name, ok = strings.Cut(rest, "/reservations/"); !ok {
			return Reservation{}, apierr.Invalid("Node pool %q: reservation %q: write it as NAME or projects/PROJECT/reservations/NAME.", p.PB.Name, a.GetValues()[0])
		}
	}
	name, block, _ = strings.Cut(name, "/reservationBlocks/")
	r, ok := e.capacity.reservation(reservationKey(project, z, name))
	// The emulator's wording: GKE's answer to a reservation that does not exist was not found. Its
	// answer to one that does not fit the pool is xpk's: "Reservation '...' is incorrect for the
	// requested resources." (xpk src/xpk/core/nodepool_test.py).
	switch {
	case !ok:
		return Reservation{}, apierr.New(codes.NotFound, "Reservation %q was not found in project %q, zone %q.", name, project, z)
	case !r.fits(p):
		return Reservation{}, apierr.Invalid("Reservation '%s' is incorrect for the requested resources.", reservationKey(project, z, name))
	case block != "" && !contains(r.Blocks, block):
		return Reservation{}, apierr.New(codes.NotFound, "Reservation block %q of reservation %q was not found.", block, name)
	}
	return r, nil
}

// anyReservationLocked is a reservation of project that ANY_RESERVATION consumes for need chips of
// p in z. Another project's reservation is consumed only by name: the emulator does not model the
// projects a reservation is shared with.
func (e *Emulator) anyReservationLocked(project string, p *rules.NodePool, z string, need int) (Reservation, bool) {
	candidates := e.capacity.reservationsMatching(func(r Reservation) bool {
		return r.Project == project && r.Zone == z && r.fits(p) && !r.SpecificOnly
	})
	for _, r := range candidates {
		if r.Chips-e.usedLocked(p, z, capacitySource{reservation: reservationKey(r.Project, r.Zone, r.Name)}) >= need {
			return r, true
		}
	}
	return Reservation{}, false
}

// fits reports whether pool p's VMs are what r reserves: its generation's, and its machine type's
// when it names one: Compute Engine reserves VMs of one machine type (compute v1
// Reservation.specificReservation.instanceProperties.machineType), and a VM consumes a
// reservation whose properties match its own (Compute Engine "Consume reserved instances").
func (r Reservation) fits(p *rules.NodePool) bool {
	return r.Generation == p.Generation && (r.MachineType == "" || r.MachineType == p.PB.GetConfig().GetMachineType())
}

// reservationNameKey is the affinity key that names reservations (containerpb ReservationAffinity:
// "specify compute.googleapis.com/reservation-name as the key").
const reservationNameKey = "compute.googleapis.com/reservation-name"

func reservationKey(project, zone, name string) string {
	return "projects/" + project + "/zones/" + zone + "/reservations/" + name
}

// checkQuotaLocked refuses, with RESOURCE_EXHAUSTED, pools that would take a project over its TPU
// chip quota for a generation. Pools in ERROR hold no chips.
func (e *Emulator) checkQuotaLocked(project string, pools []*rules.NodePool) *apierr.Error {
	want := map[string]int{}
	for _, p := range pools {
		if p.Generation != "" {
			want[p.Generation] += p.Chips()
		}
	}
	for gen, n := range want {
		limit := e.capacity.quotaOf(project, gen)
		if limit < 0 {
			continue
		}
		used := 0
		for _, c := range e.st.clusters {
			if c.Project != project {
				continue
			}
			for _, p := range c.Pools {
				if p.Generation == gen && p.PB.Status != containerpb.NodePool_ERROR {
					used += p.Chips()
				}
			}
		}
		if used+n > limit {
			return &apierr.Error{
				HTTPStatus: 429, Code: codes.ResourceExhausted, Reason: containerpb.StatusCondition_GCE_QUOTA_EXCEEDED.String(),
				Message: fmt.Sprintf("Insufficient quota to satisfy the request: Quota '%s' exceeded. Limit: %d in project %s "+
					"(in use: %d, requested: %d).", quotaName(gen), limit, project, used, n),
			}
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func quotaName(gen string) string {
	return fmt.Sprintf("TPU_%s_CHIPS", strings.ToUpper(gen))
}
