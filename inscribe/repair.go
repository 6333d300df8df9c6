package inscribe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/room"
	"github.com/scribe-archive/scribe/session"
)

// Repair (Options.Repair) mends a document whose files are damaged, from
// what was inscribed: the source's first `seen` bytes, when the source
// still holds them (its bytes before the open round must hash to the note's
// closed_hash), else the round files' own lines, when they are whole (each
// as the record says). Those bytes are inscribed afresh into a scratch
// folder inside the document's (a scribe inscription is deterministic: an
// inscription of the same bytes gives the same files), and then, file by
// file:
//
//   - a round file that is not what the record (rounds.tsv, the note's
//     open_round) says scribe wrote is replaced by the scratch one, once
//     that one is what the record says (a round file the record vouches for
//     is never replaced: if the scratch one differs, the source now gives
//     other bytes, and the repair stops);
//   - the record, graph.tsv and the files the session showed are replaced
//     when they differ;
//   - the document is left alone when it parses and holds the same messages
//     (its summary, engagements and every edit of a message kept, byte for
//     byte); otherwise it is rebuilt: the head from the source, with the
//     summary, engagements, fork and sidechains of the old head when it
//     reads; each message of a closed round as it was in the old document
//     when it is there whole (a person's edits kept), else as the source
//     gives it; the open round's as the source gives them;
//   - the read note is kept when it was there, with the record's, the
//     graph's, the builder state's and the document's fields brought up
//     to date, else made anew.
//
// What cannot be recovered (a damaged round file whose source is gone) is
// an error that names it; nothing of the document is then changed.
//
// The round files the record vouches for are the store's own bytes: when
// the source gives other bytes for one of them (the store forgot a text
// the source still holds, or the source was rewritten), the repair is made
// from the round files instead, so that what was forgotten does not come
// back.
func (u *update) repair() error {
	st, err := readState(u.folder)
	if err != nil {
		st = nil
	}
	st = resolveState(st, u.spec.md)
	err = u.repairFrom(st, true)
	if errors.Is(err, errSourceDiffers) {
		u.batch.Abort()
		err = u.repairFrom(st, false)
	}
	return err
}

// errSourceDiffers is a repair from the source that found round files as
// scribe wrote them that the source now gives other bytes for.
var errSourceDiffers = errors.New("the source gives other bytes than the round files scribe wrote")

