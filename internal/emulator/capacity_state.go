package emulator

import (
	"sort"
	"sync"
)

// capKey keys capacity (where a zone, typ the kind) and quota (where a project, typ empty).
type capKey struct{ where, gen, typ string }

// capacityState is the emulated world's TPU capacity, quota and reservations: facts that GKE
// meets, which the control API sets (SetCapacity, SetQuota, AddReservation) and Reset clears. It
// has its own lock, taken after e.mu when both are; test settings live apart, in controlState.
type capacityState struct {
	mu       sync.Mutex
	capacity map[capKey]int
	quota    map[capKey]int
	// reservations by projects/{p}/zones/{z}/reservations/{name}.
	reservations map[string]Reservation
}

func newCapacityState() *capacityState {
	return &capacityState{capacity: map[capKey]int{}, quota: map[capKey]int{}, reservations: map[string]Reservation{}}
}

// reset forgets every limit and reservation: capacity and quota are unlimited again.
func (s *capacityState) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.capacity, s.quota, s.reservations = map[capKey]int{}, map[capKey]int{}, map[string]Reservation{}
}

func (s *capacityState) setCapacity(zone, gen, typ string, chips int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.capacity[capKey{zone, gen, typ}] = chips
}

func (s *capacityState) setQuota(project, gen string, chips int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota[capKey{project, gen, ""}] = chips
}

func (s *capacityState) addReservation(r Reservation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reservations[reservationKey(r.Project, r.Zone, r.Name)] = r
}

// capacityOf is the capacity of a kind in a zone, -1 when unlimited.
func (s *capacityState) capacityOf(zone, gen, typ string) int {
	return s.limit(s.capacity, capKey{zone, gen, typ})
}

// quotaOf is a project's quota of a generation's chips, -1 when unlimited.
func (s *capacityState) quotaOf(project, gen string) int {
	return s.limit(s.quota, capKey{project, gen, ""})
}

func (s *capacityState) limit(m map[capKey]int, k capKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := m[k]; ok {
		return n
	}
	return -1
}

// reservation is the reservation of a key (reservationKey).
func (s *capacityState) reservation(key string) (Reservation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reservations[key]
	return r, ok
}

// reservationsMatching are the reservations match accepts, by name.
func (s *capacityState) reservationsMatching(match func(Reservation) bool) []Reservation {
	s.mu.Lock()
	var out []Reservation
	for _, r := range s.reservations {
		if match(r) {
			out = append(out, r)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
