package document

import (
	"strings"
	"testing"
)

// TestPlaceholderCut: a prompt of more than 120 characters shows its first
// 119 and an ellipsis, counted as Go counts runes (an invalid byte is one,
// shown as U+FFFD), whatever its length: the prompt is not made runes
// whole (a 100 MB one was 400 MB of them; issue 33).
func TestPlaceholderCut(t *testing.T) {
	whole := func(p string) string { // what Placeholder did, on the whole prompt
		r := []rune(p)
		if len(r) > 120 {
			p = string(r[:119]) + "…"
		}
		return placeholderPrefix + EscapeInline(p)
	}
	for _, unit := range []string{"x", "é", "日本", "\xff", "a\xe2\x82", "*"} {
		for n := 0; n < 140; n++ {
			p := strings.Repeat(unit, n)
			if p == "" {
				continue
			}
			if got, want := Placeholder(p), whole(p); got != want {
				t.Errorf("Placeholder(%q × %d) = %q, want %q", unit, n, got, want)
			}
		}
	}
}
