package gke

import (
	"context"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"
)

// A cluster's maintenance policy (containerpb MaintenancePolicy) is one window, daily or
// recurring, during which GKE may maintain it, and exclusions during which it may not. GKE's
// limits, as its documentation states them ("Maintenance windows and exclusions",
// https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions#limitations-maint-exclusions,
// linked by terraform-provider-google#15279, and "Configure maintenance windows and exclusions",
// https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-window):
const (
	// "No upgrades: Cannot exceed 30 days".
	MaxNoUpgradesExclusion = 30 * 24 * time.Hour
	// "No minor upgrades" and "No minor or node upgrades": "Cannot end more than 180 days after
	// the exclusion creation date" (unless they last until the end of support).
	MaxMinorExclusionAhead = 180 * 24 * time.Hour
	// "You can add a maximum of three maintenance exclusions that exclude all upgrades".
	MaxNoUpgradesExclusions = 3
	// "You can have a maximum of 20 maintenance exclusions in total".
	MaxExclusions = 20
	// "You must allow at least 48 hours of maintenance availability in a 32-day rolling window.
	// Only contiguous availability windows of at least four hours are considered." The no-upgrades
	// exclusions count against it: they "must be configured to allow for at least 48 hours of
	// maintenance availability in a 32-day rolling window". GKE's refusal reads "maintenance
	// policy would go longer than 32d without 48h maintenance availability" (users' field notes).
	// A later translation of the page says 92 days; the English page and GKE's message say 32.
	MinMaintenanceAvailability    = 48 * time.Hour
	MaintenanceAvailabilityPeriod = 32 * 24 * time.Hour
	MinMaintenanceBlock           = 4 * time.Hour
)

// SetMaintenancePolicy starts replacing a cluster's maintenance policy; an empty policy clears
// it. GKE takes the change only with the policy's current resource version ("Make a get() request
// to the cluster to get the current resource version and include it with requests to set the
// policy", containerpb MaintenancePolicy.resource_version), so every attempt reads it afresh: a
// retry after a conflict then carries the version that won.
func (c *Client) SetMaintenancePolicy(ctx context.Context, id ClusterID, policy *containerpb.MaintenancePolicy) (*containerpb.Operation, error) {
	if policy == nil {
		policy = &containerpb.MaintenancePolicy{}
	}
	defer c.wroteCluster(id)()
	return call(ctx, c, "SetMaintenancePolicy", func(ctx context.Context) (*containerpb.Operation, error) {
		cluster, err := c.api.GetCluster(ctx, &containerpb.GetClusterRequest{Name: id.String()}, noRetry)
		if err != nil {
			return nil, err
		}
		versioned, _ := proto.Clone(policy).(*containerpb.MaintenancePolicy)
		versioned.ResourceVersion = cluster.GetMaintenancePolicy().GetResourceVersion()
		req := &containerpb.SetMaintenancePolicyRequest{Name: id.String(), MaintenancePolicy: versioned}
		return c.api.SetMaintenancePolicy(ctx, req, noRetry)
	})
}
