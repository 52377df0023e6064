package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// GKEVersions are the versions the emulated GKE offers, newest first. They span both sides of the
// TPU generations' minimums (v6e 1.31.2-gke.1115000, tpu7x 1.34.0-gke.2201000) and of the Ray
// Operator add-on's (1.30.0-gke.1747000) and of the slice controller's (1.35.2-gke.1842000, only
// the Rapid channel offers one above it), so tests can hit every "too old" path. This is GKE's
// offer, not a TPU rule: the minimums themselves are in gketpu's rules.txt and slice_controller.go.
var GKEVersions = []string{
	"1.36.0-gke.3712000",
	"1.35.0-gke.1795000",
	"1.34.1-gke.1829001",
	"1.34.0-gke.2201000",
	"1.33.5-gke.1308000",
	"1.33.2-gke.1240000",
	"1.32.9-gke.1130000",
	"1.31.13-gke.1023000",
	"1.31.2-gke.1115000",
	"1.31.1-gke.2105000",
	"1.30.14-gke.1145000",
	"1.30.0-gke.1747000",
	"1.30.0-gke.1167000",
	"1.29.15-gke.1218000",
}

// DefaultVersion is the default cluster version and the REGULAR channel's default.
const DefaultVersion = "1.34.0-gke.2201000"

// channelVersions: per release channel, its default and the versions it offers.
var channelVersions = map[containerpb.ReleaseChannel_Channel]struct {
	def   string
	valid []string
}{
	containerpb.ReleaseChannel_RAPID:    {"1.35.0-gke.1795000", []string{"1.36.0-gke.3712000", "1.35.0-gke.1795000", "1.34.1-gke.1829001", "1.34.0-gke.2201000"}},
	containerpb.ReleaseChannel_REGULAR:  {DefaultVersion, []string{"1.34.1-gke.1829001", "1.34.0-gke.2201000", "1.33.5-gke.1308000", "1.33.2-gke.1240000"}},
	containerpb.ReleaseChannel_STABLE:   {"1.33.5-gke.1308000", []string{"1.33.5-gke.1308000", "1.33.2-gke.1240000", "1.32.9-gke.1130000"}},
	containerpb.ReleaseChannel_EXTENDED: {"1.32.9-gke.1130000", GKEVersions[3:]},
}

func ServerConfig() *containerpb.ServerConfig {
	sc := &containerpb.ServerConfig{
		DefaultClusterVersion: DefaultVersion,
		ValidMasterVersions:   append([]string(nil), GKEVersions...),
		ValidNodeVersions:     append([]string(nil), GKEVersions...),
		DefaultImageType:      "COS_CONTAINERD",
		ValidImageTypes:       []string{"COS_CONTAINERD", "UBUNTU_CONTAINERD"},
	}
	for _, ch := range []containerpb.ReleaseChannel_Channel{
		containerpb.ReleaseChannel_RAPID, containerpb.ReleaseChannel_REGULAR,
		containerpb.ReleaseChannel_STABLE, containerpb.ReleaseChannel_EXTENDED,
	} {
		c := channelVersions[ch]
		sc.Channels = append(sc.Channels, &containerpb.ServerConfig_ReleaseChannelConfig{
			Channel:        ch,
			DefaultVersion: c.def,
			ValidVersions:  append([]string(nil), c.valid...),
		})
	}
	return sc
}

// resolveVersion turns a requested version into an offered one, as GKE documents its aliases
// (containerpb, Cluster.initial_cluster_version and ClusterUpdate.desired_master_version):
// "latest" picks the highest valid version, "1.X" the highest 1.X.Y-gke.N, "1.X.Y" the highest
// 1.X.Y-gke.N, "1.X.Y-gke.N" itself, and "" or "-" the default (def; the caller passes GKE's
// default for the context: the channel's default for a new cluster, the default version for
// desired_master_version "-"). ok is false for a version GKE does not offer.
func resolveVersion(requested, def string) (string, bool) {
	return resolveAmong(requested, def, GKEVersions)
}

// resolveAmong is resolveVersion over the versions offered (newest first).
func resolveAmong(requested, def string, offered []string) (string, bool) {
	switch requested {
	case "", "-":
		return def, true
	case "latest":
		if len(offered) == 0 {
			return "", false
		}
		return offered[0], true
	}
	if _, ok := parseGKEVersion(requested); !ok {
		return "", false
	}
	for _, s := range offered {
		if versionMatches(s, requested) {
			return s, true
		}
	}
	return "", false
}

