package gke

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// AvailabilityShortfall is a window, or a set of no-upgrades exclusions, that leaves less
// maintenance availability than GKE requires.
type AvailabilityShortfall struct {
	// Exclusions says the exclusions fall short, not the window.
	Exclusions bool
	// From starts the 32 days with the least availability, Available.
	From      time.Time
	Available time.Duration
}

func (e *AvailabilityShortfall) Error() string {
	what := "the recurring window leaves"
	if e.Exclusions {
		what = "the NO_UPGRADES exclusions leave"
	}
	return fmt.Sprintf("%s only %sh of maintenance availability (in blocks of at least 4 hours) in the 32 days "+
		"from %s; GKE requires at least 48h in any 32 days and refuses the policy with \"maintenance policy would go "+
		"longer than 32d without 48h maintenance availability\"", what, strconv.FormatFloat(e.Available.Hours(), 'f', -1, 64),
		e.From.UTC().Format(time.RFC3339))
}

// CheckMaintenanceAvailability returns an *AvailabilityShortfall when the policy's recurring
// window, or the time its no-upgrades exclusions leave free, falls short of GKE's 48 hours in
// any 32 days. The two are held to it apart, as the documentation states the rule for each: the
// page's own example (exclusions November 19 to December 4 and December 15 to January 5 beside
// weekday evening windows) would fail if they were taken together. A window is checked for a year
// from now (or its first occurrence), exclusions from the first to a month past the last. A daily
// window always passes: it "starts each day at the specified START_TIME and lasts 4 hours" (the
// how-to page, on --maintenance-window), 128 hours in 32 days; a recurrence that cannot be expanded (Recurrence) is left
// to GKE.
func CheckMaintenanceAvailability(policy *containerpb.MaintenancePolicy, now time.Time) error {
	p, year := MaintenanceAvailabilityPeriod, 366*24*time.Hour
	w := policy.GetWindow()
	if rw := w.GetRecurringWindow(); rw != nil {
		r, err := ParseRecurrence(rw.GetRecurrence())
		start, end := rw.GetWindow().GetStartTime().AsTime(), rw.GetWindow().GetEndTime().AsTime()
		if err == nil && r.Expandable && end.After(start) {
			lo := maxTime(now, start) // before its first occurrence a window has none
			blocks := availableBlocks(r.Occurrences(start, end, lo.Add(-p), lo.Add(year+2*p)), nil)
			if least, at := leastAvailability(blocks, lo, lo.Add(year), p); least < MinMaintenanceAvailability {
				return &AvailabilityShortfall{From: at, Available: least}
			}
		}
	}
	var blocked []Span
	lo, hi := now, now
	for _, ex := range w.GetMaintenanceExclusions() {
		if ex.GetMaintenanceExclusionOptions().GetScope() == containerpb.MaintenanceExclusionOptions_NO_UPGRADES && ex.GetEndTime() != nil {
			s := Span{ex.GetStartTime().AsTime(), ex.GetEndTime().AsTime()}
			blocked = append(blocked, s)
			lo, hi = minTime(lo, s.Start), maxTime(hi, s.End)
		}
	}
	last := hi.Add(31 * 24 * time.Hour)
	blocks := availableBlocks([]Span{{lo.Add(-p), last.Add(2 * p)}}, blocked)
	if least, at := leastAvailability(blocks, lo, last, p); least < MinMaintenanceAvailability {
		return &AvailabilityShortfall{Exclusions: true, From: at, Available: least}
	}
	return nil
}

// availableBlocks are the windows, merged where they touch or overlap, less the blocked spans,
// kept where at least MinMaintenanceBlock long.
func availableBlocks(windows, blocked []Span) []Span {
	sort.Slice(windows, func(i, j int) bool { return windows[i].Start.Before(windows[j].Start) })
	var merged []Span
	for _, w := range windows {
		if n := len(merged); n > 0 && !w.Start.After(merged[n-1].End) {
			merged[n-1].End = maxTime(merged[n-1].End, w.End)
			continue
		}
		merged = append(merged, w)
	}
	var out []Span
	for _, m := range merged {
		pieces := []Span{m}
		for _, b := range blocked {
			var next []Span
			for _, p := range pieces {
				if !b.Start.Before(p.End) || !b.End.After(p.Start) {
					next = append(next, p)
					continue
				}
				if b.Start.After(p.Start) {
					next = append(next, Span{p.Start, b.Start})
				}
				if b.End.Before(p.End) {
					next = append(next, Span{b.End, p.End})
				}
			}
			pieces = next
		}
		for _, p := range pieces {
			if p.End.Sub(p.Start) >= MinMaintenanceBlock {
				out = append(out, p)
			}
		}
	}
	return out
}

// leastAvailability is the least time the blocks cover in any period-long span starting from lo
// to last, and where it starts. The covered time changes slope only where a span's start or end
// meets a block's edge, so those starts are the only ones to try.
func leastAvailability(blocks []Span, lo, last time.Time, period time.Duration) (time.Duration, time.Time) {
	starts := []time.Time{lo, last}
	for _, b := range blocks {
		for _, t := range []time.Time{b.Start, b.End, b.Start.Add(-period), b.End.Add(-period)} {
			if !t.Before(lo) && !t.After(last) {
				starts = append(starts, t)
			}
		}
	}
	least, at := time.Duration(-1), lo
	for _, s := range starts {
		e := s.Add(period)
		var covered time.Duration
		for _, b := range blocks {
			if b.Start.Before(e) && b.End.After(s) {
				covered += minTime(b.End, e).Sub(maxTime(b.Start, s))
			}
		}
		if least < 0 || covered < least || covered == least && s.Before(at) {
			least, at = covered, s
		}
	}
	return least, at
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