// repairFrom is repair with the bytes that were inscribed taken from the
// source when trySource is set and the source holds them, else from the
// round files.
func (u *update) repairFrom(st *docState, trySource bool) error {
	folder, md := u.folder, u.spec.md
	scratch, err := os.MkdirTemp(folder, ".repair.tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	// The bytes that were inscribed.
	src := filepath.Join(scratch, "source", filepath.Base(u.spec.source))
	if err := os.MkdirAll(filepath.Dir(src), DirMode); err != nil {
		return err
	}
	fromSource, why := false, ""
	if trySource {
		fromSource, why = u.inscribedFromSource(st, src)
	}
	if !fromSource {
		if err := u.inscribedFromRounds(st, src, why); err != nil {
			return err
		}
	}

	// Inscribed afresh.
	// With the store's redactor: a redacting store's files hold the
	// redacted lines.
	fresh := &Store{Root: filepath.Join(scratch, "store"), Redact: u.store.Redact}
	spec := u.spec
	spec.md = filepath.Join(fresh.Root, filepath.Base(md))
	spec.source = src
	spec.files = nil
	f := fresh.newUpdate(spec, Options{}, &Result{})
	if err := atomicfile.MkdirAll(f.folder, DirMode); err != nil {
		return err
	}
	err = f.run()
	f.batch.Abort()
	f.rounds.close()
	if err != nil {
		return fmt.Errorf("rebuild %s from what was inscribed: %w", md, err)
	}
	fst, err := readState(f.folder)
	if err != nil || fst == nil {
		return fmt.Errorf("rebuild %s: no read note", md)
	}

	// Mend, file by file.
	m := &mend{u: u, st: st, fresh: f.folder, freshNote: fst, from: "the source"}
	if !fromSource {
		m.from = "the round files"
	}
	if err := m.setStraysAside(); err != nil {
		return err
	}
	if err := m.rounds(); err != nil {
		if m.sourceDiffers && fromSource {
			return errSourceDiffers
		}
		return err
	}
	if err := m.replace(filepath.Join(f.folder, roundsFile), filepath.Join(folder, roundsFile)); err != nil {
		return err
	}
	if err := m.replace(graphPath(f.folder), graphPath(folder)); err != nil {
		return err
	}
	if err := m.files(); err != nil {
		return err
	}
	note, err := m.document(spec.md)
	if err != nil {
		return err
	}
	if st == nil {
		m.say("%s: made anew", statePath(folder))
	}
	if m.docChanged {
		pending := docState{None: true}
		if st != nil {
			pending = *st
		}
		pending.Next = note
		if err := writeState(&u.batch, folder, &pending); err != nil {
			return err
		}
		u.batch.MoveLast(md)
	}
	if err := writeState(&u.batch, folder, note); err != nil {
		return err
	}
	changed := u.batch.Len() > 0
	if err := u.batch.Commit(); err != nil {
		return err
	}
	u.seen = note.Seen
	u.res.Outcome = Unchanged
	if changed || len(m.said) > 0 {
		u.res.Outcome = Repaired
	}
	u.res.Warnings = append(u.res.Warnings, m.said...)
	if !fromSource && why != "" {
		u.res.Warnings = append(u.res.Warnings, errors.New(why))
	}
	return nil
}

// inscribedFromSource copies the source's bytes that were inscribed to
// dst, when the source holds them: all of it when there is no note.
func (u *update) inscribedFromSource(st *docState, dst string) (bool, string) {
	in, err := os.Open(u.spec.source)
	if err != nil {
		return false, fmt.Sprintf("%s: %v: rebuilt from the round files", u.spec.source, describeGone(err))
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return false, err.Error()
	}
	end := fi.Size()
	if st != nil {
		if end < st.Seen {
			return false, fmt.Sprintf("%s no longer holds what was inscribed from it: rebuilt from the round files", u.spec.source)
		}
		if _, ok, err := checkClosed(io.NewSectionReader(in, 0, st.OpenOffset), st.ClosedHash); err != nil || !ok {
			return false, fmt.Sprintf("%s no longer holds what was inscribed from it: rebuilt from the round files", u.spec.source)
		}
		end = st.Seen
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, FileMode)
	if err != nil {
		return false, err.Error()
	}
	_, err = io.Copy(out, io.NewSectionReader(in, 0, end))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err.Error()
	}
	return true, ""
}

func describeGone(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "the source is gone"
	}
	return err.Error()
}

