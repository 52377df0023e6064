package gke

import (
	"context"
	"fmt"

	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/option"
)

// Multi-host tpu7x slices are placed by a Compute Engine workload policy, not by COMPACT
// placement: "You create a workload policy and then apply it by using the --placement-policy
// flag. This policy replaces the --tpu-topology flag" (GKE "About Ironwood (TPU7x)"). The policy
// is a regional resource policy with workloadPolicy {type: HIGH_THROUGHPUT, acceleratorTopology}
// (compute v1 ResourcePolicyWorkloadPolicy), in the node pool's project and region
// (containerpb NodePool.PlacementPolicy.policy_name).

// WorkloadPolicyType is the workload policy type TPU slices use.
const WorkloadPolicyType = "HIGH_THROUGHPUT"

// WorkloadPolicy is what raytpu reads of a Compute Engine workload policy.
type WorkloadPolicy struct {
	Name                string
	Type                string
	AcceleratorTopology string
}

func newComputeService(ctx context.Context, cfg Config) (*compute.Service, error) {
	opts := []option.ClientOption{option.WithTokenSource(cfg.TokenSource)}
	if cfg.ComputeEndpoint != "" {
		if err := CheckEndpoint(cfg.ComputeEndpoint); err != nil {
			return nil, err
		}
		opts = append(opts, option.WithEndpoint(cfg.ComputeEndpoint))
	}
	if cfg.UserAgent != "" {
		opts = append(opts, option.WithUserAgent(cfg.UserAgent))
	}
	s, err := compute.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("creating the Compute Engine API client: %w", err)
	}
	return s, nil
}

// GetWorkloadPolicy reads a workload policy of a region.
func (c *Client) GetWorkloadPolicy(ctx context.Context, project, region, name string) (*WorkloadPolicy, error) {
	rp, err := call(ctx, c, "compute.resourcePolicies.get", func(ctx context.Context) (*compute.ResourcePolicy, error) {
		return c.compute.ResourcePolicies.Get(project, region, name).Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	p := &WorkloadPolicy{Name: rp.Name}
	if wp := rp.WorkloadPolicy; wp != nil {
		p.Type, p.AcceleratorTopology = wp.Type, wp.AcceleratorTopology
	}
	return p, nil
}

// CreateWorkloadPolicy creates a HIGH_THROUGHPUT workload policy for a slice of topology and waits
// for it. A policy of that name already there is taken as this one when it is the same.
func (c *Client) CreateWorkloadPolicy(ctx context.Context, project, region, name, topology string) error {
	op, err := call(ctx, c, "compute.resourcePolicies.insert", func(ctx context.Context) (*compute.Operation, error) {
		return c.compute.ResourcePolicies.Insert(project, region, &compute.ResourcePolicy{
			Name:           name,
			Description:    "Placement of a TPU slice of raytpu",
			WorkloadPolicy: &compute.ResourcePolicyWorkloadPolicy{Type: WorkloadPolicyType, AcceleratorTopology: topology},
		}).Context(ctx).Do()
	})
	if IsAlreadyExists(err) {
		existing, gerr := c.GetWorkloadPolicy(ctx, project, region, name)
		if gerr == nil && existing.Type == WorkloadPolicyType && existing.AcceleratorTopology == topology {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	return c.waitRegionOperation(ctx, project, region, op)
}

// DeleteWorkloadPolicy deletes a workload policy and waits; one already gone counts as deleted.
func (c *Client) DeleteWorkloadPolicy(ctx context.Context, project, region, name string) error {
	op, err := call(ctx, c, "compute.resourcePolicies.delete", func(ctx context.Context) (*compute.Operation, error) {
		return c.compute.ResourcePolicies.Delete(project, region, name).Context(ctx).Do()
	})
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.waitRegionOperation(ctx, project, region, op)
}

// waitRegionOperation waits for a regional Compute Engine operation with its wait method, which
// returns when the operation is DONE or after about two minutes, and returns its error.
func (c *Client) waitRegionOperation(ctx context.Context, project, region string, op *compute.Operation) error {
	name := op.Name
	for op.Status != "DONE" {
		next, err := call(ctx, c, "compute.regionOperations.wait", func(ctx context.Context) (*compute.Operation, error) {
			return c.compute.RegionOperations.Wait(project, region, name).Context(ctx).Do()
		})
		if err != nil {
			return fmt.Errorf("waiting for Compute Engine operation %s: %w", name, err)
		}
		op = next
	}
	if op.Error != nil && len(op.Error.Errors) > 0 {
		e := op.Error.Errors[0]
		return fmt.Errorf("compute operation %s failed: %s (%s)", op.Name, e.Message, e.Code)
	}
	return nil
}
