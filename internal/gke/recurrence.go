package gke

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Recurrence is the part of an RFC 5545 RRULE (RFC 5545 section 3.3.10) that GKE's recurring
// windows use: FREQ DAILY, WEEKLY or MONTHLY, INTERVAL, BYDAY (with ordinals in MONTHLY),
// BYMONTHDAY and BYSETPOS. Other valid parts (COUNT, UNTIL, BYMONTH, YEARLY, ...) parse, but leave
// Expandable false: raytpu then leaves the availability check to GKE.
type Recurrence struct {
	Freq       string
	Interval   int
	ByDay      []WeekdayNum
	ByMonthDay []int
	BySetPos   []int
	Expandable bool
}

// WeekdayNum is a BYDAY entry: a weekday and, in MONTHLY rules, its ordinal in the month (0 for
// every one, -1 for the last).
type WeekdayNum struct {
	N   int
	Day time.Weekday
}

var weekdays = map[string]time.Weekday{"SU": time.Sunday, "MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday,
	"TH": time.Thursday, "FR": time.Friday, "SA": time.Saturday}

// ParseRecurrence reads a recurring window's RRULE. GKE refuses what containerpb
// RecurringTimeWindow.recurrence rules out: "The FREQ values of HOURLY, MINUTELY, and SECONDLY are
// not supported".
func ParseRecurrence(rule string) (Recurrence, error) {
	r := Recurrence{Interval: 1, Expandable: true}
	for _, part := range strings.Split(strings.TrimPrefix(rule, "RRULE:"), ";") {
		key, value, ok := strings.Cut(part, "=")
		if !ok || value == "" {
			return r, fmt.Errorf("%q is not a KEY=VALUE rule part", part)
		}
		var err error
		switch key {
		case "FREQ":
			r.Freq = value
			switch value {
			case "DAILY", "WEEKLY", "MONTHLY":
			case "YEARLY":
				r.Expandable = false
			case "HOURLY", "MINUTELY", "SECONDLY":
				return r, fmt.Errorf("FREQ=%s is not supported by GKE: use DAILY, WEEKLY or MONTHLY", value)
			default:
				return r, fmt.Errorf("FREQ=%s is not an RFC 5545 frequency: use DAILY, WEEKLY or MONTHLY", value)
			}
		case "INTERVAL":
			r.Interval, err = strconv.Atoi(value)
			if err == nil && r.Interval < 1 {
				err = fmt.Errorf("INTERVAL must be at least 1")
			}
		case "BYDAY":
			r.ByDay, err = parseByDay(value)
		case "BYMONTHDAY":
			r.ByMonthDay, err = parseInts(value, 31)
		case "BYSETPOS":
			r.BySetPos, err = parseInts(value, 366)
		case "COUNT", "UNTIL", "WKST", "BYMONTH", "BYYEARDAY", "BYWEEKNO", "BYHOUR", "BYMINUTE", "BYSECOND":
			r.Expandable = false
		default:
			return r, fmt.Errorf("%s is not an RFC 5545 rule part", key)
		}
		if err != nil {
			return r, fmt.Errorf("%s=%s: %v", key, value, err)
		}
	}
	if r.Freq == "" {
		return r, fmt.Errorf("the rule has no FREQ, such as FREQ=WEEKLY")
	}
	for _, d := range r.ByDay {
		// RFC 5545: a numeric BYDAY "MUST NOT be specified" unless FREQ is MONTHLY or YEARLY.
		if d.N != 0 && r.Freq != "MONTHLY" && r.Freq != "YEARLY" {
			return r, fmt.Errorf("BYDAY with an ordinal, such as 1SA, needs FREQ=MONTHLY")
		}
	}
	if len(r.BySetPos) > 0 && r.Freq != "MONTHLY" {
		r.Expandable = false
	}
	return r, nil
}

func parseByDay(value string) ([]WeekdayNum, error) {
	var out []WeekdayNum
	for _, item := range strings.Split(value, ",") {
		split := max(0, len(item)-2)
		day, ok := weekdays[item[split:]]
		n, err := strconv.Atoi(item[:split])
		if item[:split] == "" {
			n, err = 0, nil
		}
		if !ok || err != nil || n < -5 || n > 5 || n == 0 && split > 0 {
			return nil, fmt.Errorf("%q is not a weekday such as MO, or one with an ordinal from -5 to 5 such as 1SA", item)
		}
		out = append(out, WeekdayNum{N: n, Day: day})
	}
	return out, nil
}

func parseInts(value string, limit int) ([]int, error) {
	var out []int
	for _, item := range strings.Split(value, ",") {
		n, err := strconv.Atoi(item)
		if err != nil || n == 0 || n < -limit || n > limit {
			return nil, fmt.Errorf("%q is not a number from 1 to %d (or -%d to -1)", item, limit, limit)
		}
		out = append(out, n)
	}
	return out, nil
}

// Span is a time interval [Start, End).
type Span struct{ Start, End time.Time }

