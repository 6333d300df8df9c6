package jsonpatch

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomJSONString returns a quoted JSON string of about n bytes made of
// the pieces a decoder must not cut: escapes, surrogate pairs (and lone
// halves), multi-byte characters, bad bytes, a backslash before a
// non-ASCII character.
func randomJSONString(rng *rand.Rand, n int, valid bool) []byte {
	pieces := []string{`a`, `word `, `\n`, `\t`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00x`,
		`\uZZ`, `é`, `→`, `😀`, `\q`, `\é`, "\t"}
	if !valid {
		pieces = append(pieces, "\xff", "\xe2\x82", "\x82\x82\x82\x82")
	}
	b := []byte{'"'}
	for len(b) < n {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	if rng.IntN(4) == 0 {
		b = append(b, '\\') // a lone backslash at the end
	}
	return append(b, '"')
}

// TestTextWindows: the windows of a string, joined, are its text, for
// windows of any size.
func TestTextWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 18))
	for i := 0; i < 400; i++ {
		q := randomJSONString(rng, 1+rng.IntN(3000), i%2 == 0)
		want := DecodeString(q)
		n := 1 + rng.IntN(64)
		w := NewTextWindows(q)
		var got []byte
		for steps := 0; !w.Done(); steps++ {
			before := len(got)
			got = w.Next(got, n)
			if len(got) == before || steps > len(q) {
				t.Fatalf("%q: a window of %d gave nothing", q, n)
			}
		}
		if string(got) != want {
			t.Fatalf("windows of %d of %q:\n got %q\nwant %q", n, q, got, want)
		}
	}
}

// TestTextValuesLong: a value of LongText bytes or more is given
// undecoded, keep sees its first 64 KiB, and FieldText decodes it.
func TestTextValuesLong(t *testing.T) {
	text := strings.Repeat(`line\twith \"quotes\" and \u00e9\n`, LongText/30)
	line := []byte(`{"short":"hi\n","long":"` + text + `","after":"x"}`)
	var seen []int
	vals := TextValues[TextValue](line, func([]string) bool { return false }, func(s string) bool {
		seen = append(seen, len(s))
		return true
	})
	if len(vals) != 3 || vals[0].Long || !vals[1].Long || vals[1].Text != "" || vals[1].Path != "long" || vals[2].Path != "after" {
		t.Fatalf("got %+v", vals)
	}
	if seen[1] < longHead || seen[1] > longHead+8 {
		t.Errorf("keep saw %d bytes of the long value, want %d", seen[1], longHead)
	}
	want := DecodeString(line[vals[1].Start:vals[1].End])
	if got := FieldText(line, vals[1]); got != want || !strings.HasPrefix(got, "line\twith \"quotes\" and é\n") {
		t.Errorf("FieldText gives %d bytes, want %d", len(got), len(want))
	}
	if FieldText(line, vals[0]) != "hi\n" {
		t.Errorf("FieldText of a short value: %q", FieldText(line, vals[0]))
	}
	if !bytes.Equal(line[vals[1].Start:vals[1].End], []byte(`"`+text+`"`)) {
		t.Errorf("the long value's span is not its string")
	}
}
