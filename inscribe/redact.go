package inscribe

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A Redactor keeps secrets out of a store: it replaces them, in the text of
// what is inscribed, with markers (package internal/redact implements it;
// the command gives one to a store whose redact.toml asks for it). A store
// without one writes every byte as the source has it.
//
// Redaction happens to each source line before the adapter's builder sees
// it, so that everything derived from the line (the document, the round
// file's blocks, the indexes, the catalogs, titles) is derived from the
// redacted line; the round file keeps the redacted line in place of the
// source's. Only the text fields of a line change (source.TextFinder), so
// the line stays valid JSON with every identity and signature intact. The
// read note still describes the source's bytes (offsets, lengths, hashes):
// it checks that the source is unchanged, and redaction is a function of a
// line alone, so that inscribing a prefix and appending the rest gives what
// inscribing the whole gives.
type Redactor interface {
	// RedactLine returns line with the secrets in its text fields
	// replaced, and whether anything was.
	RedactLine(line []byte, fields []source.TextField) ([]byte, bool)
	// RedactFile does the same for a file kept beside a session (a large
	// tool output, a subagent's description): JSON is redacted in its
	// string values, other text as a whole; anything else is kept as it
	// is.
	RedactFile(data []byte) ([]byte, bool)
	// RedactName does the same for a file's name, with a marker that can
	// name a file.
	RedactName(name string) string
}

// redactedLine is a line the store keeps redacted: its bytes, and the
// length of the source line they stand for.
type redactedLine struct {
	raw    []byte
	srcLen int
}

// redactLine replaces the secrets of a source line about to be built, and
// remembers the redacted bytes for its round file. l.Raw is then the
// redacted line; the line's offset and end in the source stay as they were.
func (u *update) redactLine(l *source.Line) {
	red := u.store.Redact
	tf, ok := u.spec.adapter.(source.TextFinder)
	if red == nil || !ok {
		return
	}
	out, changed := red.RedactLine(l.Raw, tf.TextFields(l.Raw))
	if !changed {
		return
	}
	if u.redacted == nil {
		u.redacted = make(map[int]redactedLine)
	}
	u.redacted[l.No] = redactedLine{raw: out, srcLen: len(l.Raw)}
	l.Raw = out
}

// unredact makes the entries of a round built from redacted lines point at
// the source again (their length is the source line's), holding the
// redacted bytes to write in the round file instead of the source's.
func (u *update) unredact(r *session.Round) {
	if len(u.redacted) == 0 {
		return
	}
	for i := range r.Entries {
		e := &r.Entries[i]
		if rl, ok := u.redacted[e.Line]; ok {
			e.Raw, e.Len = rl.raw, rl.srcLen
		}
	}
	if !r.Open && len(r.Entries) > 0 {
		// A closed round's lines are never read again in this run.
		last := r.Entries[len(r.Entries)-1].Line
		for n := range u.redacted {
			if n <= last {
				delete(u.redacted, n)
			}
		}
	}
}

// copyRedacted copies a file kept beside a session with its secrets
// replaced, unless the target already holds those bytes.
func copyRedacted(b *atomicfile.Batch, red Redactor, from, to string) (bool, error) {
	f, err := os.Open(from)
	if err != nil {
		return false, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return false, err
	}
	data, _ = red.RedactFile(data)
	if old, err := os.ReadFile(to); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := atomicfile.MkdirAll(filepath.Dir(to), DirMode); err != nil {
		return false, err
	}
	return b.WriteIfChanged(to, data, FileMode)
}
