package provider

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// reservationFit is what a slice needs of a reservation it names, and what it is checked against.
type reservationFit struct {
	At      path.Path // the reservation attribute naming it
	Project string    // the cluster's project
	Zone    string    // the zone the slice would be created in
	Slice   *tpu.Slice
	// Credit are hosts of the reservation that the slice itself holds now and frees before it is
	// created again (a replacement).
	Credit int64
}

// check refuses a reservation that the slice cannot be created on: of another machine type, or
// with fewer free hosts than the slice has. One not shared with the cluster's project is a
// warning only, since Compute Engine may list a project in shareSettings by number, not by id.
func (f reservationFit) check(r *gke.Reservation) diag.Diagnostics {
	var diags diag.Diagnostics
	name := reservationLabel(r.Project, r.Name, f.Project)
	shape := fmt.Sprintf("a %s %s slice", f.Slice.Generation.Name, f.Slice.Topology)
	if want := f.Slice.MachineType.Name; r.MachineType != "" && r.MachineType != want {
		diags.AddAttributeError(f.At, "Reservation of Another Machine Type",
			fmt.Sprintf("reservation %s reserves VMs of machine type %s; %s runs on %s, which Compute Engine does not take "+
				"from it. Name a reservation of %s, or give the slice a shape of machine type %s.", name, r.MachineType, shape, want, want, r.MachineType))
		return diags
	}
	hosts, free := int64(f.Slice.Hosts), r.Free()+f.Credit
	if free < hosts {
		freed := ""
		if f.Credit > 0 {
			freed = fmt.Sprintf(", %d of them held by this slice until it is replaced", f.Credit)
		}
		diags.AddAttributeError(f.At, "Reservation Too Small",
			fmt.Sprintf("reservation %s in %s has %d free hosts (%d reserved, %d in use%s); %s needs %d. Free %d more hosts "+
				"of it, grow it to at least %d, or name a reservation with %d free hosts.",
				name, r.Zone, free, r.Count, r.InUse, freed, shape, hosts, hosts-free, r.Count+hosts-free, hosts))
		return diags
	}
	if r.Project != f.Project && !sharedWith(r, f.Project) {
		diags.AddAttributeWarning(f.At, "Reservation May Not Be Shared With the Cluster's Project",
			fmt.Sprintf("reservation %s is shared as %q with %v, which does not list project %s by id: GKE refuses the slice "+
				"if it is not shared with the cluster's project. Share it with %s (shareSettings), or ignore this if the list "+
				"names the project by number.", name, r.ShareType, r.SharedWith, f.Project, f.Project))
	}
	return diags
}

func sharedWith(r *gke.Reservation, project string) bool {
	switch r.ShareType {
	case "", "ORGANIZATION":
		// Not reported, or shared with every project of the organization.
		return true
	case "SPECIFIC_PROJECTS":
		return slices.Contains(r.SharedWith, project)
	}
	return false
}

// reservationLabel is a reservation as the slice names it: by name in the cluster's project,
// projects/P/reservations/NAME from another.
func reservationLabel(project, name, clusterProject string) string {
	if project == clusterProject {
		return name
	}
	return "projects/" + project + "/reservations/" + name
}

// reservationConsumers are the slices this provider process plans to create on each reservation,
// with their hosts, so that a reservation too small for all of them together fails the plan.
// Slices plan in parallel and each sees those planned before it: the last to plan sees them all.
// A slice leaves once its creation starts, from when Compute Engine counts its hosts in use (or
// will), so that a plan of the apply never counts a slice twice.
type reservationConsumers struct {
	mu sync.Mutex
	by map[string]map[string]int64
}

// plan records slice as a consumer of reservation with hosts and returns every consumer recorded.
func (c *reservationConsumers) plan(reservation, slice string, hosts int64) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]map[string]int64{}
	}
	if c.by[reservation] == nil {
		c.by[reservation] = map[string]int64{}
	}
	c.by[reservation][slice] = hosts
	out := make(map[string]int64, len(c.by[reservation]))
	for k, v := range c.by[reservation] {
		out[k] = v
	}
	return out
}

// creating forgets slice as a planned consumer of any reservation.
func (c *reservationConsumers) creating(slice string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.by {
		delete(m, slice)
	}
}

// checkAll refuses a reservation with fewer free hosts than the planned consumers need together,
// each counted by the hosts it needs beyond those it holds now (a replaced slice).
func (f reservationFit) checkAll(r *gke.Reservation, consumers map[string]int64) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(consumers) < 2 {
		return diags
	}
	var total int64
	names := make([]string, 0, len(consumers))
	for slice, hosts := range consumers {
		total += hosts
		names = append(names, fmt.Sprintf("%s (%d)", slice, hosts))
	}
	sort.Strings(names)
	free := r.Free()
	if total <= free {
		return diags
	}
	diags.AddAttributeError(f.At, "Reservation Too Small for Every Slice Naming It",
		fmt.Sprintf("reservation %s in %s has %d free hosts; the %d slices of this configuration to be created on it need %d "+
			"together: %s. Give them %d hosts more (a bigger reservation), or move some of them to other capacity.",
			reservationLabel(r.Project, r.Name, f.Project), r.Zone, free, len(consumers), total, strings.Join(names, ", "), total-free))
	return diags
}
