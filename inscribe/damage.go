package inscribe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session/source"
)

// DamageError is a file of the store that is missing, or does not hold
// what scribe wrote in it: a round file deleted, cut short or overwritten,
// a read note lost. scribe repair SESSION rebuilds what can be rebuilt.
type DamageError struct {
	// Session is the session whose repair mends it (for a sidechain, its
	// parent's).
	Session string
	File    string
	Why     string
}

func (e *DamageError) Error() string { return fmt.Sprintf("%s: %s", e.File, e.Why) }

// SessionOf returns the session a document of the store belongs to: its
// own, or its parent's for a sidechain ("" for a path outside the store).
func (s *Store) sessionOf(md string) string {
	rel, err := filepath.Rel(s.SessionsDir(), md)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 2 {
		return ""
	}
	return strings.TrimSuffix(parts[1], ".md")
}

// checkRounds checks the round files of the document an update is about to
// bring up to date against its note: their sizes, and the bytes of those
// changed since the note was written (checkSums, changedOnes). A note from before the record of round files
// (rounds.tsv) gets one, made from the files once they are checked against
// the note; so does one whose record was damaged, with a warning.
func (u *update) checkRounds() error {
	st := u.old
	if st.RoundsSize != nil {
		err := checkSums(u.folder, u.spec.id, st, changedOnes, u.src)
		if !errors.Is(err, errRecord) {
			return err
		}
		u.res.Warnings = append(u.res.Warnings, fmt.Errorf("%s: damaged: made again from the round files, checked against the read note", filepath.Join(u.folder, roundsFile)))
	}
	closed, open, err := sumExisting(u.folder, u.spec.id, st)
	if err != nil {
		return err
	}
	size, err := appendSums(&u.batch, filepath.Join(u.folder, roundsFile), 0, closed)
	if err != nil {
		return err
	}
	st.RoundsSize, st.OpenRound = &size, open
	if err := writeState(&u.batch, u.folder, st); err != nil {
		return err
	}
	return u.batch.Commit()
}

// CheckDoc checks, cheaply, that a document's round files are those its
// read note and their record describe: that each is there, with the size
// scribe wrote. It returns a *MissingNoteError when the note is lost, and
// a *DamageError for each file that is not right (joined). A note from
// before the record of round files has nothing to check against yet (the
// next update of the document makes one).
func checkDoc(md string) error {
	folder := folderOf(md)
	st, err := readState(folder)
	if err != nil {
		return err
	}
	st = resolveState(st, md)
	if st == nil {
		// No note on this machine: what the record holds (the next
		// update makes the note from it).
		if st = recordOnly(folder); st == nil {
			return &MissingNoteError{Doc: md, Note: statePath(folder), Session: DocSession(md)}
		}
	}
	if st.RoundsSize == nil {
		return nil
	}
	err = checkSums(folder, DocSession(md), st, sizesOnly, nil)
	if errors.Is(err, errRecord) {
		return &DamageError{Session: DocSession(md), File: filepath.Join(folder, roundsFile), Why: "missing or damaged: it does not hold what the read note says"}
	}
	return err
}

// docDamage is the error of a document scribe cannot read: a *DamageError
// when it does not follow the format (cut short, overwritten, or edited
// into something scribe cannot read), else err.
func docDamage(session, md string, err error) error {
	var fe *document.FormatError
	if !errors.As(err, &fe) {
		return err
	}
	why := fe.Msg
	if fe.Line > 0 {
		why = fmt.Sprintf("line %d: %s", fe.Line, fe.Msg)
	}
	return &DamageError{Session: session, File: md, Why: why + " (damaged, or edited into something scribe cannot read)"}
}

// DocSession returns the session a document belongs to: the session_id
// of its head (a sidechain's is its parent's), else what its path says.
func DocSession(md string) string {
	if m, err := readMeta(md); err == nil && m.SessionID != "" {
		return m.SessionID
	}
	name := strings.TrimSuffix(filepath.Base(md), ".md")
	if isSidechainBase(name) {
		return filepath.Base(filepath.Dir(md))
	}
	return name
}

