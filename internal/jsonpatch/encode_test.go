package jsonpatch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestWriteStringAgreesWithJSON writes strings a few bytes at a time and
// finds encoding/json's encoding of the whole, with HTML escaped and not:
// runes of every length cut across pieces, bytes that are no UTF-8, and
// what JSON escapes.
func TestWriteStringAgreesWithJSON(t *testing.T) {
	texts := []string{
		"", "plain", "<a href=\"x\">&amp;</a>", "tab\there\nnewline \x00\x1f",
		"é→😀 mixed", strings.Repeat("😀", 20), "bad \xff\xfe utf-8 \xe2\x82", "\u2028\u2029",
		strings.Repeat("é", 33) + "\xc3", "\x80\x80\x80\x80\x80\x80\x80abc\xf0\x9f\x98", "x\xf0\x9f\x98\x80\x80\x80y",
	}
	for _, html := range []bool{true, false} {
		for _, s := range texts {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			enc.Encode(s)
			for piece := 1; piece <= 9; piece++ {
				var got bytes.Buffer
				got.WriteByte('"')
				if err := WriteString(&got, s, piece, html); err != nil {
					t.Fatal(err)
				}
				got.WriteString("\"\n")
				if got.String() != want.String() {
					t.Errorf("WriteString(%q, piece %d, html %v) = %s, want %s", s, piece, html, got.Bytes(), want.Bytes())
				}
			}
		}
	}
}
