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
	"slices"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session"
)

// itemOpen is how every item starts.
var itemOpen = []byte(document.ItemOpen)

// readOldDoc reads the head of an existing document.
func readOldDoc(path string) (*oldDoc, error) {
	h, err := readHead(path)
	if err != nil {
		return nil, err
	}
	return &oldDoc{path: path, size: h.Size, meta: h.Meta, summary: h.Summary, bodyAt: h.BodyAt}, nil
}

// keptRange returns the part of the old document that stays: its closed
// rounds, from its first item to where its open round starts.
func (u *update) keptRange() (from, to int64, err error) {
	od, st := u.oldDoc, u.old
	if od == nil || st == nil {
		return 0, 0, nil
	}
	f, err := os.Open(od.path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	at := od.size
	if st.OpenFirstID != "" {
		at, err = locateItem(f, od.size, st.DocOpenAt, st.OpenFirstID)
		if err != nil {
			return 0, 0, err
		}
		if at < 0 {
			return 0, 0, &DamageError{Session: u.spec.id, File: od.path, Why: fmt.Sprintf("the open round's first message (%s) is gone from it (cut short or damaged?)", st.OpenFirstID)}
		}
	}
	if !u.opts.Force {
		same, err := rangeIs(f, od.size, od.size-at, st.DocTailHash)
		if err != nil {
			return 0, 0, err
		}
		if !same {
			return 0, 0, &EditedError{Doc: od.path}
		}
	}
	return od.bodyAt, at, nil
}

// locateItem finds where the item whose first identity is id starts: at
// hint if the document has not moved, else by a scan.
func locateItem(f *os.File, size, hint int64, id string) (int64, error) {
	mark := append([]byte("\n"), document.IdentityPrefix(id)...)
	check := func(at int64) bool {
		if at < 0 || at >= size {
			return false
		}
		buf := make([]byte, min(int64(64<<10), size-at))
		n, _ := f.ReadAt(buf, at)
		buf = buf[:n]
		if !bytes.HasPrefix(buf, itemOpen) {
			return false
		}
		nl := bytes.IndexByte(buf[len(itemOpen):], '\n')
		return nl >= 0 && bytes.HasPrefix(buf[len(itemOpen)+nl:], mark)
	}
	if check(hint) {
		return hint, nil
	}
	// Scan for the identity, then step back to its item's start.
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	var off int64
	carry := []byte{}
	for {
		chunk := make([]byte, 1<<20)
		n, err := io.ReadFull(r, chunk)
		chunk = append(carry, chunk[:n]...)
		if i := bytes.Index(chunk, mark); i >= 0 {
			pos := off - int64(len(carry)) + int64(i)
			back := max(0, pos-(64<<10))
			win := make([]byte, pos-back)
			f.ReadAt(win, back)
			j := bytes.LastIndex(win, itemOpen)
			if j >= 0 && check(back+int64(j)) {
				return back + int64(j), nil
			}
			return -1, nil
		}
		if err != nil {
			return -1, nil
		}
		off += int64(n)
		keep := min(len(chunk), len(mark))
		carry = append([]byte(nil), chunk[len(chunk)-keep:]...)
	}
}

// bodySize is how many bytes of items the body file holds (once its
// writer is flushed): those up to its offset, since a scratch file may
// hold an earlier update's bytes after them.
func (u *update) bodySize() int64 {
	n, err := u.body.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0
	}
	return n
}