// NoteSource returns the source recorded in the read note of the document
// whose folder is given ("" when there is no readable note): where to find
// the source of a document whose head is lost.
func noteSource(folder string) string {
	st, err := readState(folder)
	if err != nil || st == nil {
		return ""
	}
	if st.Next != nil && st.Source == "" {
		return st.Next.Source
	}
	return st.Source
}

// VerifyDoc checks everything scribe wrote for a document against what it
// recorded, reading it all: that the document reads, that its read note is
// there, that each round file holds the bytes scribe wrote in it (rounds.tsv,
// the note's open_round), and that graph.tsv is what the closed round files
// give (a, the adapter of the document's source format, rebuilds it). Its
// source, when at sourcePath, tells the open round's file an update stopped
// after writing it from a damaged one. It returns a *DamageError (or a
// *MissingNoteError) for each problem.
func verifyDoc(md string, a source.Adapter, sourcePath string) []error {
	folder := folderOf(md)
	var src io.ReaderAt
	if sourcePath != "" {
		if f, err := os.Open(sourcePath); err == nil {
			defer f.Close()
			src = f
		}
	}
	session := DocSession(md)
	var errs []error
	if err := readsWhole(md); err != nil {
		var fe *document.FormatError
		if errors.As(err, &fe) {
			errs = append(errs, docDamage(session, md, err))
		} else {
			why := err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				why = "missing (deleted?)"
			}
			errs = append(errs, &DamageError{Session: session, File: md, Why: why})
		}
	}
	st, err := readState(folder)
	if err != nil {
		return append(errs, err)
	}
	if st = resolveState(st, md); st == nil {
		// No note on this machine (a clone): the closed round files are
		// checked against their record, the rest waits for the note the
		// next update makes from it.
		if st = recordOnly(folder); st == nil {
			return append(errs, &MissingNoteError{Doc: md, Note: statePath(folder), Session: session})
		}
		err := checkSums(folder, session, st, allBytes, src)
		if errors.Is(err, errRecord) {
			err = &DamageError{Session: session, File: filepath.Join(folder, roundsFile), Why: "damaged: it does not read as a record of round files"}
		}
		walkJoined(err, func(e error) { errs = append(errs, e) })
		return errs
	}
	roundsOK := true
	if st.RoundsSize != nil {
		err := checkSums(folder, session, st, allBytes, src)
		if errors.Is(err, errRecord) {
			err = &DamageError{Session: session, File: filepath.Join(folder, roundsFile), Why: "missing or damaged: it does not hold what the read note says"}
		}
		if err != nil {
			roundsOK = false
			walkJoined(err, func(e error) { errs = append(errs, e) })
		}
	} else if _, _, err := sumExisting(folder, session, st); err != nil {
		roundsOK = false
		errs = append(errs, err)
	}
	if a != nil && roundsOK {
		if err := verifyGraph(md, st, a); err != nil {
			errs = append(errs, &DamageError{Session: session, File: graphPath(folder), Why: err.Error()})
		}
	}
	return errs
}

// readsWhole reports whether a document reads, head and messages, to its
// end: a message at a time, so that a long document is never whole in
// memory (a session of a million lines checks in the memory of one).
func readsWhole(md string) error {
	r, err := fileDoc(md).items(md)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// walkJoined calls f with each error err joins (or err itself).
func walkJoined(err error, f func(error)) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			f(e)
		}
		return
	}
	f(err)
}