// Occurrences are the recurring window's occurrences that overlap [from, to): the first one at
// start, then as the rule says, each as long as the first (end - start). Days are UTC days, as
// GKE reads them ("Day of the week recurrences are always based on UTC", the how-to page).
func (r Recurrence) Occurrences(start, end, from, to time.Time) []Span {
	start, length := start.UTC(), end.Sub(start)
	day0 := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	clock := start.Sub(day0)
	var out []Span
	if start.Add(length).After(from) && start.Before(to) {
		out = append(out, Span{start, start.Add(length)})
	}
	// Periods are walked from one that surely ends before from - length.
	first := max(0, int(from.Add(-length).Sub(day0)/r.longestPeriod())-1)
	for i := first; r.periodStart(i, day0).Before(to); i++ {
		for _, day := range r.periodDays(i, day0) {
			if s := day.Add(clock); s.After(start) && s.Add(length).After(from) && s.Before(to) {
				out = append(out, Span{s, s.Add(length)})
			}
		}
	}
	return out
}

func (r Recurrence) longestPeriod() time.Duration {
	days := map[string]int{"DAILY": 1, "WEEKLY": 7, "MONTHLY": 31}[r.Freq]
	return time.Duration(days*r.Interval) * 24 * time.Hour
}

// periodStart is the first day of the i-th period (day, week from Monday, the RFC's default
// WKST, or month) counted from the one holding day0.
func (r Recurrence) periodStart(i int, day0 time.Time) time.Time {
	switch r.Freq {
	case "WEEKLY":
		monday := day0.AddDate(0, 0, -((int(day0.Weekday()) + 6) % 7))
		return monday.AddDate(0, 0, 7*i*r.Interval)
	case "MONTHLY":
		return time.Date(day0.Year(), day0.Month()+time.Month(i*r.Interval), 1, 0, 0, 0, 0, time.UTC)
	}
	return day0.AddDate(0, 0, i*r.Interval)
}

// periodDays are the days of the i-th period on which the window starts, in order.
func (r Recurrence) periodDays(i int, day0 time.Time) []time.Time {
	ps := r.periodStart(i, day0)
	end := map[string]time.Time{"DAILY": ps.AddDate(0, 0, 1), "WEEKLY": ps.AddDate(0, 0, 7), "MONTHLY": ps.AddDate(0, 1, 0)}[r.Freq]
	var days []time.Time
	for d := ps; d.Before(end); d = d.AddDate(0, 0, 1) {
		if r.matches(d, day0) {
			days = append(days, d)
		}
	}
	if len(r.BySetPos) == 0 {
		return days
	}
	var picked []time.Time
	for _, pos := range r.BySetPos {
		if pos > 0 && pos <= len(days) {
			picked = append(picked, days[pos-1])
		} else if pos < 0 && -pos <= len(days) {
			picked = append(picked, days[len(days)+pos])
		}
	}
	sort.Slice(picked, func(a, b int) bool { return picked[a].Before(picked[b]) })
	return picked
}

// matches: BYDAY (a plain weekday every such day, 2MO the second Monday of the month, -1SU the
// last Sunday) and BYMONTHDAY (-1 the last day) filter; without them a weekly rule keeps the
// first occurrence's weekday and a monthly one its day of the month.
func (r Recurrence) matches(d, day0 time.Time) bool {
	lastDay := time.Date(d.Year(), d.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
	byDay := len(r.ByDay) == 0
	for _, w := range r.ByDay {
		byDay = byDay || w.Day == d.Weekday() && (w.N == 0 || w.N > 0 && (d.Day()-1)/7+1 == w.N || w.N < 0 && (lastDay-d.Day())/7+1 == -w.N)
	}
	byMonthDay := len(r.ByMonthDay) == 0
	for _, n := range r.ByMonthDay {
		byMonthDay = byMonthDay || n == d.Day() || n < 0 && lastDay+1+n == d.Day()
	}
	switch {
	case !byDay || !byMonthDay:
		return false
	case r.Freq == "WEEKLY" && len(r.ByDay) == 0:
		return d.Weekday() == day0.Weekday()
	case r.Freq == "MONTHLY" && len(r.ByDay)+len(r.ByMonthDay) == 0:
		return d.Day() == day0.Day()
	}
	return true
}

// ParseDailyStart reads a daily window's start, "HH:MM" in UTC (containerpb
// DailyMaintenanceWindow.start_time: "HH : [00-23] and MM : [00-59] GMT").
func ParseDailyStart(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM from 00:00 to 23:59", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// SameRecurrence reports whether two RRULEs of a window from start to end recur at the same times:
// GKE may answer a rule in another form than it was sent, such as FREQ=DAILY as
// FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU (terraform-provider-google's
// rfc5545RecurrenceDiffSuppress). They are compared over two years of occurrences, longer than any
// period GKE takes (MONTHLY).
func SameRecurrence(a, b string, start, end time.Time) bool {
	if a == b {
		return true
	}
	ra, err1 := ParseRecurrence(a)
	rb, err2 := ParseRecurrence(b)
	if err1 != nil || err2 != nil {
		return false
	}
	to := start.AddDate(2, 0, 0)
	return slices.EqualFunc(ra.Occurrences(start, end, start, to), rb.Occurrences(start, end, start, to), func(x, y Span) bool {
		return x.Start.Equal(y.Start) && x.End.Equal(y.End)
	})
}
