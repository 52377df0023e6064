package emulator

import (
	"strings"
	"testing"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	gcontainer "google.golang.org/api/container/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// createPoolForTest creates a node pool on cluster through the gapic client, waits for it and
// deletes it when the test ends.
func createPoolForTest(t *testing.T, c *container.ClusterManagerClient, cluster string, np *containerpb.NodePool) *containerpb.NodePool {
	t.Helper()
	ctx := testCtx(t)
	mustSucceed(t, c)(c.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: np}))
	name := cluster + "/nodePools/" + np.Name
	t.Cleanup(func() {
		mustSucceed(t, c)(c.DeleteNodePool(testCtx(t), &containerpb.DeleteNodePoolRequest{Name: name}))
	})
	got, err := c.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func noReservation() *containerpb.ReservationAffinity {
	return &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_NO_RESERVATION}
}

func autoscaling(lo, hi int32) *containerpb.NodePoolAutoscaling {
	return &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: lo, MaxNodeCount: hi}
}

// queuedPool is a queued provisioning pool as GKE takes it: autoscaling from 0, no initial nodes,
// NO_RESERVATION.
func queuedPool(name, machine string, hi int32, pp *containerpb.NodePool_PlacementPolicy) *containerpb.NodePool {
	return &containerpb.NodePool{
		Name: name, PlacementPolicy: pp, Autoscaling: autoscaling(0, hi),
		QueuedProvisioning: &containerpb.NodePool_QueuedProvisioning{Enabled: true},
		Config:             &containerpb.NodeConfig{MachineType: machine, ReservationAffinity: noReservation()},
	}
}

// flexPool is a flex-start pool as GKE takes it: autoscaling, no initial nodes.
func flexPool(name, machine string, hi int32, pp *containerpb.NodePool_PlacementPolicy) *containerpb.NodePool {
	return &containerpb.NodePool{
		Name: name, PlacementPolicy: pp, Autoscaling: autoscaling(0, hi),
		Config: &containerpb.NodeConfig{MachineType: machine, FlexStart: ptr(true), ReservationAffinity: noReservation()},
	}
}

func ptr[T any](v T) *T { return &v }

func edit(np *containerpb.NodePool, f func(*containerpb.NodePool)) *containerpb.NodePool {
	f(np)
	return np
}

// wantRefused checks that creating np on cluster is refused with 400 INVALID_ARGUMENT and msg.
func wantRefused(t *testing.T, c *container.ClusterManagerClient, cluster string, np *containerpb.NodePool, msg string) {
	t.Helper()
	_, err := c.CreateNodePool(testCtx(t), &containerpb.CreateNodePoolRequest{Parent: cluster, NodePool: np})
	wantGoogleError(t, err, 400, "INVALID_ARGUMENT", msg)
}

