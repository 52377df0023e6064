package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// rrule is what the emulator reads of an RFC 5545 RRULE (section 3.3.10): FREQ DAILY, WEEKLY or
// MONTHLY ("The FREQ values of HOURLY, MINUTELY, and SECONDLY are not supported", containerpb
// RecurringTimeWindow.recurrence), INTERVAL, BYDAY, BYMONTHDAY and, monthly, BYSETPOS. A rule with
// other parts is taken but not followed: its availability is not checked.
type rrule struct {
	freq, interval int // freq: 1 daily, 7 weekly, 31 monthly
	byDay          map[time.Weekday][]int
	byMonthDay     []int
	bySetPos       []int
	opaque         bool
}

func parseRRule(s string) (*rrule, error) {
	r := &rrule{interval: 1}
	for _, part := range strings.Split(strings.TrimPrefix(s, "RRULE:"), ";") {
		k, v, _ := strings.Cut(part, "=")
		var err error
		switch k {
		case "FREQ":
			r.freq = map[string]int{"DAILY": 1, "WEEKLY": 7, "MONTHLY": 31, "YEARLY": -1}[v]
			if r.freq == 0 {
				return nil, fmt.Errorf("FREQ %s is not supported; use DAILY, WEEKLY or MONTHLY", v)
			}
			r.opaque = r.opaque || r.freq < 0
		case "INTERVAL":
			if r.interval, err = strconv.Atoi(v); err == nil && r.interval < 1 {
				err = fmt.Errorf("below 1")
			}
		case "BYDAY":
			r.byDay = map[time.Weekday][]int{}
			for _, item := range strings.Split(v, ",") {
				if len(item) < 2 {
					return nil, fmt.Errorf("BYDAY %q is not a weekday", item)
				}
				wd := strings.Index("SUMOTUWETHFRSA", item[len(item)-2:])
				n, nerr := strconv.Atoi(item[:len(item)-2])
				if item[:len(item)-2] == "" {
					n, nerr = 0, nil
				}
				if wd < 0 || wd%2 != 0 || nerr != nil {
					return nil, fmt.Errorf("BYDAY %q is not a weekday", item)
				}
				r.byDay[time.Weekday(wd/2)] = append(r.byDay[time.Weekday(wd/2)], n)
			}
		case "BYMONTHDAY", "BYSETPOS":
			var list []int
			for _, item := range strings.Split(v, ",") {
				n, nerr := strconv.Atoi(item)
				if nerr != nil || n == 0 {
					return nil, fmt.Errorf("%s %q is not a day number", k, item)
				}
				list = append(list, n)
			}
			if k == "BYMONTHDAY" {
				r.byMonthDay = list
			} else {
				r.bySetPos = list
			}
		case "COUNT", "UNTIL", "WKST", "BYMONTH", "BYYEARDAY", "BYWEEKNO", "BYHOUR", "BYMINUTE", "BYSECOND":
			r.opaque = true
		default:
			return nil, fmt.Errorf("%q is not a recurrence rule part", part)
		}
		if err != nil {
			return nil, fmt.Errorf("INTERVAL %q: %v", v, err)
		}
	}
	if r.freq == 0 {
		return nil, fmt.Errorf("FREQ is missing")
	}
	for _, ns := range r.byDay {
		for _, n := range ns {
			// RFC 5545: a numeric BYDAY "MUST NOT be specified" unless FREQ is MONTHLY or YEARLY.
			if n != 0 && r.freq != 31 && r.freq != -1 {
				return nil, fmt.Errorf("BYDAY takes an ordinal only with FREQ=MONTHLY")
			}
		}
	}
	r.opaque = r.opaque || len(r.bySetPos) > 0 && r.freq != 31
	return r, nil
}

// firing returns, for a UTC day, the minutes (from that midnight, possibly past the next) of the
// occurrence that starts that day, if any: first, then the days the rule names after it. It is
// nil for a rule the emulator does not follow.
func (r *rrule) firing(first time.Time, length time.Duration) func(day time.Time) [][2]int {
	if r.opaque {
		return nil
	}
	day0 := first.Truncate(24 * time.Hour)
	clock, dur := int(first.Sub(day0)/time.Minute), int(length/time.Minute)
	return func(day time.Time) [][2]int {
		if day.Equal(day0) || day.After(day0) && r.on(day, day0) {
			return [][2]int{{clock, clock + dur}}
		}
		return nil
	}
}

// on reports whether the rule starts a window on day, day0 being the first occurrence's.
func (r *rrule) on(day, day0 time.Time) bool {
	monthDayOK := len(r.byMonthDay) == 0 || containsMonthDay(r.byMonthDay, day)
	switch r.freq {
	case 1:
		_, weekdayOK := r.byDay[day.Weekday()]
		return int(day.Sub(day0).Hours()/24)%r.interval == 0 && (r.byDay == nil || weekdayOK) && monthDayOK
	case 7:
		monday := func(t time.Time) time.Time { return t.AddDate(0, 0, -(int(t.Weekday())+6)%7) }
		weeks := int(monday(day).Sub(monday(day0)).Hours() / (24 * 7))
		_, weekdayOK := r.byDay[day.Weekday()]
		if r.byDay == nil {
			weekdayOK = day.Weekday() == day0.Weekday()
		}
		return weeks%r.interval == 0 && weekdayOK && monthDayOK
	}
	months := (day.Year()-day0.Year())*12 + int(day.Month()) - int(day0.Month())
	if months%r.interval != 0 {
		return false
	}
	var set []int // the month's days the rule names, in order, before BYSETPOS
	last := time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
	for d := 1; d <= last; d++ {
		t := time.Date(day.Year(), day.Month(), d, 0, 0, 0, 0, time.UTC)
		ok := len(r.byMonthDay) == 0 || containsMonthDay(r.byMonthDay, t)
		if ords, named := r.byDay[t.Weekday()]; r.byDay != nil {
			ok = ok && named && ordinalMatches(ords, d, last)
		}
		if r.byDay == nil && len(r.byMonthDay) == 0 {
			ok = d == day0.Day()
		}
		if ok {
			set = append(set, d)
		}
	}
	if len(r.bySetPos) > 0 {
		var picked []int
		for _, p := range r.bySetPos {
			if p > 0 && p <= len(set) {
				picked = append(picked, set[p-1])
			} else if p < 0 && -p <= len(set) {
				picked = append(picked, set[len(set)+p])
			}
		}
		set = picked
	}
	for _, d := range set {
		if d == day.Day() {
			return true
		}
	}
	return false
}

// ordinalMatches: 0 is every such weekday of the month, 2 the second, -1 the last.
func ordinalMatches(ords []int, d, last int) bool {
	for _, n := range ords {
		if n == 0 || n > 0 && (d+6)/7 == n || n < 0 && (last-d)/7+1 == -n {
			return true
		}
	}
	return false
}

func containsMonthDay(list []int, t time.Time) bool {
	last := time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
	for _, n := range list {
		if n == t.Day() || n < 0 && last+1+n == t.Day() {
			return true
		}
	}
	return false
}
