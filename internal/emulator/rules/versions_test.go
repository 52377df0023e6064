package rules

import (
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// A node pool's version against a control plane at 1.34.0-gke.2201000, below the newest 1.34
// (1.34.1-gke.1829001) and the newest version (1.35.0-gke.1795000).
func TestResolveNodeVersion(t *testing.T) {
	const master = "1.34.0-gke.2201000"
	ok := []struct{ in, want string }{
		{"", master},  // NodePool.version unset: the control plane's
		{"-", master}, // UpdateNodePoolRequest.node_version "-": "picks the Kubernetes master version"
		{"latest", master},
		{"1.34", master}, // the highest 1.34 not newer than the control plane, not 1.34.1
		{"1.34.0", master},
		{"1.33", "1.33.5-gke.1308000"},
		{"1.33.2", "1.33.2-gke.1240000"},
		{"1.31.2-gke.1115000", "1.31.2-gke.1115000"},
	}
	for _, tc := range ok {
		if got, err := resolveNodeVersion(tc.in, master); err != nil || got != tc.want {
			t.Errorf("resolveNodeVersion(%q) = %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"1.35.0-gke.1795000", `Node version "1.35.0-gke.1795000" must not have a greater minor version than master version "1.34.0-gke.2201000".`},
		{"1.35", `Node version "1.35.0-gke.1795000" must not have a greater minor version than master version`},
		{"1.34.1-gke.1829001", `Node version "1.34.1-gke.1829001" must not be newer than master version "1.34.0-gke.2201000".`},
		{"1.34.1", `Node version "1.34.1-gke.1829001" must not be newer than master version`},
		{"1.99", `Node version "1.99" is unsupported.`},
		{"1.34.0-gke.1", `Node version "1.34.0-gke.1" is unsupported.`},
		{"1.34.0-rc.1", `Node version "1.34.0-rc.1" is unsupported.`},
		{"v1.34.0-gke.2201000", `Version "v1.34.0-gke.2201000" is invalid. It should have the form 1.X, 1.X.Y, 1.X.Y-.*, 'latest'`},
		{"banana", `Version "banana" is invalid.`},
	}
	for _, tc := range bad {
		if got, err := resolveNodeVersion(tc.in, master); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("resolveNodeVersion(%q) = %q %v, want %q", tc.in, got, err, tc.msg)
		}
	}
}

// noChannel is a cluster not enrolled in a release channel.
const noChannel = containerpb.ReleaseChannel_UNSPECIFIED //nolint:staticcheck // what GKE reports for a cluster without a channel

func TestResolveMasterVersion(t *testing.T) {
	ok := []struct {
		in      string
		channel containerpb.ReleaseChannel_Channel
		want    string
	}{
		{"", containerpb.ReleaseChannel_REGULAR, DefaultVersion},
		{"-", containerpb.ReleaseChannel_STABLE, "1.33.5-gke.1308000"},
		{"", containerpb.ReleaseChannel_RAPID, "1.35.0-gke.1795000"},
		// "latest" and "1.X" pick among the channel's versions.
		{"latest", containerpb.ReleaseChannel_REGULAR, "1.34.1-gke.1829001"},
		{"latest", noChannel, GKEVersions[0]},
		{"1.33", containerpb.ReleaseChannel_STABLE, "1.33.5-gke.1308000"},
		{"1.35", containerpb.ReleaseChannel_RAPID, "1.35.0-gke.1795000"},
		// Without a channel every offered version is open.
		{"1.30.0-gke.1167000", noChannel, "1.30.0-gke.1167000"},
		{"", noChannel, DefaultVersion},
	}
	for _, tc := range ok {
		if got, err := ResolveMasterVersion(tc.in, tc.channel); err != nil || got != tc.want {
			t.Errorf("resolveMasterVersion(%q, %s) = %q %v, want %q", tc.in, tc.channel, got, err, tc.want)
		}
	}
	bad := []struct {
		in      string
		channel containerpb.ReleaseChannel_Channel
		msg     string
	}{
		{"1.35", containerpb.ReleaseChannel_REGULAR,
			`Master version must be one of "REGULAR" channel supported versions [1.33.2-gke.1240000, 1.33.5-gke.1308000, 1.34.0-gke.2201000, 1.34.1-gke.1829001].`},
		{"1.31.2-gke.1115000", containerpb.ReleaseChannel_RAPID, `Master version must be one of "RAPID" channel supported versions [`},
		{"1.99.0-gke.1", containerpb.ReleaseChannel_REGULAR, `Master version "1.99.0-gke.1" is unsupported.`},
		{"1.99", noChannel, `Master version "1.99" is unsupported.`},
		{"v1.34", containerpb.ReleaseChannel_REGULAR, `Version "v1.34" is invalid.`},
	}
	for _, tc := range bad {
		if got, err := ResolveMasterVersion(tc.in, tc.channel); err == nil || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("resolveMasterVersion(%q, %s) = %q %v, want %q", tc.in, tc.channel, got, err, tc.msg)
		}
	}
	// desired_master_version "-" "picks the default Kubernetes version": the channel's.
	if got, err := ResolveMasterUpdate("-", containerpb.ReleaseChannel_RAPID); err != nil || got != "1.35.0-gke.1795000" {
		t.Errorf("resolveMasterUpdate(-, RAPID) = %q %v", got, err)
	}
	if got, err := ResolveMasterUpdate("latest", containerpb.ReleaseChannel_STABLE); err != nil || got != GKEVersions[0] {
		t.Errorf("resolveMasterUpdate(latest, STABLE) = %q %v", got, err)
	}
}

func TestResolveVersion(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", DefaultVersion}, {"-", DefaultVersion}, {"latest", GKEVersions[0]},
		{"1.34", "1.34.1-gke.1829001"}, {"1.34.0", "1.34.0-gke.2201000"}, {"1.31.2-gke.1115000", "1.31.2-gke.1115000"},
	}
	for _, tc := range tests {
		if got, ok := resolveVersion(tc.in, DefaultVersion); !ok || got != tc.want {
			t.Errorf("resolveVersion(%q) = %q %v, want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"1.99", "1.34.9", "1.34.0-gke.1", "v1.34", "banana"} {
		if got, ok := resolveVersion(bad, DefaultVersion); ok {
			t.Errorf("resolveVersion(%q) = %q, want unsupported", bad, got)
		}
	}
	for i := 1; i < len(GKEVersions); i++ {
		if !VersionLess(GKEVersions[i], GKEVersions[i-1]) {
			t.Errorf("gkeVersions not newest first at %s", GKEVersions[i])
		}
	}
}