// writeDoc writes head + old[keepFrom:keepTo] + the body file's first
// bodyLen bytes (the new closed items, then the open round's items), unless
// the document already holds exactly that.
func (u *update) writeDoc(head []byte, keepFrom, keepTo, bodyLen int64) (bool, error) {
	var old *os.File
	if u.oldDoc != nil {
		f, err := os.Open(u.oldDoc.path)
		if err != nil {
			return false, err
		}
		defer f.Close()
		old = f
	}
	size := int64(len(head)) + (keepTo - keepFrom) + bodyLen
	if old != nil && size == u.oldDoc.size {
		rs := []io.Reader{bytes.NewReader(head)}
		if keepTo > keepFrom {
			rs = append(rs, io.NewSectionReader(old, keepFrom, keepTo-keepFrom))
		}
		rs = append(rs, io.NewSectionReader(u.body, 0, bodyLen))
		same, err := atomicfile.SameReader(io.NewSectionReader(old, 0, size), io.MultiReader(rs...))
		if err != nil {
			return false, err
		}
		if same {
			return false, nil
		}
	}
	p, err := u.batch.CreateIn(u.folder, u.spec.md, FileMode) // in its folder: see removeTemps
	if err != nil {
		return false, err
	}
	if _, err := p.Write(head); err != nil {
		return false, err
	}
	if old != nil {
		if err := atomicfile.CopyRange(p, old, keepFrom, keepTo-keepFrom); err != nil {
			return false, err
		}
	}
	if err := atomicfile.CopyRange(p, u.body, 0, bodyLen); err != nil {
		return false, err
	}
	return true, p.Close()
}

// writeRound writes a round file. A closed round's file is final: it is
// written once and never changes. Only the file of the round that was open
// may be replaced.
func (u *update) writeRound(r *session.Round) error {
	dir := roundsDir(u.folder)
	fresh, err := u.freshRounds()
	if err != nil {
		return err
	}
	rf := roundHeader(r)
	u.rounds.add(&rf)
	p := filepath.Join(dir, roundName(r.N))
	var f *atomicfile.Pending
	if fresh != nil {
		f, err = fresh.Create(roundName(r.N), FileMode)
	} else {
		f, err = u.batch.CreateIn(u.folder, p, FileMode) // in its document's folder: see removeTemps
	}
	if err != nil {
		return err
	}
	if !r.Open {
		f.Uncache() // final, and seldom read soon: see Pending.Uncache
	}
	sw := newSumWriter(f)
	if err := writeRoundTo(sw, rf, r, u.src); err != nil {
		return err
	}
	sum := sw.sum(r.N)
	if err := u.recordSum(sum, r.Open); err != nil {
		return err
	}
	// In a new rounds folder (fresh) nothing can be at p yet.
	if fresh == nil && exists(p) {
		same, err := f.Same()
		if err != nil {
			return err
		}
		if same {
			u.batch.Drop(f)
			return nil
		}
		if old, err := readRoundUpTo(osfile.Open, p, "user"); err == nil && !old.Open {
			u.batch.Drop(f)
			return &document.FormatError{File: p, Msg: "this closed round differs from what the source now gives: the store and the source disagree; nothing was overwritten"}
		}
	}
	u.wrote = true
	if err := f.Close(); err != nil {
		return err
	}
	if r.Open {
		return nil
	}
	return u.commitRounds(sum.Size)
}

// freshRounds returns the rounds folder this update writes whole (a new
// folder of the batch), when the document has none yet: a first
// inscription's round files are written at their final names in a
// temporary folder in the document's (.rounds.tmp-*), which the batch's
// commit renames to rounds/ once they are durable; a kill before leaves
// that folder alone, which the next update of the document removes
// (removeTemps), as it removes the temporary files of the others. It
// returns nil once the rounds folder is in place (a commit of the first
// rounds of a long session, commitRounds, put it there), or when it was
// there already: each file then goes in place alone, beside those there.
func (u *update) freshRounds() (*atomicfile.NewDir, error) {
	if d := u.roundsDir; d != nil {
		if !d.InPlace() {
			return d, nil
		}
		// Put in place by a commit of the first rounds of a long session
		// (commitRounds): the next rounds' files go there one by one.
		u.roundsDir, u.roundsThere = nil, true
	}
	if u.roundsThere {
		return nil, nil
	}
	dir := roundsDir(u.folder)
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		u.roundsThere = true
		return nil, u.batch.MkdirAll(dir, DirMode)
	}
	d, err := u.batch.NewDir(u.folder, dir, DirMode)
	if err != nil {
		return nil, err
	}
	u.roundsDir = d
	return d, nil
}

