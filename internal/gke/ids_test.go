package gke

import (
	"strings"
	"testing"
)

func TestParseClusterImportID(t *testing.T) {
	want := ClusterID{Project: "p", Location: "us-central2-b", Name: "c"}
	for _, in := range []string{"projects/p/locations/us-central2-b/clusters/c", "projects/p/zones/us-central2-b/clusters/c", "p/us-central2-b/c"} {
		got, err := ParseClusterImportID(in, "")
		if err != nil || got != want {
			t.Errorf("ParseClusterImportID(%q) = %v, %v", in, got, err)
		}
	}
	if got, err := ParseClusterImportID("us-central2-b/c", "p"); err != nil || got != want {
		t.Errorf("short form with default project = %v, %v", got, err)
	}
	for _, in := range []string{"us-central2-b/c", "c", "p//c", "projects/p/locations/l/clusters/c/nodePools/n"} {
		if _, err := ParseClusterImportID(in, ""); err == nil || !strings.Contains(err.Error(), "{project}/{location}/{name}") {
			t.Errorf("ParseClusterImportID(%q) error = %v", in, err)
		}
	}
	if got := want.String(); got != "projects/p/locations/us-central2-b/clusters/c" {
		t.Errorf("String() = %s", got)
	}
}

func TestParseNodePoolImportID(t *testing.T) {
	want := NodePoolID{Cluster: ClusterID{Project: "p", Location: "l", Name: "c"}, Name: "n"}
	for _, in := range []string{"projects/p/locations/l/clusters/c/nodePools/n", "p/l/c/n"} {
		got, err := ParseNodePoolImportID(in, "")
		if err != nil || got != want {
			t.Errorf("ParseNodePoolImportID(%q) = %v, %v", in, got, err)
		}
	}
	if got, err := ParseNodePoolImportID("l/c/n", "p"); err != nil || got != want {
		t.Errorf("short form with default project = %v, %v", got, err)
	}
	if _, err := ParseNodePoolImportID("l/c/n", ""); err == nil {
		t.Error("short form without a default project accepted")
	}
}

func TestCheckEndpoint(t *testing.T) {
	for endpoint, ok := range map[string]bool{
		"https://container.googleapis.com/": true,
		"http://127.0.0.1:8080":             true,
		"http://localhost:8080":             true,
		"http://[::1]:8080":                 true,
		"http://10.0.0.5:8080":              false,
		"http://container.example.com":      false,
		"ftp://127.0.0.1":                   false,
		"127.0.0.1:8080":                    false,
	} {
		if err := CheckEndpoint(endpoint); (err == nil) != ok {
			t.Errorf("CheckEndpoint(%q) = %v", endpoint, err)
		}
	}
}
