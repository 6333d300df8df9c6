package jsonpatch

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"
)

// WriteString writes the encoding of s inside a JSON string, its quotes
// left out, as encoding/json encodes it (with escapeHTML, <, > and & as
// json.Marshal escapes them), at most piece bytes of s at a time. The
// encoding of a string is that of its runes one after the other, and a
// piece ends before a rune's first byte, so the pieces' encodings make the
// whole's: a text of 100 MB is written without an encoding of it whole.
func WriteString(w io.Writer, s string, piece int, escapeHTML bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	for len(s) > 0 {
		n := min(len(s), piece)
		if n < len(s) && !utf8.RuneStart(s[n]) {
			n = pieceEnd(s, n)
		}
		buf.Reset()
		if err := enc.Encode(s[:n]); err != nil {
			return err
		}
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if _, err := w.Write(b[1 : len(b)-1]); err != nil {
			return err
		}
		s = s[n:]
	}
	return nil
}

// pieceEnd is where a piece of s that would end at n, inside a rune, ends
// instead: before that rune's first byte, or after its last when the
// piece holds no other (a piece shorter than a rune). Bytes near n that
// make no rune are encoded each alone: n is as good a place as any.
func pieceEnd(s string, n int) int {
	for i := n - 1; i >= max(0, n-utf8.UTFMax); i-- {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		if i > 0 {
			return i
		}
		if _, size := utf8.DecodeRuneInString(s); size > n {
			return size
		}
		break
	}
	return n
}
