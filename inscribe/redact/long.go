package redact

import (
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

// A long text field (source.TextField.Long: 1 MiB or more of JSON) is
// scanned a window at a time, decoded from its line as the scan goes, so
// that the line and its text are not held whole together (a prompt of
// 100 MB: issue 18). What is found is what a scan of the whole text finds:
// the chunks are the same (eachChunk reads ahead what it needs), and so is
// the order of the secrets. Only a field in which a secret is replaced is
// decoded whole.

// window is how much of a long text is decoded at a time (a variable, for
// tests).
var window = 1 << 20

// A textStream is a text read from its start, held from a position on:
// all of a short one, a window or so of a long one.
type textStream struct {
	win  string // the text held, from offset base
	pos  int    // where the reader is in win
	base int
	src  *jsonpatch.TextWindows // what is not held yet; nil: nothing
	buf  []byte
}

// longStream reads the text of a long field of line.
func longStream(line []byte, f source.TextField) *textStream {
	return &textStream{src: jsonpatch.NewTextWindows(line[f.Start:f.End])}
}

// rest is the text held from the reader's position on.
func (s *textStream) rest() string { return s.win[s.pos:] }

// more reports whether text follows what is held.
func (s *textStream) more() bool { return s.src != nil && !s.src.Done() }

// need makes the stream hold at least n bytes from the reader's position,
// or all that is left.
func (s *textStream) need(n int) {
	for len(s.win)-s.pos < n && s.more() {
		buf := append(s.buf[:0], s.win[s.pos:]...)
		buf = s.src.Next(buf, max(window, n-len(buf)))
		s.base += s.pos
		s.win, s.pos, s.buf = string(buf), 0, buf
	}
}

// firstIndexes returns where the secret of each of fs first occurs in the
// text of s (-1: nowhere), as strings.Index would.
func firstIndexes(s *textStream, fs []Finding) []int {
	at := make([]int, len(fs))
	longest := 0
	for i, f := range fs {
		at[i] = -1
		longest = max(longest, len(f.Secret))
	}
	for {
		s.need(window + longest)
		text := s.rest()
		for i, f := range fs {
			if at[i] < 0 {
				if k := strings.Index(text, f.Secret); k >= 0 {
					at[i] = s.base + s.pos + k
				}
			}
		}
		if !s.more() {
			return at
		}
		// The next window starts where an occurrence not whole in this
		// one may start.
		s.pos += max(len(text)-longest+1, 1)
	}
}

// FieldText returns the text of a line's text field (decoded whole when it
// is long).
func FieldText(line []byte, f source.TextField) string { return jsonpatch.FieldText(line, f) }

// junctionText returns what splits reads of a field's text: its last
// junction bytes and more (tail), or its first (else), decoded a window at
// a time for a long field.
func junctionText(line []byte, f source.TextField, tail bool) string {
	if !f.Long {
		return f.Text
	}
	w := jsonpatch.NewTextWindows(line[f.Start:f.End])
	const keep = 2 * junction
	if !tail {
		return string(w.Next(nil, keep))
	}
	var last, buf []byte
	for !w.Done() {
		buf = w.Next(buf[:0], window)
		last = append(last, buf...)
		if len(last) > 2*keep {
			last = last[:copy(last, last[len(last)-keep:])]
		}
	}
	return string(last[max(0, len(last)-keep):])
}

// occursLong reports whether any of fs occurs in the text of the long
// field f of line.
func (r *Redactor) occursLong(line []byte, f source.TextField, fs []Finding) bool {
	for _, at := range firstIndexes(longStream(line, f), fs) {
		if at >= 0 {
			return true
		}
	}
	return false
}
