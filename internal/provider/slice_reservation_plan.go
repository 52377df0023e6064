package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// A slice that names a reservation is checked at plan time against the reservation itself
// (compute.reservations.get): GKE would otherwise find it missing, in another zone, of another
// machine type or too small only minutes into the create, and then try the next fallback entry.
// Reading it is a check only: a refused read (403) warns and the apply goes on without it.

// planReservations checks every reservation named by the choices of a slice about to be created
// (new, or replaced): the slice's own and its fallback entries'. Only the own choice counts
// towards the reservation's planned consumers, since a fallback entry is tried only on a stockout.
func (r *sliceResource) planReservations(ctx context.Context, plan, state *sliceResourceModel, s *tpu.Slice, resp *resource.ModifyPlanResponse) {
	if r.data == nil || (state != nil && len(resp.RequiresReplace) == 0) || plan.Cluster.IsUnknown() || !plan.capacityKnown(ctx) {
		return
	}
	id, err := gke.ParseClusterID(plan.Cluster.ValueString())
	if err != nil {
		return
	}
	choices, diags := plan.capacityChoices(ctx)
	if diags.HasError() {
		return
	}
	// A replaced slice frees the hosts it holds before it is created again.
	var running capacityChoice
	var credit int64
	if state != nil {
		running = runningChoice(ctx, *state)
		if before, _ := resolveShape(state.shape()); before != nil {
			credit = int64(before.Hosts)
		}
	}
	var client *gke.Client
	for i, c := range choices {
		if c.Kind != capacityReservation || c.Reservation.Consume != reservationSpecific || c.Zone == "" || c.Reservation.Name == "" {
			continue
		}
		if client == nil {
			if client = r.planClient(ctx, fmt.Sprintf("checking the reservations of raytpu_slice on %s", id), &resp.Diagnostics); client == nil {
				return
			}
		}
		at := path.Root("reservation")
		if i > 0 {
			at = path.Root("fallback").AtListIndex(i - 1).AtName("reservation")
		}
		fit := reservationFit{At: at, Project: id.Project, Zone: c.Zone, Slice: s}
		project := c.Reservation.Project
		if project == "" {
			project = id.Project
		}
		if running.Kind == capacityReservation && running.Zone == c.Zone && running.Reservation.Name == c.Reservation.Name &&
			running.Reservation.Project == c.Reservation.Project {
			fit.Credit = credit
		}
		res, rdiags := readReservation(ctx, client, fit, project, c.Reservation.Name)
		resp.Diagnostics.Append(rdiags...)
		if res == nil {
			continue
		}
		own := fit.check(res)
		resp.Diagnostics.Append(own...)
		if i == 0 && !own.HasError() && !plan.Name.IsUnknown() {
			slice := id.Name + "/" + plan.Name.ValueString()
			consumers := r.data.reservations.plan(strings.Join([]string{project, c.Zone, c.Reservation.Name}, "/"), slice, int64(s.Hosts)-fit.Credit)
			resp.Diagnostics.Append(fit.checkAll(res, consumers)...)
		}
	}
}

// readReservation reads the reservation a choice names; nil with an error when it is not in the
// slice's zone, nil with a warning when it could not be read.
func readReservation(ctx context.Context, client *gke.Client, fit reservationFit, project, name string) (*gke.Reservation, diag.Diagnostics) {
	var diags diag.Diagnostics
	label := reservationLabel(project, name, fit.Project)
	res, err := client.GetReservation(ctx, project, fit.Zone, name)
	switch {
	case err == nil:
		return res, diags
	case gke.IsNotFound(err):
		zones, lerr := client.ReservationZones(ctx, project, name)
		if lerr == nil && len(zones) > 0 {
			diags.AddAttributeError(fit.At, "Reservation in Another Zone",
				fmt.Sprintf("reservation %s is in %s, not in %s, the zone the slice would be created in; GKE takes a reservation "+
					"only in its own zone. Set the slice's zone (or the fallback entry's) to %s, or name a reservation of %s.",
					label, strings.Join(zones, ", "), fit.Zone, zones[0], fit.Zone))
			return nil, diags
		}
		diags.AddAttributeError(fit.At, "Reservation Not Found",
			fmt.Sprintf("project %s has no reservation %s in zone %s, the zone the slice would be created in: name an existing "+
				"reservation of %s (gcloud compute reservations list --project=%s --filter=zone:%s), or create it first.",
				project, name, fit.Zone, fit.Zone, project, fit.Zone))
	case gke.IsPermissionDenied(err):
		diags.AddAttributeWarning(fit.At, "Reservation Not Checked",
			fmt.Sprintf("reading reservation %s in %s was refused (%s), so the plan cannot check that it exists, is of the "+
				"slice's machine type and has %d free hosts. The apply does not need this read; grant compute.reservations.get "+
				"(and compute.reservations.list) on project %s to check it at plan time.", label, fit.Zone, gke.WithAdvice(err), fit.Slice.Hosts, project))
	default:
		diags.AddAttributeWarning(fit.At, "Reservation Not Checked",
			fmt.Sprintf("reading reservation %s in %s failed, so the plan does not check it: %s", label, fit.Zone, gke.WithAdvice(err)))
	}
	return nil, diags
}