func TestQueuedProvisioningRules(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	v6e4x4 := compact("4x4")
	refused := []struct {
		name string
		np   *containerpb.NodePool
		msg  string
	}{
		{"without autoscaling", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) { np.Autoscaling = nil }),
			"queued provisioning requires autoscaling to be enabled"},
		{"autoscaling disabled", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) { np.Autoscaling.Enabled = false }),
			"queued provisioning requires autoscaling to be enabled"},
		{"minimum above 0", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) { np.Autoscaling.MinNodeCount = 1 }),
			"autoscaling minimum node count must be set to 0"},
		{"total minimum above 0", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) {
			np.Autoscaling = &containerpb.NodePoolAutoscaling{Enabled: true, TotalMinNodeCount: 1, TotalMaxNodeCount: 3}
		}), "autoscaling minimum node count must be set to 0"},
		{"initial nodes", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) { np.InitialNodeCount = 1 }),
			"must have initial_node_count 0, got 1"},
		// GKE's text, hashicorp/terraform-provider-google#18341: an unset affinity is refused too.
		{"reservation affinity unset", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) { np.Config.ReservationAffinity = nil }),
			"Queued_provisioning requires reservation affinity to be set to none"},
		{"specific reservation", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) {
			np.Config.ReservationAffinity = &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_SPECIFIC_RESERVATION,
				Key: "compute.googleapis.com/reservation-name", Values: []string{"r"}}
		}), "Queued_provisioning requires reservation affinity to be set to none"},
		{"any reservation", edit(queuedPool("rq-bad", "e2-standard-4", 3, nil), func(np *containerpb.NodePool) {
			np.Config.ReservationAffinity.ConsumeReservationType = containerpb.ReservationAffinity_ANY_RESERVATION
		}), "Queued_provisioning requires reservation affinity to be set to none"},
		{"TPU without flex-start", queuedPool("rq-bad", "ct6e-standard-4t", 4, v6e4x4), "Queued_provisioning doesn't support TPUs"},
		{"single-host TPU without flex-start", queuedPool("rq-bad", "ct6e-standard-1t", 1, nil), "Queued_provisioning doesn't support TPUs"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, c, cluster, tc.np, tc.msg) })
	}

	// What GKE reports of a queued provisioning pool it took (k8s-config-connector's recorded
	// GKE 1.30.5 response): location policy ANY, the gke-queued taint, SHORT_LIVED upgrades.
	t.Run("CPU pool", func(t *testing.T) {
		np := createPoolForTest(t, c, cluster, queuedPool("rq-cpu", "e2-standard-4", 3, nil))
		if a := np.Autoscaling; !a.Enabled || a.MinNodeCount != 0 || a.MaxNodeCount != 3 || a.LocationPolicy != containerpb.NodePoolAutoscaling_ANY {
			t.Errorf("autoscaling reported as %v", a)
		}
		if len(np.Config.Taints) != 1 || np.Config.Taints[0].Key != "cloud.google.com/gke-queued" || np.Config.Taints[0].Value != "true" ||
			np.Config.Taints[0].Effect != containerpb.NodeTaint_NO_SCHEDULE {
			t.Errorf("taints reported as %v", np.Config.Taints)
		}
		if s := np.UpgradeSettings; s.GetStrategy() != containerpb.NodePoolUpdateStrategy_SHORT_LIVED || s.GetMaxSurge() != 0 {
			t.Errorf("upgrade settings reported as %v", s)
		}
		if np.InitialNodeCount != 0 || !np.QueuedProvisioning.GetEnabled() ||
			np.Config.ReservationAffinity.GetConsumeReservationType() != containerpb.ReservationAffinity_NO_RESERVATION {
			t.Errorf("pool reported as %v", np)
		}
		// GKE's words for a resize (the same recorded session).
		_, err := c.SetNodePoolSize(testCtx(t), &containerpb.SetNodePoolSizeRequest{Name: cluster + "/nodePools/rq-cpu", NodeCount: 2})
		wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "Manual resizing of queued provisioning node pool (rq-cpu) to a value other than 0 is not allowed.")
		// Autoscaling cannot be turned off under queued provisioning.
		_, err = c.SetNodePoolAutoscaling(testCtx(t), &containerpb.SetNodePoolAutoscalingRequest{
			Name: cluster + "/nodePools/rq-cpu", Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: false}})
		wantGoogleError(t, err, 400, "INVALID_ARGUMENT", "queued provisioning requires autoscaling to be enabled")
	})

	// With flex-start GKE takes queued provisioning on TPUs (cluster-toolkit's v6e and tpu7x
	// blueprints), here through the discovery client.
	t.Run("TPU slice with flex-start", func(t *testing.T) {
		s := discoveryClient(t)
		op, err := s.Projects.Locations.Clusters.NodePools.Create(cluster, &gcontainer.CreateNodePoolRequest{NodePool: &gcontainer.NodePool{
			Name:               "rq-v6e",
			Autoscaling:        &gcontainer.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 4, LocationPolicy: "ANY"},
			QueuedProvisioning: &gcontainer.QueuedProvisioning{Enabled: true},
			PlacementPolicy:    &gcontainer.PlacementPolicy{Type: "COMPACT", TpuTopology: "4x4"},
			Config: &gcontainer.NodeConfig{MachineType: "ct6e-standard-4t", FlexStart: true,
				ReservationAffinity: &gcontainer.ReservationAffinity{ConsumeReservationType: "NO_RESERVATION"}},
		}}).Do()
		if err != nil {
			t.Fatal(err)
		}
		gc := restClient(t, testEmu.Token())
		waitDiscoveryOp(t, gc, op.SelfLink)
		name := cluster + "/nodePools/rq-v6e"
		t.Cleanup(func() {
			mustSucceed(t, gc)(gc.DeleteNodePool(testCtx(t), &containerpb.DeleteNodePoolRequest{Name: name}))
		})
		np, err := s.Projects.Locations.Clusters.NodePools.Get(name).Do()
		if err != nil {
			t.Fatal(err)
		}
		if np.Status != "RUNNING" || !np.Config.FlexStart || !np.QueuedProvisioning.Enabled || np.Autoscaling.MaxNodeCount != 4 ||
			np.Autoscaling.LocationPolicy != "ANY" || np.InitialNodeCount != 0 || np.UpgradeSettings.Strategy != "SHORT_LIVED" {
			t.Errorf("pool reported as %+v (autoscaling %+v)", np, np.Autoscaling)
		}
	})
}