// roundsPerCommit and bytesPerCommit bound the closed round files an
// update holds uncommitted in its batch: once it holds as many, or their
// bytes reach as much, they are committed (made durable and put in place)
// before the update goes on. A batch keeps a record of each file until it
// commits, about 600 bytes with the header and sum the update kept, which
// made the memory of an inscription of a session of a million tiny lines
// grow with it (bench/README.md, issue 33); its page cache is freed of
// them sooner too. The store is valid at every moment meanwhile: a closed
// round's file past what the read note records is one an update stopped
// before its note wrote, which the next update writes again, the same
// bytes (docs/FORMAT.md, section 9, Write order).
var (
	roundsPerCommit       = 4096
	bytesPerCommit  int64 = 64 << 20
)

// TestOnlyRoundsPerCommit, when positive, replaces roundsPerCommit: a
// test's kill then falls between commits of a small session's rounds.
var TestOnlyRoundsPerCommit int

// commitRounds commits the batch once the closed round files it holds
// reach roundsPerCommit or bytesPerCommit (size is the last one's). Until
// the rounds close, the batch holds nothing else to put in place (the
// document, the note and the files the rounds show come after them).
func (u *update) commitRounds(size int64) error {
	u.pendingBytes += size
	most := roundsPerCommit
	if TestOnlyRoundsPerCommit > 0 {
		most = TestOnlyRoundsPerCommit
	}
	if u.batch.Len() < most && u.pendingBytes < bytesPerCommit {
		return nil
	}
	u.pendingBytes = 0
	// The record holds the sums of the rounds before their files are put
	// in place, as at the end of the update (section 9, step 7).
	if err := u.flushSums(); err != nil {
		return err
	}
	return u.batch.Commit()
}

// collectFiles gathers the images and documents a round shows.
func (u *update) collectFiles(r *session.Round) {
	add := func(f *session.File) {
		if f != nil && f.Data != nil {
			if u.files == nil {
				u.files = make(map[string][]byte)
			}
			u.files[f.Path] = f.Data
		}
	}
	for _, it := range r.Items {
		for _, b := range it.Blocks {
			add(b.File)
			if b.Result != nil {
				for _, p := range b.Result.Parts {
					add(p.File)
				}
			}
		}
	}
}

// writeFiles writes collected files (named by their content, so an existing
// one is already right) and copies the files the client kept beside the
// transcript.
func (u *update) writeFiles() error {
	dir := filepath.Dir(u.spec.md)
	for rel, data := range u.files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if !strings.HasPrefix(p, u.folder+string(filepath.Separator)) {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := atomicfile.MkdirAll(filepath.Dir(p), DirMode); err != nil {
			return err
		}
		if _, err := u.batch.WriteIfChanged(p, data, FileMode); err != nil {
			return err
		}
		u.wrote = true
	}
	u.files = nil
	for _, c := range u.spec.files {
		copyFile := copyIfChanged
		if red := u.store.Redact; red != nil {
			copyFile = func(b *atomicfile.Batch, from, to string) (bool, error) { return copyRedacted(b, red, from, to) }
		}
		changed, err := copyFile(&u.batch, c.from, c.target(u.store.Redact))
		if err != nil {
			u.res.Warnings = append(u.res.Warnings, fmt.Errorf("%s: not kept: %w", c.from, err))
			continue
		}
		u.wrote = u.wrote || changed
	}
	return nil
}

