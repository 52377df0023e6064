package emulator

import (
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// gkeVersions are the versions the emulated GKE offers, newest first. They span both sides of the
// TPU generations' minimums (v6e 1.31.2-gke.1115000, tpu7x 1.34.0-gke.2201000) and of the Ray
// Operator add-on's (1.30.0-gke.1747000), so tests can hit every "too old" path. This is GKE's
// offer, not a TPU rule: the minimums themselves come from internal/tpu.
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
	v, err := tpu.ParseVersion(requested)
	if err != nil {
		return "", false
	}
	if v.IsExact() {
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

// versionLess compares two offered (exact) versions.
func versionLess(a, b string) bool {
	return tpu.MustParseVersion(a).Compare(tpu.MustParseVersion(b)) < 0
}

// kubeletVersion is what a node of this GKE version reports, e.g. v1.34.0-gke.2201000.
func kubeletVersion(gkeVersion string) string { return "v" + gkeVersion }