// versionMatches reports whether the offered version s is what the exact or partial version
// requested names: 1.34 names 1.34.*, 1.34.1 names 1.34.1-gke.*.
func versionMatches(s, requested string) bool {
	v, ok := parseGKEVersion(requested)
	if !ok {
		return false
	}
	switch v.parts {
	case 4:
		return s == requested
	case 3:
		return strings.HasPrefix(s, requested+"-")
	default:
		return strings.HasPrefix(s, requested+".")
	}
}

// versionFormRE is the form GKE accepts in a version field before looking the version up; what
// does not match gets GKE's "is invalid" answer (versionFormError).
var versionFormRE = regexp.MustCompile(`^1\.[0-9]+(\.[0-9]+(-.+)?)?$`)

// versionFormError is GKE's answer to a version that is not of a form it knows, in GKE's words:
// `Version "v1.27.3-gke.100" is invalid. It should have the form 1.X, 1.X.Y, 1.X.Y-.*, 'latest'`
// (kubernetes-sigs/cluster-api-provider-gcp#1099, an UpdateNodePool answer). nil for "", "-",
// "latest" and well-formed versions.
func versionFormError(requested string) *apierr.Error {
	switch {
	case requested == "" || requested == "-" || requested == "latest" || versionFormRE.MatchString(requested):
		return nil
	}
	return apierr.Invalid("Version %q is invalid. It should have the form 1.X, 1.X.Y, 1.X.Y-.*, 'latest'", requested)
}

// resolveNodeVersion resolves a node pool's version against its cluster's control plane version.
//   - "" and "-" are the control plane's version: a new pool's version "defaults as described
//     [in] versioning#specifying_node_version" (containerpb NodePool.version), and for
//     UpdateNodePoolRequest.node_version "-" "picks the Kubernetes master version".
//   - Nodes "cannot be newer than the control plane version"
//     (https://cloud.google.com/kubernetes-engine/versioning, "Version support"), so an alias
//     ("latest", "1.X", "1.X.Y") picks the highest offered version of its release that is not
//     newer than the control plane: "the highest valid" version, valid for these nodes. That
//     reading of "valid" is INFERRED; no GKE answer to a node alias above the control plane was
//     found.
//   - An exact version must be offered and not newer than the control plane. For a newer minor
//     GKE answers `Node version "1.16.8-gke.9" must not have a greater minor version than
//     master version "1.15.11-gke.12".` (hashicorp/terraform-provider-google#6405,
//     rancher/rancher#32143); for a newer patch or build of the same minor the documented rule
//     holds and the wording is the emulator's.
//   - A version GKE does not offer: `Node version "1.13.6-gke.5" is unsupported.`
//     (jetstack/terraform-google-gke-cluster#28).
func resolveNodeVersion(requested, master string) (string, *apierr.Error) {
	if err := versionFormError(requested); err != nil {
		return "", err
	}
	if requested == "" || requested == "-" {
		return master, nil
	}
	newest, ok := resolveVersion(requested, master)
	if !ok {
		return "", apierr.Invalid("Node version %q is unsupported.", requested)
	}
	if v, _ := parseGKEVersion(requested); v.parts == 4 {
		return newest, newerThanMaster(newest, master)
	}
	for _, s := range GKEVersions {
		if !VersionLess(master, s) && (requested == "latest" || versionMatches(s, requested)) {
			return s, nil
		}
	}
	return "", newerThanMaster(newest, master)
}

// newerThanMaster refuses a node version newer than the control plane's (see resolveNodeVersion).
func newerThanMaster(node, master string) *apierr.Error {
	if !VersionLess(master, node) {
		return nil
	}
	n, m := mustParseGKEVersion(node), mustParseGKEVersion(master)
	if n.nums[0] != m.nums[0] || n.nums[1] > m.nums[1] {
		return apierr.Invalid("Node version %q must not have a greater minor version than master version %q.", node, master)
	}
	return apierr.Invalid("Node version %q must not be newer than master version %q.", node, master)
}

// channelOffer is a release channel's default and valid versions, or GKE's whole offer for a
// cluster not enrolled in a channel (UNSPECIFIED).
func channelOffer(channel containerpb.ReleaseChannel_Channel) (def string, valid []string) {
	if ch, ok := channelVersions[channel]; ok {
		return ch.def, ch.valid
	}
	return DefaultVersion, GKEVersions
}

