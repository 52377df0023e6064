package gke

import (
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

var offered = []string{
	"1.35.0-gke.1795000", "1.34.1-gke.1829001", "1.34.0-gke.2201000", "1.33.5-gke.1308000",
	"1.33.2-gke.1240000", "1.31.2-gke.1115000", "1.31.1-gke.2105000",
}

func TestResolveNodeVersion(t *testing.T) {
	const master = "1.34.0-gke.2201000"
	for _, tc := range []struct {
		requested, master, want, err string
	}{
		{"", master, master, ""},
		{"-", master, master, ""},
		// A partial version resolves to the newest of its range that the control plane allows:
		// 1.34.1 is offered but newer than the master.
		{"1.34", master, "1.34.0-gke.2201000", ""},
		{"1.33", master, "1.33.5-gke.1308000", ""},
		{"1.33.2", master, "1.33.2-gke.1240000", ""},
		{"latest", master, master, ""},
		{"latest", "1.35.0-gke.1795000", "1.35.0-gke.1795000", ""},
		{"1.31.2-gke.1115000", master, "1.31.2-gke.1115000", ""},
		// The control plane's version is valid for its nodes even when no longer offered.
		{"1.30", "1.30.9-gke.1", "1.30.9-gke.1", ""},
		{"1.35", master, "", "newer than the control plane's 1.34.0-gke.2201000"},
		{"1.32", master, "", "is not offered for nodes"},
		{"1.31.3-gke.1", master, "", "is not offered for nodes"},
		{"1.x", master, "", "not valid"},
	} {
		got, err := ResolveNodeVersion(tc.requested, tc.master, offered)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ResolveNodeVersion(%q, %s) = %q, %v; want %q", tc.requested, tc.master, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ResolveNodeVersion(%q, %s) = %q, %v; want an error with %q", tc.requested, tc.master, got, err, tc.err)
		}
	}
	// The error names the nearest versions the nodes could run.
	_, err := ResolveNodeVersion("1.32", master, offered)
	var verr *VersionError
	if !errors.As(err, &verr) || strings.Join(verr.Nearest, " ") != "1.33.5-gke.1308000 1.33.2-gke.1240000 1.31.2-gke.1115000" {
		t.Errorf("nearest to 1.32 = %+v", verr)
	}
	_, err = ResolveNodeVersion("1.34.0-gke.1", master, offered)
	if !errors.As(err, &verr) || verr.Nearest[0] != "1.34.0-gke.2201000" {
		t.Errorf("nearest to 1.34.0-gke.1 = %+v, want 1.34.0-gke.2201000 first", verr)
	}
}

func TestResolveMasterVersion(t *testing.T) {
	for requested, want := range map[string]string{
		"": "", "-": "", "latest": "1.35.0-gke.1795000", "1.34": "1.34.1-gke.1829001", "1.33.2": "1.33.2-gke.1240000",
	} {
		if got, err := ResolveMasterVersion(requested, offered, "here"); err != nil || got != want {
			t.Errorf("ResolveMasterVersion(%q) = %q, %v; want %q", requested, got, err, want)
		}
	}
	if _, err := ResolveMasterVersion("1.36", offered, "here"); err == nil || !strings.Contains(err.Error(), "1.35.0-gke.1795000") {
		t.Errorf("ResolveMasterVersion(1.36) = %v, want an error naming 1.35.0-gke.1795000", err)
	}
}

func TestMasterVersionsOffered(t *testing.T) {
	sc := &containerpb.ServerConfig{
		ValidMasterVersions: offered,
		Channels: []*containerpb.ServerConfig_ReleaseChannelConfig{
			{Channel: containerpb.ReleaseChannel_STABLE, ValidVersions: []string{"1.33.5-gke.1308000"}},
		},
	}
	if got := MasterVersionsOffered(sc, containerpb.ReleaseChannel_STABLE); len(got) != 1 {
		t.Errorf("STABLE offers %v", got)
	}
	// A channel the location has no versions listed for: every valid master version.
	if got := MasterVersionsOffered(sc, containerpb.ReleaseChannel_EXTENDED); len(got) != len(offered) {
		t.Errorf("a channel without versions of its own offers %v", got)
	}
}
