package acctest

import (
	"strings"
	"testing"
)

func TestFeaturesOfThePinnedCLIs(t *testing.T) {
	for _, tc := range []struct {
		cli  CLI
		f    Feature
		want bool
	}{
		{CLI{Name: "terraform", Version: "1.8.5"}, EphemeralResources, false},
		{CLI{Name: "tofu", Version: "1.12.6"}, EphemeralResources, true},
		{CLI{Name: "tofu", Version: "1.10.6"}, EphemeralResources, false},
		{CLI{Name: "terraform", Version: "1.10.0"}, EphemeralResources, true},
		{CLI{Name: "terraform", Version: "1.8.5"}, ImportByIdentity, false},
		{CLI{Name: "terraform", Version: "1.12.1"}, ImportByIdentity, true},
		{CLI{Name: "tofu", Version: "1.12.6"}, ImportByIdentity, true},
		{CLI{Name: "tofu", Version: "1.11.2"}, ImportByIdentity, false},
		{CLI{Name: "terraform", Version: "1.16.3"}, EphemeralResources, true},
		{CLI{Name: "terraform", Version: "1.16.3"}, ImportByIdentity, true},
		{CLI{Name: "terraform", Version: "1.8.5"}, ListResources, false},
		{CLI{Name: "terraform", Version: "1.13.3"}, ListResources, false},
		{CLI{Name: "terraform", Version: "1.16.3"}, ListResources, true},
		{CLI{Name: "tofu", Version: "1.12.6"}, ListResources, false},
		{CLI{Name: "terraform", Version: "1.14.0"}, Actions, true},
		{CLI{Name: "tofu", Version: "1.12.6"}, Actions, false},
	} {
		if got := tc.cli.Supports(tc.f); got != tc.want {
			t.Errorf("%s %s supports %s = %v, want %v", tc.cli.Name, tc.cli.Version, tc.f.Name, got, tc.want)
		}
	}
	gate := CLI{Name: "terraform", Version: "1.8.5"}.Gate(EphemeralResources)
	for _, want := range []string{"terraform 1.8.5 does not run", "ephemeral resources", "Terraform >= 1.10.0", "OpenTofu >= 1.11.0"} {
		if !strings.Contains(gate, want) {
			t.Errorf("Gate = %q, want it to say %q", gate, want)
		}
	}
}
