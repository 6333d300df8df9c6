package inscribe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
)

// A round file holds its longest texts and lines once more than the round
// itself does: a prompt or a tool result of 100 MB would be held two or
// three times more by json.MarshalIndent (its buffer as it grows, its
// copy, the indented copy), and a line read back from the source once
// more. The helpers below write the same bytes with only small pieces of
// them in memory, so that inscribing a session holds about two copies of
// its longest line (bench/README.md).

// longText is the length from which a text or a line is written in pieces.
const longText = 1 << 20

// writeIndented writes to w what json.MarshalIndent(v, prefix, "  ")
// gives, less the suffix trim, with the strings that texts point at (parts
// of v) encoded piece by piece instead of whole. Each is swapped for a
// placeholder while v is encoded, and put back.
func writeIndented(w *bufio.Writer, v any, prefix string, texts []*string, trim string) error {
	saved := make([]string, len(texts))
	marks := make([][]byte, len(texts))
	for i, t := range texts {
		saved[i] = *t
		*t = fmt.Sprintf("\x00scribe long text %d\x00", i)
		marks[i], _ = json.Marshal(*t)
	}
	out, err := json.MarshalIndent(v, prefix, "  ")
	for i, t := range texts {
		*t = saved[i]
	}
	if err != nil {
		return err
	}
	for _, m := range marks {
		if bytes.Count(out, m) != 1 { // a placeholder a text already held: encode it whole
			if out, err = json.MarshalIndent(v, prefix, "  "); err != nil {
				return err
			}
			texts = nil
			break
		}
	}
	for len(texts) > 0 {
		first, at := 0, -1
		for i, m := range marks {
			if j := bytes.Index(out, m); j >= 0 && (at < 0 || j < at) {
				first, at = i, j
			}
		}
		w.Write(out[:at])
		writeJSONString(w, *texts[first])
		out = out[at+len(marks[first]):]
		texts = append(texts[:first:first], texts[first+1:]...)
		marks = append(marks[:first:first], marks[first+1:]...)
	}
	w.Write(bytes.TrimSuffix(out, []byte(trim)))
	return nil
}

// writeJSONString writes s as encoding/json encodes a string, 64 KiB of
// it at a time (jsonpatch.WriteString).
func writeJSONString(w *bufio.Writer, s string) { writeJSONStringIn(w, s, 64<<10) }

func writeJSONStringIn(w *bufio.Writer, s string, piece int) {
	w.WriteByte('"')
	jsonpatch.WriteString(w, s, piece, true) // a bufio.Writer's error is Flush's
	w.WriteByte('"')
}

// longTexts returns the long texts of a round file's header: its prompt
// and the texts of the agent's blocks.
func longTexts(rf *RoundFile, agent []RoundBlock) []*string {
	var out []*string
	add := func(s *string) {
		if len(*s) >= longText {
			out = append(out, s)
		}
	}
	if rf.User != nil {
		add(&rf.User.Text)
	}
	for i := range agent {
		add(&agent[i].Text)
		if r := agent[i].Result; r != nil {
			for j := range r.Content {
				add(&r.Content[j].Text)
			}
		}
	}
	return out
}

// embeddable reports whether the source's line at [off, off+n), valid
// JSON, is one a round file embeds as it is: valid UTF-8, without white
// space around it (see writeRoundTo). It reads the line in pieces.
func embeddable(src io.ReaderAt, off, n int64) (bool, error) {
	return embeddableIn(src, off, n, 1<<20)
}

func embeddableIn(src io.ReaderAt, off, n int64, piece int) (bool, error) {
	buf := make([]byte, piece+utf8.UTFMax)
	carry := 0 // bytes of an unfinished rune, kept at the start of buf
	var last rune
	for at := off; at < off+n; {
		k, err := src.ReadAt(buf[carry:carry+int(min(int64(piece), off+n-at))], at)
		if k == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return false, err
		}
		chunk := buf[:carry+k]
		if at == off {
			if r, _ := utf8.DecodeRune(chunk); unicode.IsSpace(r) {
				return false, nil
			}
		}
		at += int64(k)
		// All but an unfinished rune at the end, kept for the next piece.
		end := len(chunk)
		if at < off+n {
			for i := len(chunk) - 1; i >= max(0, len(chunk)-utf8.UTFMax); i-- {
				if utf8.RuneStart(chunk[i]) {
					if !utf8.FullRune(chunk[i:]) {
						end = i
					}
					break
				}
			}
		}
		if !utf8.Valid(chunk[:end]) {
			return false, nil
		}
		if end > 0 {
			last, _ = utf8.DecodeLastRune(chunk[:end])
		}
		carry = copy(buf, chunk[end:])
	}
	return !unicode.IsSpace(last), nil
}