// waitDiscoveryOp waits for an operation a discovery client call returned, by its selfLink.
func waitDiscoveryOp(t *testing.T, c *container.ClusterManagerClient, selfLink string) {
	t.Helper()
	name := strings.TrimPrefix(selfLink, testEmu.Endpoint()+"/v1/")
	op, err := c.GetOperation(testCtx(t), &containerpb.GetOperationRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if done, _ := waitOp(t, c, op); done.Error != nil {
		t.Fatalf("operation %s failed: %v", name, done.Error)
	}
}

func TestFlexStartRules(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	refused := []struct {
		name string
		np   *containerpb.NodePool
		msg  string
	}{
		// GKE's texts (field notes, yangwhale/gpu-tpu-pedia).
		{"without autoscaling", edit(flexPool("rf-bad", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) { np.Autoscaling = nil }),
			"Flex start node pools require autoscaling enabled."},
		{"initial nodes", edit(flexPool("rf-bad", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) { np.InitialNodeCount = 1 }),
			"Flex start node pools require initial node count to be set to 0."},
		{"a multi-host slice created whole", edit(flexPool("rf-bad", "ct6e-standard-4t", 4, compact("4x4")), func(np *containerpb.NodePool) {
			np.InitialNodeCount = 4
		}), "Flex start node pools require initial node count to be set to 0."},
		{"TPU v4", flexPool("rf-bad", "ct4p-hightpu-4t", 1, nil), "TPU v3 and v4 are not supported"},
		{"TPU below 1.33.0-gke.1712000", edit(flexPool("rf-bad", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) { np.Version = "1.32.9-gke.1130000" }),
			"require GKE version 1.33.0-gke.1712000 or later; the node version is 1.32.9-gke.1130000"},
		{"longer than seven days", edit(flexPool("rf-bad", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) {
			np.Config.MaxRunDuration = durationpb.New(7*24*time.Hour + time.Second)
		}), "at most 7 days"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, c, cluster, tc.np, tc.msg) })
	}

	t.Run("seven days on 1.33", func(t *testing.T) {
		np := createPoolForTest(t, c, cluster, edit(flexPool("rf-v6e", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) {
			np.Version = "1.33.2-gke.1240000"
			np.Config.MaxRunDuration = durationpb.New(7 * 24 * time.Hour)
		}))
		if np.Version != "1.33.2-gke.1240000" || np.Config.GetMaxRunDuration().AsDuration() != 7*24*time.Hour || !np.Config.GetFlexStart() ||
			np.UpgradeSettings.GetStrategy() != containerpb.NodePoolUpdateStrategy_SHORT_LIVED || np.Autoscaling.LocationPolicy != containerpb.NodePoolAutoscaling_BALANCED {
			t.Errorf("pool reported as %v", np)
		}
	})

	// Spot, a reservation and auto-repair are other tools' client-side refusals, not GKE's: the
	// emulator takes them.
	t.Run("client-side checks of other tools are not GKE rules", func(t *testing.T) {
		cf := rules.ClusterFacts{Location: testZone, Locations: []string{testZone}, MasterVersion: rules.DefaultVersion}
		for _, np := range []*containerpb.NodePool{
			edit(flexPool("spot", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) { np.Config.Spot = true }),
			edit(flexPool("reserved", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) {
				np.Config.ReservationAffinity = &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_ANY_RESERVATION}
			}),
			edit(flexPool("repaired", "ct6e-standard-4t", 1, nil), func(np *containerpb.NodePool) {
				np.Management = &containerpb.NodeManagement{AutoRepair: true, AutoUpgrade: true}
			}),
			edit(queuedPool("queued-spot", "e2-standard-4", 2, nil), func(np *containerpb.NodePool) { np.Config.Spot = true }),
		} {
			if _, err := rules.PlanNodePool(cf, np); err != nil {
				t.Errorf("%s: %v", np.Name, err)
			}
		}
	})
}

// Reservation affinity is stored and reported as sent, in each of its shapes.
func TestReservationAffinityShapes(t *testing.T) {
	cluster := sharedCluster(t)
	c := restClient(t, testEmu.Token())
	s := discoveryClient(t)
	for _, tc := range []struct {
		name string
		ra   *containerpb.ReservationAffinity
	}{
		{"rr-none", noReservation()},
		{"rr-any", &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_ANY_RESERVATION}},
		{"rr-specific", &containerpb.ReservationAffinity{ConsumeReservationType: containerpb.ReservationAffinity_SPECIFIC_RESERVATION,
			Key: "compute.googleapis.com/reservation-name", Values: []string{"projects/shared-capacity/reservations/tpu-v6e"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := createPoolForTest(t, c, cluster, &containerpb.NodePool{Name: tc.name,
				Config: &containerpb.NodeConfig{MachineType: "e2-standard-4", Spot: tc.name == "rr-none", ReservationAffinity: tc.ra}})
			got := np.Config.ReservationAffinity
			if got.ConsumeReservationType != tc.ra.ConsumeReservationType || got.Key != tc.ra.Key || strings.Join(got.Values, ",") != strings.Join(tc.ra.Values, ",") {
				t.Errorf("gapic client reads %v", got)
			}
			dnp, err := s.Projects.Locations.Clusters.NodePools.Get(cluster + "/nodePools/" + tc.name).Do()
			if err != nil {
				t.Fatal(err)
			}
			if d := dnp.Config.ReservationAffinity; d.ConsumeReservationType != tc.ra.ConsumeReservationType.String() || d.Key != tc.ra.Key ||
				strings.Join(d.Values, ",") != strings.Join(tc.ra.Values, ",") || dnp.Config.Spot != (tc.name == "rr-none") {
				t.Errorf("discovery client reads %+v", d)
			}
		})
	}
}
