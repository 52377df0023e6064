package gke

import (
	"testing"
	"time"
)

func TestSameRecurrence(t *testing.T) {
	start := time.Date(2026, 1, 3, 2, 0, 0, 0, time.UTC)
	end := start.Add(6 * time.Hour)
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		// GKE's answer for a daily rule (terraform-provider-google rfc5545RecurrenceDiffSuppress).
		{"FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU", true},
		{"FREQ=WEEKLY;BYDAY=SA,SU", "FREQ=WEEKLY;BYDAY=SU,SA", true},
		{"FREQ=WEEKLY;BYDAY=SA,SU", "FREQ=WEEKLY;BYDAY=SA", false},
		{"FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", false},
		{"FREQ=DAILY", "not a rule", false},
	} {
		if got := SameRecurrence(tc.a, tc.b, start, end); got != tc.want {
			t.Errorf("SameRecurrence(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
