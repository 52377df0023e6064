package rules

import (
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

func TestCheckSliceController(t *testing.T) {
	on := &containerpb.AddonsConfig{SliceControllerConfig: &containerpb.SliceControllerConfig{Enabled: true}}
	off := &containerpb.AddonsConfig{SliceControllerConfig: &containerpb.SliceControllerConfig{}}
	rapid, regular := containerpb.ReleaseChannel_RAPID, containerpb.ReleaseChannel_REGULAR
	for _, tc := range []struct {
		addons  *containerpb.AddonsConfig
		version string
		channel containerpb.ReleaseChannel_Channel
		refused bool
	}{
		{on, "1.35.2-gke.1842000", rapid, false},
		{on, "1.36.0-gke.3712000", rapid, false},
		{on, "1.35.2-gke.1841999", rapid, true},
		{on, "1.36.0-gke.3712000", regular, true},
		{off, "1.34.0-gke.2201000", regular, false},
		{nil, "1.34.0-gke.2201000", regular, false},
	} {
		if err := CheckSliceController(tc.addons, tc.version, tc.channel); (err != nil) != tc.refused {
			t.Errorf("%v at %s in %s: %v, refused want %v", tc.addons, tc.version, tc.channel, err, tc.refused)
		}
	}
}

// An update's add-ons replace those it sets and keep the others.
func TestMergeAddons(t *testing.T) {
	current := &containerpb.AddonsConfig{
		RayOperatorConfig:     &containerpb.RayOperatorConfig{Enabled: true},
		SliceControllerConfig: &containerpb.SliceControllerConfig{Enabled: true},
	}
	got := MergeAddons(current, &containerpb.AddonsConfig{SliceControllerConfig: &containerpb.SliceControllerConfig{}})
	if got.GetSliceControllerConfig().GetEnabled() || !got.GetRayOperatorConfig().GetEnabled() {
		t.Errorf("merged %v", got)
	}
	if !current.GetSliceControllerConfig().GetEnabled() {
		t.Errorf("the current configuration changed: %v", current)
	}
}