// ResolveMasterVersion resolves Cluster.initial_cluster_version for a new cluster in channel.
// A cluster created in a release channel gets one of the channel's versions: GKE answers
// `Master version must be one of "RAPID" channel supported versions [1.18.9-gke.801,
// 1.18.9-gke.1501].` to a version outside it (didier-durand/microservices-on-cloud-kubernetes#1,
// gcloud clusters create --release-channel rapid), so aliases resolve among the channel's
// versions and "" or "-" is the channel's default. A version GKE does not offer at all gets
// `Master version "1.14.7-gke.10" is unsupported.` (GoogleCloudPlatform/gke-networking-demos#37).
// Without a channel (UNSPECIFIED) every offered version is open: which channel GKE enrolls such a
// cluster in, and whether it then restricts the version, was not found, so it is not enforced.
func ResolveMasterVersion(requested string, channel containerpb.ReleaseChannel_Channel) (string, *apierr.Error) {
	if err := versionFormError(requested); err != nil {
		return "", err
	}
	def, valid := channelOffer(channel)
	if v, ok := resolveAmong(requested, def, valid); ok {
		return v, nil
	}
	if _, ok := resolveVersion(requested, def); !ok {
		return "", apierr.Invalid("Master version %q is unsupported.", requested)
	}
	asc := make([]string, 0, len(valid))
	for i := len(valid) - 1; i >= 0; i-- {
		asc = append(asc, valid[i])
	}
	return "", apierr.Invalid("Master version must be one of %q channel supported versions [%s].", channel.String(), strings.Join(asc, ", "))
}

// ResolveMasterUpdate resolves ClusterUpdate.desired_master_version, whose "-" "picks the
// default Kubernetes version" (containerpb): the channel's default. Whether GKE holds an upgrade
// to the channel's versions as it does a new cluster was not found, so any offered version is
// taken.
func ResolveMasterUpdate(requested string, channel containerpb.ReleaseChannel_Channel) (string, *apierr.Error) {
	if err := versionFormError(requested); err != nil {
		return "", err
	}
	def, _ := channelOffer(channel)
	v, ok := resolveVersion(requested, def)
	if !ok {
		return "", apierr.Invalid("Master version %q is unsupported.", requested)
	}
	return v, nil
}

// VersionLess compares two offered (exact) versions. A partial version compares as the lowest
// release it names (1.31 as 1.31.0-gke.0) and "latest" as above every version.
func VersionLess(a, b string) bool {
	if a == "latest" || b == "latest" {
		return a != "latest" && b == "latest"
	}
	va, vb := mustParseGKEVersion(a), mustParseGKEVersion(b)
	for i := range va.nums {
		if va.nums[i] != vb.nums[i] {
			return va.nums[i] < vb.nums[i]
		}
	}
	return false
}

// gkeVersion is a GKE version, 1.31.2-gke.1115000, or the start of one as requests may give it
// (1.31, 1.31.2). GKE orders versions by major, minor and patch, then by the gke.N build number,
// each numerically: 1.31.2-gke.1115000 < 1.31.3-gke.100 < 1.32.0-gke.1.
type gkeVersion struct {
	nums [4]int // major, minor, patch, build; missing parts are 0
	// parts is how many of them were given: 2, 3 or 4.
	parts int
}

// parseGKEVersion accepts 1.31, 1.31.2 and 1.31.2-gke.1115000, in decimal numbers without signs
// or leading zeros; GKE writes no "v".
func parseGKEVersion(s string) (gkeVersion, bool) {
	release, build, hasBuild := strings.Cut(s, "-")
	fields := strings.Split(release, ".")
	if len(fields) < 2 || len(fields) > 3 || (hasBuild && len(fields) != 3) {
		return gkeVersion{}, false
	}
	var v gkeVersion
	for i, f := range fields {
		n, ok := versionNumber(f)
		if !ok {
			return gkeVersion{}, false
		}
		v.nums[i] = n
	}
	v.parts = len(fields)
	if hasBuild {
		b, ok := strings.CutPrefix(build, "gke.")
		if !ok {
			return gkeVersion{}, false
		}
		if v.nums[3], ok = versionNumber(b); !ok {
			return gkeVersion{}, false
		}
		v.parts = 4
	}
	return v, true
}

func mustParseGKEVersion(s string) gkeVersion {
	v, ok := parseGKEVersion(s)
	if !ok {
		panic(fmt.Sprintf("emulator: %q is not a GKE version", s))
	}
	return v
}

func versionNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// KubeletVersion is what a node of this GKE version reports, e.g. v1.34.0-gke.2201000.
func KubeletVersion(gkeVersion string) string { return "v" + gkeVersion }
