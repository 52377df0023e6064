package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseScale(t *testing.T) {
	for in, want := range map[string][]int{"": nil, "24": {24}, "24, 144": {24, 144}} {
		got, err := parseScale(in)
		if err != nil || len(got) != len(want) {
			t.Errorf("parseScale(%q) = %v, %v; want %v", in, got, err, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("parseScale(%q) = %v, want %v", in, got, want)
			}
		}
	}
	for _, in := range []string{"0", "x", "24,-1"} {
		if _, err := parseScale(in); err == nil {
			t.Errorf("parseScale(%q) accepted", in)
		}
	}
}

// The wave limit is GKE's five creations at once: 24 slices are 5 waves of the mean creation.
func TestScaleWaveLimit(t *testing.T) {
	start := time.Now()
	s := scaleRun{Slices: 24}
	for i := range 24 {
		d := 5 * time.Second
		if i%2 == 1 {
			d = 7 * time.Second
		}
		s.Creations = append(s.Creations, opInfo{Start: start, End: start.Add(d)})
	}
	if got := s.waveLimit(); got != 30*time.Second {
		t.Errorf("wave limit %s, want 5 waves of 6 s", got)
	}
}

func TestScaleConfig(t *testing.T) {
	c := scaleConfig(24, 16, true)
	for _, want := range []string{"count      = 24", "slice(raytpu_slice.bench[*].id, 0, 16)", `bench = "changed"`, `topology   = "2x2"`} {
		if !strings.Contains(c, want) {
			t.Errorf("config lacks %q:\n%s", want, c)
		}
	}
	if c := scaleConfig(0, 0, false); strings.Contains(c, "raytpu_slice") {
		t.Errorf("the cluster's configuration has slices:\n%s", c)
	}
}
