package gke

import (
	"regexp"
	"strings"
)

// NamePattern is GKE's rule for cluster and node pool names: 1 to 40 lower-case letters, digits
// and hyphens, starting with a letter and not ending with a hyphen (GKE answers names that break
// it with "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)'").
var NamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)

// zonePattern recognises a zone (us-central2-b) as opposed to a region (us-central2).
var zonePattern = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+-[a-z]$`)

// IsZone reports whether a location is a zone rather than a region.
func IsZone(location string) bool { return zonePattern.MatchString(location) }

// Region is the region of a location: the location itself, or the region a zone is in.
func Region(location string) string {
	if IsZone(location) {
		return location[:strings.LastIndex(location, "-")]
	}
	return location
}

// Zone is the zone of a zonal cluster, where its node pools live unless told otherwise; ok is
// false for a regional cluster.
func (c ClusterID) Zone() (zone string, ok bool) { return c.Location, IsZone(c.Location) }
