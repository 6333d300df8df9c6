package exportcore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLongTextsWriteAsEncoded: a line written with its texts marked is
// the line encoded with them, whatever they hold (HTML, invalid UTF-8,
// runes across the pieces' bounds, U+2028) and in either escaping.
func TestLongTextsWriteAsEncoded(t *testing.T) {
	defer SetLongTextForTest(1000)()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", " ", "<", ">", "&", "é", "→", "\u2028", "\"", "\\", "\n", "\x00", "\xff", "\xe2\x82", "😀"}
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	type part struct {
		Text string `json:"text"`
	}
	type line struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
		Note    string          `json:"note"`
	}
	for _, html := range []bool{true, false} {
		encode := func(v any) []byte {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		}
		for range 20 {
			texts := []string{text(r.IntN(300_000)), text(r.IntN(2000)), text(r.IntN(200_000))}
			want := encode(line{Type: "x<y", Content: encode([]part{{texts[0]}, {texts[1]}}), Note: "said: " + texts[2]})
			l := NewLongTexts(html)
			var m []string
			for _, s := range texts {
				m = append(m, l.Mark(s))
			}
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			l.Write(w, encode(line{Type: "x<y", Content: encode([]part{{m[0]}, {m[1]}}), Note: "said: " + m[2]}))
			w.Flush()
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("html %v: the line written differs from the line encoded (%d bytes, %d)", html, got.Len(), len(want))
			}
		}
	}
}