// copyIfChanged copies a file unless the target already holds its bytes.
func copyIfChanged(b *atomicfile.Batch, from, to string) (bool, error) {
	src, err := os.Open(from)
	if err != nil {
		return false, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return false, err
	}
	if dst, err := os.Open(to); err == nil {
		dfi, _ := dst.Stat()
		same := false
		if dfi != nil && dfi.Size() == fi.Size() {
			same, _ = atomicfile.SameReader(dst, io.NewSectionReader(src, 0, fi.Size()))
		}
		dst.Close()
		if same {
			return false, nil
		}
	}
	if err := atomicfile.MkdirAll(filepath.Dir(to), DirMode); err != nil {
		return false, err
	}
	p, err := b.Create(to, FileMode)
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(p, io.NewSectionReader(src, 0, fi.Size())); err != nil {
		return true, err
	}
	return true, p.Close()
}

// relist rewrites a document's head so that it lists sidechains. A head
// that lists them already is left as it is: an append of a session with
// subagents asks at every run, and most find nothing to add.
func (s *Store) relist(md string, add []session.Sidechain, wait time.Duration) error {
	unlock, err := lockDoc(folderOf(md), wait)
	if err != nil {
		return err
	}
	defer unlock()
	od, err := readOldDoc(md)
	if err != nil {
		return err
	}
	m := *od.meta
	m.Sidechains = mergeSidechains(m.Sidechains, add)
	if m.SidechainOf == nil && m.ContinuationOf == nil {
		m.Continuations = listContinuations(folderOf(md))
	}
	if slices.Equal(m.Sidechains, od.meta.Sidechains) && slices.Equal(m.Continuations, od.meta.Continuations) {
		return nil
	}
	_, err = rewriteHead(od, &m)
	return err
}

// RewriteHead rewrites a document's frontmatter with edit applied, keeping
// its summary and body byte for byte. It reports whether the document
// changed. The caller holds the document's lock.
func (s *Store) RewriteHead(md string, edit func(*session.Meta)) (bool, error) {
	od, err := readOldDoc(md)
	if err != nil {
		return false, err
	}
	m := *od.meta
	edit(&m)
	return rewriteHead(od, &m)
}

// rewriteHead is RewriteHead of the document od with the head m.
func rewriteHead(od *oldDoc, m *session.Meta) (bool, error) {
	md := od.path
	head := document.RenderHead(m, od.summary)
	f, err := os.Open(md)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := readState(folderOf(md))
	if err != nil {
		st = nil
	}
	noteCurrent := st == nil || st.DocFormat == m.Format
	if int64(len(head)) == od.bodyAt && noteCurrent {
		if same, _ := atomicfile.SameReader(io.NewSectionReader(f, 0, od.bodyAt), bytes.NewReader(head)); same {
			return false, nil
		}
	}
	if err := checkBeforeNote(md, st); err != nil {
		return false, err
	}
	var b atomicfile.Batch
	defer b.Abort()
	p, err := b.CreateIn(folderOf(md), md, FileMode) // in its folder: see removeTemps
	if err != nil {
		return false, err
	}
	if _, err := p.Write(head); err != nil {
		return false, err
	}
	if err := atomicfile.CopyRange(p, f, od.bodyAt, od.size-od.bodyAt); err != nil {
		return false, err
	}
	// The document moved: so does the open round in the read note.
	if st != nil {
		// Both versions of a note written mid-commit: either may be the
		// one that holds (resolveState).
		for n := st; n != nil; n = n.Next {
			n.DocOpenAt += int64(len(head)) - od.bodyAt
			n.DocFormat = m.Format
		}
		if err := writeState(&b, folderOf(md), st); err != nil {
			return false, err
		}
	}
	return true, b.Commit()
}

// checkBeforeNote checks the round files of a document whose note st is
// about to be written again, as any update that writes does (see
// checkSums), so that the new note does not hide damage from the next
// inscribe's check. A damaged record is left to the next update, which
// makes it again.
func checkBeforeNote(md string, st *docState) error {
	if st == nil || st.RoundsSize == nil {
		return nil
	}
	if err := checkSums(folderOf(md), DocSession(md), st, changedOnes, nil); err != nil && !errors.Is(err, errRecord) {
		return err
	}
	return nil
}
