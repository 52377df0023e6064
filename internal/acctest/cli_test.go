package acctest

import (
	"strings"
	"testing"
)

func TestFeatureGate(t *testing.T) {
	f := Feature{Name: "ephemeral resources", Terraform: "1.10.0", OpenTofu: "1.11.0", Why: "changelogs"}
	terraformOnly := Feature{Name: "x", Terraform: "1.5.0"}
	for _, tc := range []struct {
		cli     CLI
		feature Feature
		want    bool
	}{
		{CLI{Name: "terraform", Version: "1.8.5"}, f, false},
		{CLI{Name: "terraform", Version: "1.10.0"}, f, true},
		{CLI{Name: "tofu", Version: "1.10.6"}, f, false},
		{CLI{Name: "tofu", Version: "1.12.6"}, f, true},
		{CLI{Name: "tofu", Version: "1.12.6"}, terraformOnly, false},
		{CLI{Name: "terraform", Version: "1.8.5"}, terraformOnly, true},
	} {
		if got := tc.cli.Supports(tc.feature); got != tc.want {
			t.Errorf("%s %s supports %+v = %t, want %t", tc.cli.Name, tc.cli.Version, tc.feature, got, tc.want)
		}
	}
	gate := CLI{Name: "tofu", Version: "1.10.6"}.Gate(f)
	for _, want := range []string{"tofu 1.10.6 does not run the test of ephemeral resources", "Terraform >= 1.10.0", "OpenTofu >= 1.11.0", "changelogs"} {
		if !strings.Contains(gate, want) {
			t.Errorf("gate %q lacks %q", gate, want)
		}
	}
}
