package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Where a slice's TPUs come from: a zone and a kind of capacity. The slice's own settings (zone,
// spot, reservation, flex_start, queued_provisioning) are the first choice, its fallback list the
// next ones, tried in order when GKE answers with a stockout or an exhausted quota.

// Kinds of capacity, as fallback[].capacity and capacity_used.type name them.
const (
	capacityOnDemand    = "on-demand"
	capacitySpot        = "spot"
	capacityReservation = "reservation"
	capacityFlexStart   = "flex-start"
	// capacityQueued is flex-start capacity obtained through a queue (queued_provisioning): only
	// the slice's own settings can ask for it.
	capacityQueued = "queued"
)

var fallbackCapacities = []string{capacityOnDemand, capacitySpot, capacityReservation, capacityFlexStart}

// How a reservation is consumed: by name (SPECIFIC_RESERVATION), or any matching one that does
// not require to be named (ANY_RESERVATION).
const (
	reservationSpecific = "specific"
	reservationAny      = "any"
)

// reservationNameKey is the affinity key that names reservations: "specify
// compute.googleapis.com/reservation-name as the key" (containerpb ReservationAffinity).
const reservationNameKey = "compute.googleapis.com/reservation-name"

// capacityChoice is one zone and kind of capacity a slice may be created with.
type capacityChoice struct {
	Zone        string
	Kind        string
	Reservation reservationChoice // with Kind capacityReservation
}

func (c capacityChoice) String() string {
	zone := c.Zone
	if zone == "" {
		zone = "the slice's zone"
	}
	if c.Kind == capacityReservation {
		return fmt.Sprintf("%s in %s (%s)", c.Kind, zone, c.Reservation)
	}
	return fmt.Sprintf("%s in %s", c.Kind, zone)
}

// flexible reports capacity GKE provisions as flex-start VMs: created empty, autoscaled, with
// hosts that arrive when a workload asks for them and capacity is found.
func (c capacityChoice) flexible() bool {
	return c.Kind == capacityFlexStart || c.Kind == capacityQueued
}

type reservationChoice struct {
	Consume string // reservationSpecific or reservationAny
	Project string // a shared reservation's project; "" for the cluster's
	Name    string
	Block   string
}

// value is the affinity value naming the reservation: NAME, with /reservationBlocks/BLOCK for a
// block, under projects/PROJECT/reservations/ for a shared one (capacity-facts §4: gcloud sends
// --reservation verbatim; xpk and cluster-toolkit build projects/P/reservations/R[/reservationBlocks/B]).
func (r reservationChoice) value() string {
	v := r.Name
	if r.Block != "" {
		v += "/reservationBlocks/" + r.Block
	}
	if r.Project != "" {
		v = "projects/" + r.Project + "/reservations/" + v
	}
	return v
}

func (r reservationChoice) String() string {
	if r.Consume == reservationAny {
		return "any reservation"
	}
	return r.value()
}

func (r reservationChoice) affinity() *containerpb.ReservationAffinity {
	if r.Consume == reservationAny {
		return &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_ANY_RESERVATION}
	}
	return &containerpb.ReservationAffinity{
		ConsumeReservationType: containerpb.ReservationAffinity_SPECIFIC_RESERVATION,
		Key:                    reservationNameKey,
		Values:                 []string{r.value()},
	}
}

// reservationOfAffinity reads back what affinity sent; ok is false for no reservation.
func reservationOfAffinity(a *containerpb.ReservationAffinity) (reservationChoice, bool) {
	switch a.GetConsumeReservationType() {
	case containerpb.ReservationAffinity_ANY_RESERVATION:
		return reservationChoice{Consume: reservationAny}, true
	case containerpb.ReservationAffinity_SPECIFIC_RESERVATION:
		if len(a.GetValues()) != 1 {
			return reservationChoice{}, false
		}
	default:
		return reservationChoice{}, false
	}
	r := reservationChoice{Consume: reservationSpecific}
	rest := a.GetValues()[0]
	if p, name, ok := strings.Cut(strings.TrimPrefix(rest, "projects/"), "/reservations/"); ok && strings.HasPrefix(rest, "projects/") {
		r.Project, rest = p, name
	}
	r.Name, r.Block, _ = strings.Cut(rest, "/reservationBlocks/")
	return r, true
}

// choiceOfPool is the capacity a node pool was created with.
func choiceOfPool(pool *containerpb.NodePool) capacityChoice {
	var c capacityChoice
	if locations := pool.GetLocations(); len(locations) == 1 {
		c.Zone = locations[0]
	}
	cfg := pool.GetConfig()
	switch {
	case pool.GetQueuedProvisioning().GetEnabled():
		c.Kind = capacityQueued
	case cfg.GetFlexStart():
		c.Kind = capacityFlexStart
	case cfg.GetSpot():
		c.Kind = capacitySpot
	default:
		c.Kind = capacityOnDemand
		if r, ok := reservationOfAffinity(cfg.GetReservationAffinity()); ok {
			c.Kind, c.Reservation = capacityReservation, r
		}
	}
	return c
}