// inscribedFromRounds writes to dst the lines the round files hold, once
// each is checked against the record (or, without one, against the note's
// hash of what was inscribed). A round file that does not hold what was
// written cannot be recovered: it is named, and nothing is changed.
func (u *update) inscribedFromRounds(st *docState, dst, why string) error {
	folder := u.folder
	lost := func(p, what string) error {
		return &DamageError{Session: u.spec.id, File: p, Why: what + ", and it cannot be recovered: " + why}
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, FileMode)
	if err != nil {
		return err
	}
	defer out.Close()
	// Checked against the record as it is read; a record that does not
	// read to its end vouches for nothing: what was copied is dropped, and
	// the files are checked against the note's hash instead.
	if st != nil && st.RoundsSize != nil {
		var errs []error
		copyRound := func(s roundSum) error {
			p := roundPath(folder, s.Round)
			if err := checkSum(p, s, true); err != nil {
				errs = append(errs, lost(p, err.Error()))
				return nil
			}
			if err := copyEntries(out, p); err != nil {
				errs = append(errs, lost(p, err.Error()))
			}
			return nil
		}
		err := eachRecorded(folder, st, copyRound)
		if err == nil {
			if st.OpenRound != nil {
				copyRound(*st.OpenRound)
			}
			return errors.Join(errs...)
		}
		if err := out.Truncate(0); err != nil {
			return err
		}
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	// No record: every round file there, in order, checked against the
	// note's hash of the closed rounds when there is one.
	ns, err := roundNumbers(roundsDir(folder))
	if err != nil || len(ns) == 0 {
		return lost(roundsDir(folder), "no round files")
	}
	var h *closedCheck
	if st != nil {
		h = newClosedCheck(st.ClosedHash)
	}
	w := io.Writer(out)
	if h != nil {
		w = io.MultiWriter(out, h)
	}
	var off int64
	for i, n := range ns {
		p := roundPath(folder, n)
		if n != i+1 {
			return lost(roundPath(folder, i+1), "missing")
		}
		if st != nil && off == st.OpenOffset {
			if !h.ok() {
				return lost(roundsDir(folder), "the closed round files do not hold the bytes inscribed")
			}
			w = out
		}
		cw := &countWriter{w: w}
		if err := copyEntries(cw, p); err != nil {
			return lost(p, err.Error())
		}
		off += cw.n
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// copyEntries writes the lines a round file holds, read an entry at a
// time.
func copyEntries(w io.Writer, p string) error {
	if err := eachEntry(p, func(e RoundEntry, b []byte) error { return writeEntry(w, e, b) }); err != nil {
		return fmt.Errorf("unreadable: %v", err)
	}
	return nil
}

// mend is a repair's work on one document.
type mend struct {
	u          *update
	st         *docState // the note, nil when it was lost
	fresh      string    // the folder of the fresh inscription
	freshNote  *docState
	from       string // what the fresh inscription was made from
	docChanged bool
	said       []error // what was mended, for the report
	// sourceDiffers: a round file as scribe wrote it differs from the
	// fresh one.
	sourceDiffers bool
}

func (m *mend) say(format string, args ...any) {
	m.said = append(m.said, fmt.Errorf(format, args...))
}

// rounds mends the round files.
func (m *mend) rounds() error {
	u := m.u
	ns, err := roundNumbers(roundsDir(m.fresh))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	record, err := m.record()
	if err != nil {
		return err
	}
	defer record.close()
	var errs []error
	for _, n := range ns {
		have, fresh := roundPath(u.folder, n), roundPath(m.fresh, n)
		same, err := sameFile(have, fresh)
		if err != nil {
			return err
		}
		if same {
			continue
		}
		rec, known := record.sum(n)
		if known && checkSum(have, rec, true) == nil {
			m.sourceDiffers = true
			errs = append(errs, &DamageError{Session: u.spec.id, File: have, Why: "the source now gives other bytes for this round than the store holds, and the store's are as scribe wrote them: nothing was changed"})
			continue
		}
		if known {
			if err := checkSum(fresh, rec, true); err != nil {
				errs = append(errs, &DamageError{Session: u.spec.id, File: have, Why: "damaged, and the source no longer gives the bytes scribe wrote in it: nothing was changed"})
				continue
			}
		}
		why := "rebuilt from " + m.from
		if _, err := os.Stat(have); errors.Is(err, fs.ErrNotExist) {
			why = "was missing: " + why
		} else {
			why = "was damaged: " + why
		}
		if err := atomicfile.MkdirAll(roundsDir(u.folder), DirMode); err != nil {
			return err
		}
		if err := m.copy(fresh, have); err != nil {
			return err
		}
		m.say("%s %s", have, why)
	}
	return errors.Join(errs...)
}

// recordCursor looks up what the record (rounds.tsv, the note's
// open_round) says scribe wrote in a round file, for rounds asked in
// increasing order: the record is read on as far as the round asked, a
// line at a time, not held (issue 33).
type recordCursor struct {
	r    *sumReader // nil without a record that reads
	at   roundSum   // the last line read
	open *roundSum
}

// record opens the record of the document's round files for mend.rounds.
// A record that does not read says nothing of the closed rounds, so it is
// read through once before the cursor is opened: the cursor gives rounds
// as they are asked, before the line that would show the damage.
func (m *mend) record() (*recordCursor, error) {
	c := &recordCursor{}
	if m.st == nil || m.st.RoundsSize == nil {
		return c, nil
	}
	c.open = m.st.OpenRound
	path := filepath.Join(m.u.folder, roundsFile)
	if eachSum(path, *m.st.RoundsSize, nil) != nil {
		return c, nil
	}
	r, err := openSums(path, *m.st.RoundsSize)
	if err != nil {
		return nil, err
	}
	c.r = r
	return c, nil
}

// sum returns what the record says of round n, and whether it has it.
func (c *recordCursor) sum(n int) (roundSum, bool) {
	if o := c.open; o != nil && o.Round == n {
		return *o, true
	}
	for c.r != nil && c.at.Round < n {
		s, err := c.r.next()
		if err != nil {
			c.close()
			break
		}
		c.at = s
	}
	return c.at, c.at.Round == n
}

func (c *recordCursor) close() {
	if c.r != nil {
		c.r.close()
		c.r = nil
	}
}

// setStraysAside sets aside the round files beyond the fresh
// inscription's last round (strayRounds).
func (m *mend) setStraysAside() error {
	ns, err := roundNumbers(roundsDir(m.fresh))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	last := 0
	if len(ns) > 0 {
		last = ns[len(ns)-1]
	}
	return setStraysAside(m.u.folder, last, m.say)
}

// replace puts the fresh inscription's version of a file in place when the
// store's differs.
func (m *mend) replace(fresh, have string) error {
	same, err := sameFile(have, fresh)
	if err != nil || same {
		return err
	}
	if _, err := os.Stat(fresh); errors.Is(err, fs.ErrNotExist) {
		os.Remove(have) // nothing to record: a session whose only round is open
		return nil
	}
	m.say("%s was missing or damaged: made again", have)
	return m.copy(fresh, have)
}

// files mends the files the session showed (named by their content).
func (m *mend) files() error {
	dir := filepath.Join(m.fresh, filesDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		have := filepath.Join(m.u.folder, filesDir, e.Name())
		same, err := sameFile(have, filepath.Join(dir, e.Name()))
		if err != nil || same {
			if err != nil {
				return err
			}
			continue
		}
		if err := atomicfile.MkdirAll(filepath.Dir(have), DirMode); err != nil {
			return err
		}
		m.say("%s was missing or damaged: made again", have)
		if err := m.copy(filepath.Join(dir, e.Name()), have); err != nil {
			return err
		}
	}
	return nil
}

// copy adds a copy of a file to the batch (one its callers found to
// differ), copied by the kernel: a round file of a 100 MB line is not
// brought into memory.
func (m *mend) copy(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	p, err := m.u.batch.Create(to, FileMode)
	if err != nil {
		return err
	}
	if _, err := p.ReadFrom(in); err != nil {
		return err
	}
	return p.Close()
}

// sameFile reports whether two files hold the same bytes (a missing file
// is the same as another missing one only).
func sameFile(a, b string) (bool, error) {
	fa, errA := os.Open(a)
	fb, errB := os.Open(b)
	if fa != nil {
		defer fa.Close()
	}
	if fb != nil {
		defer fb.Close()
	}
	switch {
	case errA != nil && !errors.Is(errA, fs.ErrNotExist):
		return false, errA
	case errB != nil && !errors.Is(errB, fs.ErrNotExist):
		return false, errB
	case errA != nil || errB != nil:
		return errA != nil && errB != nil, nil
	}
	ia, errA := fa.Stat()
	ib, errB := fb.Stat()
	if errA != nil || errB != nil || ia.Size() != ib.Size() {
		return false, errors.Join(errA, errB)
	}
	return atomicfile.SameReader(fa, fb)
}

// document mends the document, and returns the note that describes it.
func (m *mend) document(freshMD string) (*docState, error) {
	u := m.u
	md := u.spec.md
	note := *m.freshNote
	if m.st != nil {
		// The note that was there, with what the repair may have changed:
		// the record, the graph, and the builder's state, which describes
		// them (its fork points were read from the graph).
		kept := *m.st
		kept.RoundsSize, kept.OpenRound, kept.GraphSize = note.RoundsSize, note.OpenRound, note.GraphSize
		kept.Builder = note.Builder
		note = kept
	} else {
		note.Source = u.store.recordedSource(u.spec.source)
	}
	// The documents are read from their files while they hold the same
	// messages (a repair of a sound session of a million lines holds
	// neither whole), and whole only to be mended.
	crlf, err := hasCRLF(md)
	var old, fresh []byte
	if err == nil && crlf {
		if old, err = os.ReadFile(md); err != nil {
			return nil, err
		}
		if fresh, err = os.ReadFile(freshMD); err != nil {
			return nil, err
		}
		// Converted to CRLF line ends (git's autocrlf, an editor): scribe
		// writes LF alone, and the document is mended in place, every
		// byte of a person's kept, when that is all that changed.
		if lf := bytes.ReplaceAll(old, []byte("\r\n"), []byte("\n")); sameMessages(memDoc(lf), memDoc(fresh), md) {
			if err := locateOpenIn(md, lf, &note); err != nil {
				return nil, err
			}
			if _, err := u.batch.WriteIfChangedIn(u.folder, md, lf, FileMode); err != nil {
				return nil, err
			}
			m.docChanged = true
			m.say("%s: its line ends were CRLF (git's autocrlf?): made LF again, its text kept as it was", md)
			return &note, nil
		}
	}
	if err == nil && !crlf && sameMessages(fileDoc(md), fileDoc(freshMD), md) {
		if m.st == nil {
			// A new note: where the open round starts in the document.
			if err := locateOpen(md, &note); err != nil {
				return nil, err
			}
		}
		return &note, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// The old document, when there is one: in memory when its line ends
	// were CRLF, else read from its file a message at a time.
	var oldDoc docBytes
	switch {
	case old != nil:
		oldDoc = memDoc(old)
	case err == nil:
		oldDoc = fileDoc(md)
	}
	p, err := u.batch.CreateIn(u.folder, md, FileMode)
	if err != nil {
		return nil, err
	}
	openAt, kept, summaryLost, err := m.rebuild(p, oldDoc, fileDoc(freshMD), freshMD)
	if err != nil {
		return nil, err
	}
	if err := p.Close(); err != nil {
		return nil, err
	}
	aside := ""
	if oldDoc != nil {
		// What a person wrote in it that the rebuilt one may not hold (a
		// summary in a head that does not read, a message cut in two) is
		// kept: the document as it was is set aside beside it.
		aside = md + ".damaged-" + time.Now().UTC().Format("20060102T150405.000Z")
		a, err := u.batch.CreateIn(u.folder, aside, FileMode)
		if err != nil {
			return nil, err
		}
		if err := copyDoc(a, oldDoc); err != nil {
			return nil, err
		}
		if err := a.Close(); err != nil {
			return nil, err
		}
		// The rebuilt document is put in place after it.
		u.batch.MoveLast(md)
	}
	m.docChanged = true
	note.DocOpenAt, note.DocTailHash = openAt, m.freshNote.DocTailHash
	note.OpenFirstID = m.freshNote.OpenFirstID
	note.DocFormat = session.FormatVersion
	switch {
	case oldDoc == nil:
		m.say("%s was missing: rebuilt from %s", md, m.from)
	default:
		what := fmt.Sprintf("%s was damaged: rebuilt from %s, keeping %d of its messages as they were", md, m.from, kept)
		if summaryLost {
			what += "; its head did not read, so its summary and engagements could not be carried over"
		}
		what += "; the document as it was is set aside as " + filepath.Base(aside)
		m.say("%s", what)
	}
	return &note, nil
}

// locateOpen sets a new note's doc_open_at and doc_tail_hash for the
// document as it is.
func locateOpen(md string, note *docState) error {
	f, err := os.Open(md)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	at := fi.Size()
	if note.OpenFirstID != "" {
		if at, err = locateItem(f, fi.Size(), note.DocOpenAt, note.OpenFirstID); err != nil {
			return err
		}
		if at < 0 {
			return fmt.Errorf("%s: the open round's first message (%s) is not in the document", md, note.OpenFirstID)
		}
	}
	note.DocOpenAt = at
	note.DocTailHash, err = rangeSum(f, fi.Size(), fi.Size()-at)
	return err
}

// sameMessages reports whether a document reads and holds the messages
// the fresh one does, in the same order. A document written before the
// client's bookkeeping became notes (docs/FORMAT.md §12.3) holds such an
// entry as a message of its own: that message is passed over. Both are
// read a message at a time: a whole parse of a session of 100,000 tiny
// lines held 200 MB.
func sameMessages(old, fresh docBytes, md string) bool {
	r, err := old.items(md)
	if err != nil {
		return false
	}
	defer r.Close()
	want, err := fresh.items(md)
	if err != nil {
		return false
	}
	defer want.Close()
	// The fresh document's next message's identities alone are held, not
	// the message: its texts are the window it was read into (as long as
	// the message), which need not be held while the old one's is read.
	next := func() []string {
		it, err := want.Next()
		if err != nil {
			return nil
		}
		ids := make([]string, len(it.IDs))
		for i, id := range it.IDs {
			ids[i] = strings.Clone(id)
		}
		return ids
	}
	w := next()
	var notes map[string]bool
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		if w != nil && slices.Equal(it.IDs, w) {
			w = next()
			continue
		}
		if notes == nil {
			notes = noteEntries(fresh, md)
		}
		if len(it.IDs) == 0 || !notes[it.IDs[0]] {
			return false
		}
	}
	return w == nil
}

// docBytes opens a document's bytes, in a file or in memory.
type docBytes func() (io.ReadCloser, int64, error)

func fileDoc(path string) docBytes {
	return func() (io.ReadCloser, int64, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		return f, fi.Size(), nil
	}
}

func memDoc(b []byte) docBytes {
	return func() (io.ReadCloser, int64, error) { return bytesFile{bytes.NewReader(b)}, int64(len(b)), nil }
}

// items reads the document's messages.
func (d docBytes) items(md string) (*document.ItemReader, error) {
	f, size, err := d()
	if err != nil {
		return nil, err
	}
	r, err := document.ReadItems(f, size, md)
	if err != nil {
		f.Close()
	}
	return r, err
}

// bytesFile is a document in memory, read as a file.
type bytesFile struct{ *bytes.Reader }

func (bytesFile) Close() error { return nil }

// hasCRLF reports whether a file holds a CRLF line end, reading it a
// buffer at a time.
func hasCRLF(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	cr := false // the last buffer ended in '\r'
	for {
		n, err := f.Read(buf)
		b := buf[:n]
		if n > 0 && (cr && b[0] == '\n' || bytes.Contains(b, []byte("\r\n"))) {
			return true, nil
		}
		cr = n > 0 && b[n-1] == '\r' || n == 0 && cr
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// noteEntries returns the entries a document's messages show as notes
// (none when it does not read).
func noteEntries(doc docBytes, md string) map[string]bool {
	m := map[string]bool{}
	r, err := doc.items(md)
	if err != nil {
		return m
	}
	defer r.Close()
	for {
		it, err := r.Next()
		if err != nil {
			return m
		}
		for _, b := range it.Blocks {
			if b.Kind == session.KindNote && b.Entry != "" {
				m[b.Entry] = true
			}
		}
	}
}

// chunk is one message of a document, by its bytes.
type chunk struct {
	start, end int64
	ids        []string
}

// key is a chunk's identities as a map key.
func (c chunk) key() string { return fmt.Sprint(c.ids) }

// The kinds of line ItemOpen and a heading are made of.
const (
	lineOther = iota
	lineEmpty
	lineRule
	lineHeading
)

// itemChunks splits a document into its messages by their bytes, as
// document.ReadHead finds them: ItemOpen after a line end, a heading line,
// then scribe's identity comment. A chunk runs to the next one's start.
// The document is read a line at a time, and only an identity comment is
// held whole.
func itemChunks(doc docBytes) ([]chunk, error) {
	f, size, err := doc()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var out []chunk
	var at [4]int64 // the last four lines' offsets
	var kind [4]int // and kinds
	var pos int64
	for {
		start := pos
		line, err := br.ReadSlice('\n')
		pos += int64(len(line))
		k := lineOther
		switch {
		case err == nil && string(line) == "\n" && start > 0:
			k = lineEmpty // after a line end
		case err == nil && string(line) == "---\n":
			k = lineRule
		case bytes.HasPrefix(line, []byte("### ")) && err != io.EOF:
			k = lineHeading
		}
		id := kind == [4]int{lineEmpty, lineRule, lineEmpty, lineHeading}
		var whole []byte
		if id {
			whole = bytes.Clone(line)
		}
		for err == bufio.ErrBufferFull {
			line, err = br.ReadSlice('\n')
			pos += int64(len(line))
			if id {
				whole = append(whole, line...)
			}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if id {
			if ids := identities(bytes.TrimSuffix(whole, []byte("\n"))); len(ids) > 0 {
				if n := len(out); n > 0 {
					out[n-1].end = at[0]
				}
				out = append(out, chunk{start: at[0], end: size, ids: ids})
			}
		}
		if err == io.EOF {
			return out, nil
		}
		copy(at[:], at[1:])
		copy(kind[:], kind[1:])
		at[3], kind[3] = start, k
	}
}

// identities reads a message's identity comment.
func identities(line []byte) []string {
	kind, data, ok := document.ParseMarker(line)
	var id struct {
		IDs []string `json:"ids"`
	}
	if !ok || kind != "" || json.Unmarshal(data, &id) != nil {
		return nil
	}
	return id.IDs
}

// readChunk reads a chunk's bytes.
func readChunk(f io.ReaderAt, c chunk) ([]byte, error) {
	room.Make(int(c.end - c.start))
	b := make([]byte, c.end-c.start)
	_, err := f.ReadAt(b, c.start)
	return b, err
}

// openDoc opens a document's bytes to be read at offsets.
func openDoc(doc docBytes) (readerAtCloser, error) {
	f, _, err := doc()
	if err != nil {
		return nil, err
	}
	ra, ok := f.(readerAtCloser)
	if !ok {
		f.Close()
		return nil, errors.New("the document cannot be read at an offset")
	}
	return ra, nil
}

type readerAtCloser interface {
	io.ReaderAt
	io.Closer
}

// copyDoc copies a document's bytes to w.
func copyDoc(w io.Writer, doc docBytes) error {
	f, _, err := doc()
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// rebuild writes to w a document made from the fresh one, keeping of the
// old one (nil when there is none) what it can: its head's person-owned
// parts, and its closed rounds' messages that are there whole. Each is read
// a message at a time: a message of the old one is read to see whether it
// parses on its own only when the fresh one holds it, and what is written
// is copied from the files. It returns where the open round starts in what
// it wrote.
func (m *mend) rebuild(w io.Writer, old, fresh docBytes, freshMD string) (openAt int64, kept int, summaryLost bool, err error) {
	fh, err := readHead(freshMD)
	if err != nil {
		return 0, 0, false, err
	}
	meta, summary := *fh.Meta, fh.Summary
	if old != nil {
		if oh, err := readOldDoc(m.u.spec.md); err == nil {
			summary = oh.keep(&meta, summary)
		} else {
			summaryLost = true
		}
	}
	head := document.RenderHead(&meta, summary)
	freshChunks, err := itemChunks(fresh)
	if err != nil {
		return 0, 0, false, err
	}
	ff, err := openDoc(fresh)
	if err != nil {
		return 0, 0, false, err
	}
	defer ff.Close()
	// The old document's messages the fresh one holds that parse on their
	// own, by identity.
	have := map[string]chunk{}
	var of readerAtCloser
	if old != nil {
		want := map[string]bool{}
		for _, c := range freshChunks {
			want[c.key()] = true
		}
		oldChunks, err := itemChunks(old)
		if err != nil {
			return 0, 0, false, err
		}
		if of, err = openDoc(old); err != nil {
			return 0, 0, false, err
		}
		defer of.Close()
		for _, c := range oldChunks {
			if !want[c.key()] {
				continue
			}
			b, err := readChunk(of, c)
			if err != nil {
				return 0, 0, false, err
			}
			if d, err := document.Parse(append(head[:len(head):len(head)], b...), m.u.spec.md); err == nil && len(d.Items) == 1 && slices.Equal(d.Items[0].IDs, c.ids) {
				have[c.key()] = c
			}
		}
	}
	cw := &countWriter{w: w}
	if _, err := cw.Write(head); err != nil {
		return 0, 0, false, err
	}
	openAt = -1
	for _, c := range freshChunks {
		if c.start >= m.freshNote.DocOpenAt && openAt < 0 {
			openAt = cw.n
		}
		from, part := io.ReaderAt(ff), c
		if o, ok := have[c.key()]; ok && openAt < 0 {
			// Kept, unless the old one is the start of the fresh one (a
			// message cut short).
			cut := false
			if ol := o.end - o.start; ol < c.end-c.start {
				if cut, err = atomicfile.SameReader(io.NewSectionReader(of, o.start, ol), io.NewSectionReader(ff, c.start, ol)); err != nil {
					return 0, 0, false, err
				}
			}
			if !cut {
				from, part = of, o
				kept++
			}
		}
		if _, err := io.Copy(cw, io.NewSectionReader(from, part.start, part.end-part.start)); err != nil {
			return 0, 0, false, err
		}
	}
	if openAt < 0 {
		openAt = cw.n
	}
	return openAt, kept, summaryLost, nil
}
