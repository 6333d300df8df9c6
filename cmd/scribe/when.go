package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// whenForms says what parseWhen reads, for help texts and errors.
const whenForms = "2026-11-22 (that day, from midnight UTC), 2026-11-22T09:26:16Z (RFC 3339), " +
	"30m, 24h, 7d, 2w (that long ago), today, yesterday (from midnight UTC)"

// parseWhen reads a point in time as a person types it: an RFC 3339 time,
// a day (YYYY-MM-DD: its start, midnight UTC, as every time scribe shows is
// UTC), a span back from now (30m, 24h, 7d, 2w), or today or yesterday
// (the start of that day, UTC).
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "today":
		return utcDay(now), nil
	case "yesterday":
		return utcDay(now).AddDate(0, 0, -1), nil
	}
	if n := len(s); n >= 2 {
		units := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
		if unit, ok := units[s[n-1]]; ok {
			if k, err := strconv.Atoi(s[:n-1]); err == nil && k >= 0 {
				if int64(k) > int64(200*365*24*time.Hour/unit) {
					return time.Time{}, fmt.Errorf("%q is too long ago", s)
				}
				return now.Add(-time.Duration(k) * unit), nil
			}
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date or time: use %s", s, whenForms)
}

// utcDay is the start of t's day, UTC.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
