package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator"
)

// A slice naming a reservation is refused at plan, with the numbers, when the reservation is not
// in the project, is in another zone, reserves another machine type, has too few free hosts for
// the slice, or for all the slices of the configuration that name it; one that fits plans, and
// one whose read is refused only warns.
func TestAccSlice_reservationPlanChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// SpecificOnly: no slice of another test takes them as "any" reservation.
	for _, r := range []emulator.Reservation{
		{Project: testProject, Zone: testLocation, Name: "rp-v6e", MachineType: "ct6e-standard-4t", Chips: 16, SpecificOnly: true},
		{Project: testProject, Zone: testLocation, Name: "rp-small", MachineType: "ct6e-standard-4t", Chips: 8, SpecificOnly: true},
		{Project: testProject, Zone: testLocation, Name: "rp-v5p", MachineType: "ct5p-hightpu-4t", Chips: 16, SpecificOnly: true},
		{Project: testProject, Zone: "us-central2-a", Name: "rp-elsewhere", MachineType: "ct6e-standard-4t", Chips: 16, SpecificOnly: true},
		{Project: testProject, Zone: testLocation, Name: "rp-denied", MachineType: "ct6e-standard-4t", Chips: 8, SpecificOnly: true},
	} {
		if err := testEmulator.CreateReservation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := testEmulator.InjectFault(ctx, emulator.Fault{RPC: "compute.reservations.get", Path: "/rp-denied$",
		Status: "PERMISSION_DENIED", Message: "Required 'compute.reservations.get' permission"}); err != nil {
		t.Fatal(err)
	}
	cluster := fmt.Sprintf("projects/%s/locations/%s/clusters/none", testProject, testLocation)
	slice := func(name, topology, body string) string {
		return fmt.Sprintf(`
resource "raytpu_slice" %[1]q {
  cluster        = %[2]q
  name           = %[1]q
  generation     = "v6e"
  topology       = %[3]q
  chips_per_host = 4
  %[4]s
}
`, name, cluster, topology, body)
	}
	step := func(config, pattern string) resource.TestStep {
		s := resource.TestStep{Config: testAccProviderConfig() + config, PlanOnly: true, ExpectNonEmptyPlan: true}
		if pattern != "" {
			s.ExpectError = regexp.MustCompile(`(?s)` + strings.ReplaceAll(pattern, " ", `\s+`))
		}
		return s
	}
	reserved := func(name string) string { return fmt.Sprintf(`reservation = { name = %q }`, name) }
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(slice("s", "4x4", reserved("rp-none")),
				`Reservation Not Found.*project raytpu-acc has no reservation rp-none in zone us-central2-b`),
			// Terraform quotes the fallback entry's line, OpenTofu the resource's: the message is the
			// same under both.
			step(slice("s", "4x4", `fallback = [{ capacity = "reservation", reservation = { name = "rp-none" } }]`),
				`Reservation Not Found.*no reservation rp-none in zone us-central2-b`),
			step(slice("s", "4x4", reserved("rp-elsewhere")),
				`Reservation in Another Zone.*rp-elsewhere is in us-central2-a, not in us-central2-b`),
			step(slice("s", "4x4", reserved("rp-v5p")),
				`Reservation of Another Machine Type.*rp-v5p reserves VMs of machine type ct5p-hightpu-4t; a v6e 4x4 slice runs on ct6e-standard-4t`),
			step(slice("s", "4x4", reserved("rp-small")),
				`Reservation Too Small.*rp-small in us-central2-b has 2 free hosts \(2 reserved, 0 in use\); a v6e 4x4 slice needs 4`),
			step(slice("a", "2x4", reserved("rp-v6e"))+slice("b", "2x4", reserved("rp-v6e"))+slice("c", "2x4", reserved("rp-v6e")),
				`Reservation Too Small for Every Slice Naming It.*rp-v6e in us-central2-b has 4 free hosts; the 3 slices of this `+
					`configuration to be created on it need 6 together: none/a \(2\), none/b \(2\), none/c \(2\)`),
			// What fits plans: two slices of two hosts on four free.
			step(slice("a", "2x4", reserved("rp-v6e"))+slice("b", "2x4", reserved("rp-v6e")), ""),
			// A refused read warns: the apply does not need it.
			step(slice("s", "4x4", reserved("rp-denied")), ""),
		},
	})
}

// Two slices that fill a reservation together apply, and plan empty once they run on it: a slice
// in state is not checked again against the hosts it holds itself.
func TestAccSlice_reservationFilledBySlices(t *testing.T) {
	t.Parallel()
	const cluster = "acc-rfill"
	if err := testEmulator.CreateReservation(context.Background(), emulator.Reservation{
		Project: testProject, Zone: testLocation, Name: "rfill-v6e", MachineType: "ct6e-standard-4t", Chips: 16, SpecificOnly: true,
	}); err != nil {
		t.Fatal(err)
	}
	var slices string
	for _, name := range []string{"a", "b"} {
		slices += fmt.Sprintf(`
resource "raytpu_slice" %[1]q {
  cluster        = raytpu_cluster.test.id
  name           = %[1]q
  generation     = "v6e"
  topology       = "2x4"
  chips_per_host = 4
  reservation    = { name = "rfill-v6e" }
}
`, name)
	}
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: testAccSliceConfig(cluster, slices)},
			{Config: testAccSliceConfig(cluster, slices), PlanOnly: true},
		},
	})
}