// reservationModel is the reservation attribute, of the slice and of a fallback entry.
type reservationModel struct {
	Consume types.String `tfsdk:"consume"`
	Name    types.String `tfsdk:"name"`
	Project types.String `tfsdk:"project"`
	Block   types.String `tfsdk:"block"`
}

var reservationAttrTypes = map[string]attr.Type{
	"consume": types.StringType, "name": types.StringType, "project": types.StringType, "block": types.StringType,
}

func (r reservationModel) choice() reservationChoice {
	consume := reservationSpecific
	if r.Consume.ValueString() == reservationAny {
		consume = reservationAny
	}
	return reservationChoice{Consume: consume, Project: r.Project.ValueString(), Name: r.Name.ValueString(), Block: r.Block.ValueString()}
}

// reservationObject is r as the reservation attribute; written keeps the spelling of consume
// ("specific" or unset) when it means the same.
func reservationObject(r reservationChoice, written reservationModel) types.Object {
	str := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	consume := written.Consume
	if r.Consume == reservationAny || consume.ValueString() == reservationAny {
		consume = types.StringValue(r.Consume)
	}
	return types.ObjectValueMust(reservationAttrTypes, map[string]attr.Value{
		"consume": consume, "name": str(r.Name), "project": str(r.Project), "block": str(r.Block),
	})
}

// fallbackModel is one entry of the fallback list.
type fallbackModel struct {
	Zone        types.String `tfsdk:"zone"`
	Capacity    types.String `tfsdk:"capacity"`
	Reservation types.Object `tfsdk:"reservation"`
}

var fallbackAttrTypes = map[string]attr.Type{
	"zone": types.StringType, "capacity": types.StringType, "reservation": types.ObjectType{AttrTypes: reservationAttrTypes},
}

var capacityUsedAttrTypes = map[string]attr.Type{
	"zone": types.StringType, "type": types.StringType, "reservation": types.StringType, "attempt": types.Int64Type,
}

func objectAs[T any](ctx context.Context, o types.Object, diags *diag.Diagnostics) T {
	var v T
	if !o.IsNull() && !o.IsUnknown() {
		diags.Append(o.As(ctx, &v, basetypes.ObjectAsOptions{})...)
	}
	return v
}

// ownKind is the kind of capacity of the slice's own settings.
func (m sliceResourceModel) ownKind() string {
	switch {
	case m.QueuedProvisioning.ValueBool():
		return capacityQueued
	case m.FlexStart.ValueBool():
		return capacityFlexStart
	case m.Spot.ValueBool():
		return capacitySpot
	case !m.Reservation.IsNull():
		return capacityReservation
	}
	return capacityOnDemand
}

// capacityKnown reports whether every setting capacityChoices reads is known.
func (m sliceResourceModel) capacityKnown(ctx context.Context) bool {
	for _, v := range []attr.Value{m.Zone, m.Spot, m.Reservation, m.FlexStart, m.QueuedProvisioning, m.Fallback} {
		if tv, err := v.ToTerraformValue(ctx); err != nil || !tv.IsFullyKnown() {
			return false
		}
	}
	return true
}

// capacityChoices are the ways the slice may be created, in order: its own settings, then its
// fallback entries, which default to the slice's zone, kind of capacity and reservation.
func (m sliceResourceModel) capacityChoices(ctx context.Context) ([]capacityChoice, diag.Diagnostics) {
	var diags diag.Diagnostics
	own := capacityChoice{Zone: m.Zone.ValueString(), Kind: m.ownKind()}
	if own.Kind == capacityReservation {
		own.Reservation = objectAs[reservationModel](ctx, m.Reservation, &diags).choice()
	}
	choices := []capacityChoice{own}
	var fallback []fallbackModel
	if !m.Fallback.IsNull() && !m.Fallback.IsUnknown() {
		diags.Append(m.Fallback.ElementsAs(ctx, &fallback, false)...)
	}
	for _, f := range fallback {
		c := capacityChoice{Zone: valueOr(f.Zone, own.Zone), Kind: valueOr(f.Capacity, own.Kind)}
		if c.Kind == capacityReservation {
			c.Reservation = own.Reservation
			if !f.Reservation.IsNull() {
				c.Reservation = objectAs[reservationModel](ctx, f.Reservation, &diags).choice()
			}
		}
		choices = append(choices, c)
	}
	return choices, diags
}

// setOwnCapacity writes c as the slice's own settings, for an imported slice or one that GKE
// holds on capacity its configuration does not name.
func (m *sliceResourceModel) setOwnCapacity(ctx context.Context, c capacityChoice) {
	var diags diag.Diagnostics
	if c.Zone != "" {
		m.Zone = types.StringValue(c.Zone)
	}
	m.Spot = types.BoolValue(c.Kind == capacitySpot)
	m.FlexStart = types.BoolValue(c.flexible())
	m.QueuedProvisioning = types.BoolValue(c.Kind == capacityQueued)
	written := objectAs[reservationModel](ctx, m.Reservation, &diags)
	m.Reservation = types.ObjectNull(reservationAttrTypes)
	if c.Kind == capacityReservation {
		m.Reservation = reservationObject(c.Reservation, written)
	}
}

