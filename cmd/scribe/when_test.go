package main

import (
	"strings"
	"testing"
	"time"
)

// TestParseWhen: the forms --since and --until accept, and what they
// mean (https://github.com/scribe-archive/scribe/issues/13: "yesterday"
// was compared with the stamps as text, and found nothing).
func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 23, 18, 30, 0, 0, time.FixedZone("CET", 3600)) // 17:30Z
	for _, c := range []struct{ in, want string }{
		{"2026-11-22", "2026-11-22T00:00:00Z"},
		{"2026-11-22T09:26:16.967Z", "2026-11-22T09:26:16.967Z"},
		{"2026-11-22T09:26:16Z", "2026-11-22T09:26:16Z"},
		{"2026-11-22T11:26:16+02:00", "2026-11-22T09:26:16Z"},
		{"2026-11-22T04:26:16.5-05:00", "2026-11-22T09:26:16.5Z"},
		{"2026-11-22T09:26:16", "2026-11-22T09:26:16Z"},
		{"2026-11-22 09:26:16.25", "2026-11-22T09:26:16.25Z"},
		{"2026-11-22T09:26", "2026-11-22T09:26:00Z"},
		{"2026-11-22T10:26+01:00", "2026-11-22T09:26:00Z"},
		{"30m", "2026-11-23T17:00:00Z"},
		{"24h", "2026-11-22T17:30:00Z"},
		{"7d", "2026-11-16T17:30:00Z"},
		{"2w", "2026-11-09T17:30:00Z"},
		{"0d", "2026-11-23T17:30:00Z"},
		{"today", "2026-11-23T00:00:00Z"},
		{"yesterday", "2026-11-22T00:00:00Z"},
	} {
		got, err := parseWhen(c.in, now)
		if err != nil || !got.Equal(mustTime(t, c.want)) {
			t.Errorf("%q: %v (%v), want %s", c.in, got.UTC().Format(time.RFC3339Nano), err, c.want)
		}
	}
	for _, bad := range []string{"", "yesterdy", "7", "d", "-7d", "7 d", "7y", "1.5d", "2026-13-01", "2026-11-22T25:00Z",
		"22/11/2026", "99999999999999999999d", "5300w", "2026-11-22T09:26:16+0200"} {
		if got, err := parseWhen(bad, now); err == nil {
			t.Errorf("%q: %v, want an error", bad, got)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: the error %q does not name it", bad, err)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
