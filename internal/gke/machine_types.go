package gke

import (
	"context"
	"sync"

	compute "google.golang.org/api/compute/v1"
)

// MachineShape is what a Compute Engine machine type gives a node: the vCPUs and memory that GKE
// counts against a cluster's node auto-provisioning limits, whatever pool the node is in ("Any
// auto-provisioning limits that you define are enforced based on the total CPU and memory
// resources used across all node pools", GKE "About node auto-provisioning").
type MachineShape struct {
	VCPUs int64
	// MemoryGB is Compute Engine's memoryMb / 1024: its "GB" of memory are GiB, the unit the
	// cluster's memory limit is compared in.
	MemoryGB float64
}

// machineShapes caches machine types, which do not change, by zone and name.
type machineShapes struct {
	mu    sync.Mutex
	known map[string]MachineShape
}

// MachineType reads the shape of a machine type in a zone (compute.machineTypes.get), once per
// client.
func (c *Client) MachineType(ctx context.Context, project, zone, name string) (MachineShape, error) {
	key := project + "/" + zone + "/" + name
	c.shapes.mu.Lock()
	s, ok := c.shapes.known[key]
	c.shapes.mu.Unlock()
	if ok {
		return s, nil
	}
	mt, err := call(ctx, c, "compute.machineTypes.get", func(ctx context.Context) (*compute.MachineType, error) {
		return c.compute.MachineTypes.Get(project, zone, name).Context(ctx).Do()
	})
	if err != nil {
		return MachineShape{}, err
	}
	s = MachineShape{VCPUs: mt.GuestCpus, MemoryGB: float64(mt.MemoryMb) / 1024}
	c.shapes.mu.Lock()
	if c.shapes.known == nil {
		c.shapes.known = map[string]MachineShape{}
	}
	c.shapes.known[key] = s
	c.shapes.mu.Unlock()
	return s, nil
}