// readCapacity reads where pool's capacity comes from into m. While it is one of the choices m
// allows, m's settings stay as written (a slice that came up on a fallback entry matches its
// configuration); otherwise GKE's account replaces them, which plans a replacement.
func (m *sliceResourceModel) readCapacity(ctx context.Context, pool *containerpb.NodePool) diag.Diagnostics {
	actual := choiceOfPool(pool)
	choices, diags := m.capacityChoices(ctx)
	attempt := slices.Index(choices, actual)
	if attempt < 0 || m.Zone.IsNull() {
		m.setOwnCapacity(ctx, actual)
		attempt = 0
	}
	m.CapacityUsed = capacityUsedObject(actual, attempt)
	cfg := pool.GetConfig()
	if !actual.flexible() || m.Autoscaling.IsNull() {
		// Flex-start pools autoscale whatever the setting says; it stays as written for them.
		m.Autoscaling = types.BoolValue(pool.GetAutoscaling().GetEnabled())
	}
	if d := cfg.GetMaxRunDuration(); d != nil {
		if written, err := time.ParseDuration(m.MaxRunDuration.ValueString()); err != nil || written != d.AsDuration() {
			m.MaxRunDuration = types.StringValue(shortDuration(d.AsDuration()))
		}
	} else if actual.flexible() {
		m.MaxRunDuration = types.StringNull()
	}
	m.AutoRepair = types.BoolValue(pool.GetManagement().GetAutoRepair())
	m.AutoUpgrade = types.BoolValue(pool.GetManagement().GetAutoUpgrade())
	return diags
}

func capacityUsedObject(c capacityChoice, attempt int) types.Object {
	reservation := types.StringNull()
	if c.Kind == capacityReservation {
		reservation = types.StringValue(c.Reservation.String())
	}
	return types.ObjectValueMust(capacityUsedAttrTypes, map[string]attr.Value{
		"zone": types.StringValue(c.Zone), "type": types.StringValue(c.Kind),
		"reservation": reservation, "attempt": types.Int64Value(int64(attempt + 1)),
	})
}

// applyCapacity sets in pool what choice c asks GKE for. A slice is created with all of its hosts,
// except on flex-start capacity, which GKE creates empty and autoscaled: "Flex start node pools
// require autoscaling enabled." and "... initial node count to be set to 0." (GKE's answers,
// capacity-facts §2); queued provisioning adds the queue, which requires autoscaling from 0 and
// "reservation affinity to be set to none" (terraform-provider-google #18341), and for TPUs
// flex-start ("Queued_provisioning doesn't support TPUs" without it, capacity-facts §1). The
// autoscaler scales a multi-host slice as one unit, so its maximum is the slice's host count
// (GKE checks the per-zone max_node_count against the slice, capacity-facts §3).
func (m sliceResourceModel) applyCapacity(pool *containerpb.NodePool, c capacityChoice, hosts int) {
	pool.Locations = []string{c.Zone}
	pool.InitialNodeCount = int32(hosts)
	autoscaling := m.Autoscaling.ValueBool()
	switch c.Kind {
	case capacitySpot:
		pool.Config.Spot = true
	case capacityReservation:
		pool.Config.ReservationAffinity = c.Reservation.affinity()
	case capacityFlexStart, capacityQueued:
		pool.InitialNodeCount, autoscaling = 0, true
		pool.Config.FlexStart = proto.Bool(true)
		pool.Config.ReservationAffinity = &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_NO_RESERVATION}
		if d, err := time.ParseDuration(m.MaxRunDuration.ValueString()); err == nil {
			pool.Config.MaxRunDuration = durationpb.New(d)
		}
		if c.Kind == capacityQueued {
			pool.QueuedProvisioning = &containerpb.NodePool_QueuedProvisioning{Enabled: true}
		}
	}
	if autoscaling {
		pool.Autoscaling = sliceAutoscaling(hosts, c.flexible())
	}
}

// sliceAutoscaling scales a slice between none and all of its hosts. Flex-start capacity goes
// where it is found (location policy ANY: "ANY policy picks zones that have the highest capacity
// available", containerpb NodePoolAutoscaling, as xpk and cluster-toolkit send it).
func sliceAutoscaling(hosts int, flexible bool) *containerpb.NodePoolAutoscaling {
	a := &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 0, MaxNodeCount: int32(hosts)}
	if flexible {
		a.LocationPolicy = containerpb.NodePoolAutoscaling_ANY
	}
	return a
}

// shortDuration writes d as a Go duration without zero minutes or seconds: 72h, not 72h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
