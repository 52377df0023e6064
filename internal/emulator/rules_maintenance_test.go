package emulator

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules/rulestest"
)

const (
	noUpgrades = containerpb.MaintenanceExclusionOptions_NO_UPGRADES
	noMinorOrN = containerpb.MaintenanceExclusionOptions_NO_MINOR_OR_NODE_UPGRADES
	availText  = "maintenance policy would go longer than 32d without 48h maintenance availability"
)

// SetMaintenancePolicy takes a policy only with its current resource version, which every change
// replaces; a stale one is a conflict, and nothing changes.
func TestMaintenancePolicyResourceVersion(t *testing.T) {
	name := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	read := func() *containerpb.MaintenancePolicy {
		t.Helper()
		cl, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return cl.GetMaintenancePolicy()
	}
	before := read()
	if before.GetResourceVersion() == "" {
		t.Fatal("a new cluster reports no maintenance policy resource version")
	}
	set := func(p *containerpb.MaintenancePolicy, version string) (*containerpb.Operation, error) {
		p.ResourceVersion = version
		return c.SetMaintenancePolicy(ctx, &containerpb.SetMaintenancePolicyRequest{Name: name, MaintenancePolicy: p})
	}
	done := mustSucceed(t, c)(set(rulestest.DailyPolicy("03:00"), before.GetResourceVersion()))
	if done.OperationType != containerpb.Operation_UPDATE_CLUSTER {
		t.Errorf("operation type %s, want UPDATE_CLUSTER", done.OperationType)
	}
	after := read()
	if got := after.GetWindow().GetDailyMaintenanceWindow(); got.GetStartTime() != "03:00" || got.GetDuration() != "PT4H0M0S" {
		t.Errorf("daily window %v, want 03:00 for PT4H0M0S", got)
	}
	if after.GetResourceVersion() == before.GetResourceVersion() {
		t.Errorf("resource version %q unchanged by the update", after.GetResourceVersion())
	}
	for _, stale := range []string{before.GetResourceVersion(), ""} {
		_, err := set(rulestest.DailyPolicy("05:00"), stale)
		wantGoogleError(t, err, http.StatusConflict, "ABORTED", fmt.Sprintf("resource version %q does not match", stale))
	}
	if got := read(); got.GetWindow().GetDailyMaintenanceWindow().GetStartTime() != "03:00" {
		t.Errorf("a refused update changed the policy: %v", got)
	}
	// Rules apply to updates too; an empty policy clears it.
	_, err := set(rulestest.RecurringPolicy("2025-01-04T02:00:00Z", "2025-01-04T06:00:00Z", "FREQ=WEEKLY;BYDAY=SA"), after.GetResourceVersion())
	wantGoogleError(t, err, http.StatusBadRequest, "INVALID_ARGUMENT", availText)
	mustSucceed(t, c)(set(&containerpb.MaintenancePolicy{}, after.GetResourceVersion()))
	if got := read(); got.GetWindow().GetPolicy() != nil || got.GetResourceVersion() == "" {
		t.Errorf("cleared policy reads %v, want an empty window and a resource version", got)
	}
}

// CreateCluster refuses a policy GKE refuses, before creating anything, and takes one it takes.
func TestMaintenancePolicyOnCreate(t *testing.T) {
	c := restClient(t, testEmu.Token())
	ctx := testCtx(t)
	create := func(name string, channel containerpb.ReleaseChannel_Channel, p *containerpb.MaintenancePolicy) error {
		_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: testLocation, Cluster: &containerpb.Cluster{
			Name: name, ReleaseChannel: &containerpb.ReleaseChannel{Channel: channel}, MaintenancePolicy: p,
			NodePools: []*containerpb.NodePool{{Name: "system", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-4"}}},
		}})
		return err
	}
	minor := rulestest.WithExclusions(rulestest.DailyPolicy("03:00"), map[string]*containerpb.TimeWindow{
		"campaign": rulestest.Exclusion(noMinorOrN, timestamppb.Now(), timestamppb.New(time.Now().AddDate(0, 0, 30))),
	})
	noChannel := containerpb.ReleaseChannel_UNSPECIFIED //nolint:staticcheck // the API's "no channel", still served
	wantGoogleError(t, create("maint-nochannel", noChannel, minor), http.StatusBadRequest, "INVALID_ARGUMENT",
		"only clusters enrolled in a release channel")
	long := rulestest.WithExclusions(rulestest.DailyPolicy("03:00"), map[string]*containerpb.TimeWindow{
		"freeze": rulestest.Exclusion(noUpgrades, timestamppb.Now(), timestamppb.New(time.Now().AddDate(0, 0, 31))),
	})
	wantGoogleError(t, create("maint-long", containerpb.ReleaseChannel_REGULAR, long), http.StatusBadRequest, "INVALID_ARGUMENT", "cannot exceed 30 days")
	for _, name := range []string{"maint-nochannel", "maint-long"} {
		if _, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: testLocation + "/clusters/" + name}); err == nil {
			t.Errorf("refused cluster %s exists", name)
		}
	}
}
