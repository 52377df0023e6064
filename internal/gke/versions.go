package gke

import (
	"fmt"
	"sort"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// Users write GKE versions as GKE's API takes them (containerpb NodePool.version and
// Cluster.initial_cluster_version): "latest" (the highest valid version), "1.X" (the highest valid
// 1.X.Y-gke.N), "1.X.Y" (the highest valid 1.X.Y-gke.N), an exact "1.X.Y-gke.N", or "-" / ""
// (the default: for a node pool, the control plane's version). raytpu resolves them itself, to
// the version it then requests, so that what it checks at plan time is what GKE runs.

// VersionError is a version that the location does not offer, with the offered versions nearest
// to it.
type VersionError struct {
	Requested string
	// Why says what was wrong, without the version.
	Why     string
	Nearest []string
}

func (e *VersionError) Error() string {
	msg := fmt.Sprintf("GKE version %q %s", e.Requested, e.Why)
	if len(e.Nearest) > 0 {
		msg += "; the nearest offered: " + strings.Join(e.Nearest, ", ")
	}
	return msg
}

// ResolveNodeVersion is the node pool version to request for what a user wrote: the newest
// version offered for nodes (ServerConfig.validNodeVersions) that matches it and is not newer
// than the control plane's (GKE refuses a node version newer than the master's). "" and "-" are
// the control plane's own version.
func ResolveNodeVersion(requested, master string, offered []string) (string, error) {
	if requested == "" || requested == "-" {
		return master, nil
	}
	ceiling, err := tpu.ParseVersion(master)
	if err != nil || !ceiling.IsExact() {
		return "", fmt.Errorf("the control plane reports version %q, which is not an exact GKE version", master)
	}
	want, err := tpu.ParseVersion(requested)
	if err != nil {
		return "", err
	}
	// The control plane's own version is always valid for its nodes, offered or not (a cluster may
	// run a version that is no longer offered for new clusters).
	candidates := append([]string{master}, offered...)
	best, found := newestMatching(want, candidates, func(v tpu.Version) bool { return v.Compare(ceiling) <= 0 })
	if found {
		return best.String(), nil
	}
	why := "is not offered for nodes in this location"
	if _, offeredAtAll := newestMatching(want, offered, func(tpu.Version) bool { return true }); offeredAtAll {
		why = fmt.Sprintf("resolves only to versions newer than the control plane's %s, and nodes may not run newer than the control plane", master)
	}
	return "", &VersionError{Requested: requested, Why: why, Nearest: nearest(want, candidates, ceiling)}
}

// ResolveMasterVersion is the control plane version to request for what a user wrote: the newest
// offered version (of the release channel when the cluster is enrolled in one, else
// ServerConfig.validMasterVersions) that matches it. where names the offer in errors, such as
// "in the REGULAR release channel of us-central2".
func ResolveMasterVersion(requested string, offered []string, where string) (string, error) {
	if requested == "" || requested == "-" {
		return "", nil
	}
	want, err := tpu.ParseVersion(requested)
	if err != nil {
		return "", err
	}
	if best, ok := newestMatching(want, offered, func(tpu.Version) bool { return true }); ok {
		return best.String(), nil
	}
	return "", &VersionError{Requested: requested, Why: "is not offered " + where, Nearest: nearest(want, offered, tpu.Version{})}
}

// MasterVersionsOffered are the control plane versions a cluster in channel may be created with
// or upgraded to: the channel's valid versions, or every valid master version without a channel.
func MasterVersionsOffered(sc *containerpb.ServerConfig, channel containerpb.ReleaseChannel_Channel) []string {
	for _, c := range sc.GetChannels() {
		if c.GetChannel() == channel {
			return c.GetValidVersions()
		}
	}
	return sc.GetValidMasterVersions()
}

// newestMatching is the newest exact version in candidates that want matches and keep accepts.
func newestMatching(want tpu.Version, candidates []string, keep func(tpu.Version) bool) (tpu.Version, bool) {
	var best tpu.Version
	found := false
	for _, s := range candidates {
		v, err := tpu.ParseVersion(s)
		if err != nil || !v.IsExact() || !want.Matches(v) || !keep(v) {
			continue
		}
		if !found || best.Less(v) {
			best, found = v, true
		}
	}
	return best, found
}

// nearest lists up to three offered versions closest to want (those of its minor release first,
// newest first), not newer than ceiling when ceiling is exact.
func nearest(want tpu.Version, offered []string, ceiling tpu.Version) []string {
	type scored struct {
		v        tpu.Version
		distance int
	}
	var all []scored
	seen := map[string]bool{}
	for _, s := range offered {
		v, err := tpu.ParseVersion(s)
		if err != nil || !v.IsExact() || seen[s] || (ceiling.IsExact() && ceiling.Less(v)) {
			continue
		}
		seen[s] = true
		d := 0
		if !want.IsLatest() && v.MinorString() != want.MinorString() {
			d = 1
		}
		all = append(all, scored{v, d})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].distance != all[j].distance {
			return all[i].distance < all[j].distance
		}
		if all[i].distance == 0 {
			return all[j].v.Less(all[i].v)
		}
		// Other releases: the closest to want first.
		return absDiff(all[i].v, want) < absDiff(all[j].v, want)
	})
	var out []string
	for i := 0; i < len(all) && i < 3; i++ {
		out = append(out, all[i].v.String())
	}
	return out
}

// absDiff orders versions of other minor releases by how far their minor release is from want's.
func absDiff(v, want tpu.Version) int {
	d := minorIndex(v) - minorIndex(want)
	if d < 0 {
		return -d
	}
	return d
}

func minorIndex(v tpu.Version) int {
	var major, minor int
	_, _ = fmt.Sscanf(v.MinorString(), "%d.%d", &major, &minor)
	return major*1000 + minor
}
