package main

import (
	"testing"
	"time"
)

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 26, 16, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time // zero: an error
	}{
		{"2026-11-20T08:00:00Z", time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)},
		{"2026-11-20T08:00:00.5+02:00", time.Date(2026, 11, 20, 6, 0, 0, 5e8, time.UTC)},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"24h", now.Add(-24 * time.Hour)},
		{"2w", now.Add(-14 * 24 * time.Hour)},
		{"30m", now.Add(-30 * time.Minute)},
		{"0d", now},
		{"today", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)},
		{"yesterday", time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		{" today ", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)},
		{"", time.Time{}},
		{"d", time.Time{}},
		{"-3d", time.Time{}},
		{"7x", time.Time{}},
		{"3 days", time.Time{}},
		{"2026-13-01", time.Time{}},
		{"2026/11/20", time.Time{}},
		{"999999999w", time.Time{}},
		{"tomorrow", time.Time{}},
	} {
		got, err := parseWhen(c.in, now)
		switch {
		case c.want.IsZero() && err == nil:
			t.Errorf("parseWhen(%q) = %v, want an error", c.in, got)
		case !c.want.IsZero() && (err != nil || !got.Equal(c.want)):
			t.Errorf("parseWhen(%q) = %v, %v, want %v", c.in, got, err, c.want)
		}
	}
}
