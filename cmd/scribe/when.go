package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// whenForms is what parseWhen accepts, for help texts and errors.
const whenForms = "2026-11-22 (a day, from UTC midnight), 2026-11-22T09:26:16Z (RFC 3339, any offset; " +
	"none is UTC), 30m, 24h, 7d or 2w (that long ago), today or yesterday (UTC midnight)"

// testOnlyNow, when set, is the time relative dates count back from.
var testOnlyNow time.Time

// clock is the time now.
func clock() time.Time {
	if !testOnlyNow.IsZero() {
		return testOnlyNow
	}
	return time.Now()
}

// parseWhen reads the value of --since or --until: an RFC 3339 time (with
// any offset, or none for UTC; seconds and their fraction optional, a
// space for the T allowed), a day (2026-11-22: its start, midnight UTC,
// as the stamps scribe shows are UTC), a span back from now (30m, 24h,
// 7d, 2w: minutes, hours, days, weeks), or today or yesterday (the start
// of the UTC day).
func parseWhen(s string, now time.Time) (time.Time, error) {
	switch s {
	case "today":
		return utcDay(now), nil
	case "yesterday":
		return utcDay(now).AddDate(0, 0, -1), nil
	}
	if n := len(s); n >= 2 && strings.IndexByte("mhdw", s[n-1]) >= 0 && strings.Trim(s[:n-1], "0123456789") == "" {
		unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[n-1]]
		k, err := strconv.ParseInt(s[:n-1], 10, 64)
		if err != nil || k > int64(100*365*24*time.Hour/unit) {
			return time.Time{}, fmt.Errorf("%q is more than 100 years", s)
		}
		return now.Add(-time.Duration(k) * unit), nil
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, layout := range []string{"2006-01-02", time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02T15:04"} {
		// A layout without an offset reads the time as UTC; every
		// layout takes a fraction of a second after the seconds.
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date or time", s)
}

// utcDay is the start of t's day in UTC.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// zone is the time zone times are shown in: the person's own (TZ chooses
// it), or UTC.
func zone(utc bool) *time.Location {
	if utc {
		return time.UTC
	}
	return time.Local
}
