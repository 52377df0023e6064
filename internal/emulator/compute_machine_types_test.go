package emulator

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Compute Engine answers machine types from the emulator's table, and the nodes of a pool report
// their machine type's vCPUs and memory as capacity, less GKE's reservations as allocatable.
func TestMachineTypesAndNodeResources(t *testing.T) {
	cs := computeClient(t)
	mt, err := cs.MachineTypes.Get(testProject, testZone, "ct6e-standard-4t").Do()
	if err != nil {
		t.Fatal(err)
	}
	if mt.GuestCpus != 180 || mt.MemoryMb != 720*1024 || mt.Zone != testZone {
		t.Errorf("ct6e-standard-4t: %d vCPUs, %d MB in %s; want 180 vCPUs, 720 GB (737280 MB)", mt.GuestCpus, mt.MemoryMb, mt.Zone)
	}
	_, err = cs.MachineTypes.Get(testProject, testZone, "ct6e-standard-2t").Do()
	wantComputeError(t, err, 404, "notFound", "ct6e-standard-2t")
	list, err := cs.MachineTypes.List(testProject, testZone).Do()
	if err != nil || len(list.Items) < 30 {
		t.Fatalf("machineTypes.list: %d items, %v", len(list.Items), err)
	}

	cluster, c, kube, _ := sharedKube(t)
	wantRefused(t, c, cluster, &containerpb.NodePool{Name: "mt-none", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-standard-3"}},
		`Machine type "e2-standard-3" does not exist in zone "`+testZone+`".`)
	createPoolForTest(t, c, cluster, tpuPool("mt-v6e", "ct6e-standard-4t", 1, nil))
	nodes, err := kube.CoreV1().Nodes().List(testCtx(t), metav1.ListOptions{LabelSelector: "cloud.google.com/gke-nodepool in (system,mt-v6e)"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][4]string{
		// e2-standard-4: 4 vCPUs less 80m; 16 GiB less 2662 MiB and 100 MiB for eviction.
		"e2-standard-4": {"4", "3920m", "16Gi", "13622Mi"},
		// ct6e-standard-4t: 180 vCPUs less 520m; 720 GiB less 21667 MiB and 100 MiB.
		"ct6e-standard-4t": {"180", "179480m", "720Gi", "715513Mi"},
	}
	seen := 0
	for _, n := range nodes.Items {
		w, ok := want[n.Labels["node.kubernetes.io/instance-type"]]
		if !ok {
			continue
		}
		seen++
		cpu, mem := n.Status.Capacity.Cpu(), n.Status.Capacity.Memory()
		acpu, amem := n.Status.Allocatable.Cpu(), n.Status.Allocatable.Memory()
		if cpu.String() != w[0] || acpu.String() != w[1] || mem.String() != w[2] || amem.String() != w[3] {
			t.Errorf("node %s: capacity %s CPU %s memory, allocatable %s CPU %s memory; want %v", n.Name, cpu, mem, acpu, amem, w)
		}
	}
	if seen != 2 {
		t.Fatalf("found %d of the two nodes: %v", seen, nodes.Items)
	}
}
