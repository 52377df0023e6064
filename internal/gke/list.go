package gke

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// AllLocations is the location that lists the clusters of every location of a project
// (container v1 ListClustersRequest.parent: "Location "-" matches all zones and all regions").
const AllLocations = "-"

// ListClusters reads the clusters of a project in a location, or in every location
// (AllLocations), with their node pools. GKE answers a list it could not complete with the zones it
// left out (ListClustersResponse.missing_zones: "the list of clusters returned may be missing
// those zones"): they are returned too, for the caller to say so.
func (c *Client) ListClusters(ctx context.Context, project, location string) (clusters []*containerpb.Cluster, missingZones []string, err error) {
	resp, err := call(ctx, c, "ListClusters", func(ctx context.Context) (*containerpb.ListClustersResponse, error) {
		return c.api.ListClusters(ctx, &containerpb.ListClustersRequest{
			Parent: fmt.Sprintf("projects/%s/locations/%s", project, location),
		}, noRetry)
	})
	if err != nil {
		return nil, nil, err
	}
	return resp.GetClusters(), resp.GetMissingZones(), nil
}
