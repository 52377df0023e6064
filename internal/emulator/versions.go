package emulator

import (
	"fmt"
	"strconv"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// gkeVersions are the versions the emulated GKE offers, newest first. They span both sides of the
// TPU generations' minimums (v6e 1.31.2-gke.1115000, tpu7x 1.34.0-gke.2201000) and of the Ray
// Operator add-on's (1.30.0-gke.1747000), so tests can hit every "too old" path. This is GKE's
// offer, not a TPU rule: the minimums themselves are in gketpu's rules.txt.
var gkeVersions = []string{
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

// defaultVersion is the default cluster version and the REGULAR channel's default.
const defaultVersion = "1.34.0-gke.2201000"

// channelVersions: per release channel, its default and the versions it offers.
var channelVersions = map[containerpb.ReleaseChannel_Channel]struct {
	def   string
	valid []string
}{
	containerpb.ReleaseChannel_RAPID:    {"1.35.0-gke.1795000", []string{"1.35.0-gke.1795000", "1.34.1-gke.1829001", "1.34.0-gke.2201000"}},
	containerpb.ReleaseChannel_REGULAR:  {defaultVersion, []string{"1.34.1-gke.1829001", "1.34.0-gke.2201000", "1.33.5-gke.1308000", "1.33.2-gke.1240000"}},
	containerpb.ReleaseChannel_STABLE:   {"1.33.5-gke.1308000", []string{"1.33.5-gke.1308000", "1.33.2-gke.1240000", "1.32.9-gke.1130000"}},
	containerpb.ReleaseChannel_EXTENDED: {"1.32.9-gke.1130000", gkeVersions[2:]},
}

func serverConfig() *containerpb.ServerConfig {
	sc := &containerpb.ServerConfig{
		DefaultClusterVersion: defaultVersion,
		ValidMasterVersions:   append([]string(nil), gkeVersions...),
		ValidNodeVersions:     append([]string(nil), gkeVersions...),
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

// resolveVersion turns what a request asked for into an offered version, as GKE does: "" and "-"
// mean def, "latest" the newest, "1.34" or "1.34.1" the newest of that release, an exact
// version itself. ok is false for a version GKE does not offer.
func resolveVersion(requested, def string) (string, bool) {
	switch requested {
	case "", "-":
		return def, true
	case "latest":
		return gkeVersions[0], true
	}
	v, ok := parseGKEVersion(requested)
	if !ok {
		return "", false
	}
	if v.parts == 4 {
		for _, s := range gkeVersions {
			if s == requested {
				return s, true
			}
		}
		return "", false
	}
	sep := "."
	if strings.Count(requested, ".") == 2 {
		sep = "-"
	}
	for _, s := range gkeVersions {
		if strings.HasPrefix(s, requested+sep) {
			return s, true
		}
	}
	return "", false
}

// versionLess compares two offered (exact) versions. A partial version compares as the lowest
// release it names (1.31 as 1.31.0-gke.0) and "latest" as above every version.
func versionLess(a, b string) bool {
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

// kubeletVersion is what a node of this GKE version reports, e.g. v1.34.0-gke.2201000.
func kubeletVersion(gkeVersion string) string { return "v" + gkeVersion }
