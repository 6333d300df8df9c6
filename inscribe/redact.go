package inscribe

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A Redactor keeps secrets out of a store: it replaces them, in the text of
// what is inscribed, with markers (package inscribe/redact implements it;
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
	// RedactJoint returns two texts with the secrets cut between them (a
	// ends with a secret's start, b starts with its rest) replaced, and
	// whether any was: a is the last text block of a line and b the first
	// of the next, parts of one message (source.TextJoiner).
	RedactJoint(a, b string) (string, string, bool)
	// RedactFile does the same for a file kept beside a session (a large
	// tool output, a subagent's description): JSON is redacted in its
	// string values, other text as a whole; anything else is kept as it
	// is.
	RedactFile(data []byte) ([]byte, bool)
	// RedactName does the same for a file's name, with a marker that can
	// name a file.
	RedactName(name string) string
	// KeyID names the key the markers' hashes are made with, without
	// giving it away (a document records it: redact_key), so that markers
	// made with another key (a store started twice and merged) are
	// noticed.
	KeyID() string
}

// redactText returns a text the store writes that no source line holds (a
// subagent's description from its meta.json, a summary or a title given
// by a person or a model) with its secrets replaced, when the store
// redacts.
func (s *Store) redactText(text string) string {
	if s.Redact == nil || text == "" {
		return text
	}
	b, _ := s.Redact.RedactFile([]byte(text))
	return string(b)
}

// redactedLine is a line the store keeps redacted: its bytes, and the
// length of the source line they stand for.
type redactedLine struct {
	raw    []byte
	srcLen int
}

// A heldLine is a line redacted but not yet built, because the next line
// may continue its last text block (source.TextJoiner): a secret cut
// between the two is replaced in both before either is built. Both lines
// are in one round (a round starts at a prompt, never inside a message),
// and an append builds the open round again from its first line, so a
// secret cut between a line that ended one run and a line the next run
// reads is replaced in both as well: redaction is a function of the
// round's lines, and inscribing a prefix and appending the rest gives what
// inscribing the whole gives.
type heldLine struct {
	l       source.Line // its Raw is the update's own, redacted
	srcLen  int
	changed bool
	msg     string
	// src is the line as the source has it (but for the parts of a secret
	// cut between it and the line before, replaced), and srcLast its last
	// text block: a joint is looked at in the source's text, not in the
	// redacted, where a secret's first part may already be replaced as a
	// secret of its own (a Stripe key's first 20 characters are one), and
	// its rest left.
	src     []byte
	srcLast source.TextField
}

// redactLine replaces the secrets of a source line about to be built, and
// remembers the redacted bytes for its round file; it returns the lines
// ready to be built, in order: none while l is held, the held line, l.
// The lines' offsets and ends stay the source's.
func (u *update) redactLine(l source.Line, ready []source.Line) []source.Line {
	red := u.store.Redact
	tf, ok := u.spec.adapter.(source.TextFinder)
	if red == nil || !ok {
		return append(ready, l)
	}
	srcLen := len(l.Raw)
	fields := tf.TextFields(l.Raw)
	tj, joins := u.spec.adapter.(source.TextJoiner)
	if !joins {
		out, changed := red.RedactLine(l.Raw, fields)
		u.keepRedacted(l.No, out, srcLen, changed)
		l.Raw = out
		return append(ready, l)
	}
	// Redaction changes no path, so the source's fields say whether the
	// line is a message's part. A secret cut between two parts is
	// replaced in the source's text of both (each part by the secret's
	// marker) before either line is redacted.
	src, spliced := l.Raw, false // src is the reader's buffer until spliced
	msg, first, last, part := tj.MessagePart(src, fields)
	if h := u.held; h != nil {
		u.held = nil
		if part && msg == h.msg {
			if a, b, cut := red.RedactJoint(jsonpatch.FieldText(h.src, h.srcLast), jsonpatch.FieldText(src, fields[first])); cut {
				h.src = spliceText(h.src, h.srcLast, a)
				h.l.Raw, _ = red.RedactLine(h.src, tf.TextFields(h.src))
				h.changed = true
				src, spliced = spliceText(src, fields[first], b), true
				fields = tf.TextFields(src)
				msg, first, last, part = tj.MessagePart(src, fields)
			}
		}
		u.keepRedacted(h.l.No, h.l.Raw, h.srcLen, h.changed)
		ready = append(ready, h.l)
	}
	out, changed := red.RedactLine(src, fields)
	changed = changed || spliced
	l.Raw = out
	if part {
		if !spliced {
			src = bytes.Clone(src)
		}
		if !changed {
			l.Raw = src
		}
		u.held = &heldLine{l: l, srcLen: srcLen, changed: changed, msg: msg, src: src, srcLast: fields[last]}
		return ready
	}
	u.keepRedacted(l.No, l.Raw, srcLen, changed)
	return append(ready, l)
}

// releaseHeld returns the line held, if any, ready to be built: the
// source has no next line yet.
func (u *update) releaseHeld(ready []source.Line) []source.Line {
	if h := u.held; h != nil {
		u.held = nil
		u.keepRedacted(h.l.No, h.l.Raw, h.srcLen, h.changed)
		ready = append(ready, h.l)
	}
	return ready
}

// keepRedacted remembers the redacted bytes of line n for its round file.
func (u *update) keepRedacted(n int, raw []byte, srcLen int, changed bool) {
	if changed {
		u.marked = true // the document holds markers of the store's key
	}
	if !changed {
		return
	}
	if u.redacted == nil {
		u.redacted = make(map[int]redactedLine)
	}
	u.redacted[n] = redactedLine{raw: raw, srcLen: srcLen}
}

// spliceText returns line with the value of field f replaced by text.
func spliceText(line []byte, f source.TextField, text string) []byte {
	enc := jsonpatch.EncodeString(text)
	out := make([]byte, 0, len(line)-(f.End-f.Start)+len(enc))
	out = append(out, line[:f.Start]...)
	out = append(out, enc...)
	return append(out, line[f.End:]...)
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

// A store that replaced secrets with markers notes it in its machine's
// own state (.scribe/redacting), apart from its redact.toml: a store that
// loses its redact.toml (deleted, or left out of a copy) would otherwise
// read as one that never redacted, and store the next secrets in the
// clear beside its markers.

// NoteRedacting records whether the store at root redacts: the note is
// made when it does (once), removed when a person chose not to.
func NoteRedacting(root string, on bool) error {
	p := filepath.Join(root, localDir, redactingFile)
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := writeGitFiles(root); err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(filepath.Dir(p), DirMode); err != nil {
		return err
	}
	_, err := atomicfile.WriteIfChanged(p, []byte("this store replaces secrets with markers: its redact.toml holds the markers' key and must be kept\n"), FileMode)
	return err
}

// NotedRedacting reports whether the store at root noted that it redacts
// (NoteRedacting), and where.
func NotedRedacting(root string) (bool, string) {
	p := filepath.Join(root, localDir, redactingFile)
	_, err := os.Stat(p)
	return err == nil, p
}