// verifyGraph checks a document's graph.tsv against the graph its closed
// round files give.
func verifyGraph(md string, st *docState, a source.Adapter) (rerr error) {
	folder := folderOf(md)
	base := strings.TrimSuffix(filepath.Base(md), ".md")
	cfg := builderConfig(md, base)
	old, err := a.NewBuilder(cfg, st.Builder, nil)
	if err != nil {
		return err
	}
	// The file is compared with the graph a line at a time (a session of
	// a million lines has a graph of 100 MB).
	f, err := os.Open(graphPath(folder))
	var size int64
	if err == nil {
		defer f.Close()
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			size = fi.Size()
		}
	}
	var fileErr error // said once the round files are read, as before
	if errors.Is(err, fs.ErrNotExist) && st.GraphSize == 0 {
		f, size = nil, 0
	} else if err != nil {
		fileErr = errors.New("missing (deleted?)")
	} else if size < st.GraphSize {
		fileErr = fmt.Errorf("%d bytes, but scribe wrote %d (cut short)", size, st.GraphSize)
	}
	c := &graphCheck{same: true}
	if f != nil && fileErr == nil {
		c.got = bufio.NewReaderSize(io.LimitReader(f, st.GraphSize), 64<<10)
	}
	// A long session's nodes are compared as each round closes, and kept
	// in a scratch file for the builder's lookups (ScratchGraph), not by
	// the builder, which held them all (check --store of a million tiny
	// lines peaked at 186 MB; issue 33). The update writes graph.tsv so
	// too, a round's nodes as it closes.
	var g source.Graph
	sg, done, err := BuilderGraph(old.Rounds())
	if err != nil {
		return fmt.Errorf("not checked: a scratch folder for the graph the round files give: %v", err)
	}
	defer func() {
		if err := done(); err != nil && rerr == nil {
			rerr = fmt.Errorf("not checked: the scratch file of the graph the round files give: %v", err)
		}
	}()
	if sg != nil {
		c.Recorder, g = sg, c
	}
	b, err := a.NewBuilder(cfg, nil, g)
	if err != nil {
		return err
	}
	if err := addRounds(b, folder, old.Rounds()); err != nil {
		return err
	}
	if fileErr != nil {
		return fileErr
	}
	c.compare(b.Nodes()) // those of a builder given no recorder
	if c.same && c.got != nil {
		_, err := c.got.ReadByte()
		c.same = err == io.EOF // nothing past the graph's last line
	}
	if !c.same {
		return errors.New("not the graph the round files give (overwritten or damaged)")
	}
	return nil
}

// graphCheck compares the nodes a builder gives with graph.tsv's lines,
// in order, as the update wrote them: those it records as each round
// closes (when it has a Recorder, which also answers the builder's
// lookups), then those it kept.
type graphCheck struct {
	source.Recorder
	got  *bufio.Reader // nil when there is no file
	line []byte
	same bool
}

func (c *graphCheck) Record(nodes []source.Node) {
	c.compare(nodes)
	c.Recorder.Record(nodes)
}

// compare reads the lines of nodes from the file, as long as they are the
// same. A node a line cannot hold (a tab or a newline in a field) has none.
func (c *graphCheck) compare(nodes []source.Node) {
	for _, n := range nodes {
		if !c.same {
			return
		}
		if strings.ContainsAny(n.UUID+n.Anchor+n.Parent, "\t\n") {
			continue
		}
		c.line = fmt.Appendf(c.line[:0], "%s\t%s\t%s\n", n.UUID, n.Anchor, n.Parent)
		c.same = c.got != nil && readsAs(c.got, c.line)
	}
}

// readsAs reports whether r holds want next, and reads it.
func readsAs(r *bufio.Reader, want []byte) bool {
	for len(want) > 0 {
		b, err := r.Peek(min(len(want), r.Size()))
		if len(b) == 0 || !bytes.Equal(b, want[:len(b)]) {
			return false
		}
		r.Discard(len(b))
		want = want[len(b):]
		if err != nil && len(want) > 0 {
			return false
		}
	}
	return true
}

// docLost fails an update of a document that is gone while its folder holds
// a read note that describes it: it was deleted (or lost), and inscribing it
// afresh would silently drop what a person wrote in it. scribe repair
// rebuilds it (keeping its tags), inscribe --rebuild inscribes it afresh.
// A note that holds only the next one of a first inscription stopped before
// the document was put in place describes no document.
func (u *update) docLost() error {
	if u.opts.Rebuild {
		return nil
	}
	st, err := readState(u.folder)
	if err != nil || resolveState(st, u.spec.md) == nil {
		return nil
	}
	return &DamageError{Session: u.spec.id, File: u.spec.md, Why: "missing (deleted?), while its folder holds what was inscribed from its source"}
}
