package inscribe

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A session lives in more than one file. Its source is the file the client
// keeps; an export is another (scribe writes the source back, or converts
// the session into another client's format), and so is a copy of the
// source on another machine. When a client resumes such a file and the
// session goes on, the new turns belong to the session: they are a
// continuation, a document of its own in the session's folder
// (cont-<key>.md, its files in cont-<key>/, as a sidechain's), inscribed from
// that file as any session is, whose head says what it continues
// (continuation_of). The session's document lists its continuations
// (continuations) when it is next written.
//
// Which file feeds which document (Store.Update, continues):
//   - a file whose continuation has a document already feeds it;
//   - a file of another source format than the session's is a conversion
//     a client resumed: a continuation;
//   - the session's own source on this machine (its read note's) feeds the
//     session's document, as always;
//   - an export this machine wrote (exports.tsv in .scribe/) is a
//     continuation, never the session's source, so that the session's
//     document has one writer and two machines that go on from one export
//     each write a document of their own: a git merge of the two never
//     conflicts;
//   - another copy of the source that holds nothing the session lacks is
//     nothing new; one that holds more is a continuation.
//
// A continuation's key is the machine's id (.scribe/machine, made once)
// and the file's path, hashed: the same file on the same machine is always
// the same continuation, and no two machines share one.

// contBase is the base name of continuation key's document and folder.
func contBase(key string) string { return "cont-" + key }

// contGlob matches the continuations' documents in a session's folder.
const contGlob = "cont-*.md"

// isContBase reports whether a document's base name is a continuation's.
func isContBase(base string) bool { return strings.HasPrefix(base, "cont-") }

// exportsFile records the exports this machine wrote, in .scribe/.
const exportsFile = "exports.tsv"

// machineFile holds this machine's id, in .scribe/.
const machineFile = "machine"

// machineID returns this machine's id for the store, made once.
func (s *Store) machineID() string { return s.readMachineID(true) }

// readMachineID returns this machine's id, made (when create is set) if the
// store has none yet, or "" without one.
func (s *Store) readMachineID(create bool) string {
	s.machineMu.Lock()
	defer s.machineMu.Unlock()
	p := filepath.Join(s.localRoot(), machineFile)
	read := func() bool {
		if s.machine == "" {
			if b, err := os.ReadFile(p); err == nil {
				s.machine = string(bytes.TrimSpace(b))
			}
		}
		return s.machine != ""
	}
	if read() || !create {
		return s.machine
	}
	id := make([]byte, 16)
	rand.Read(id)
	if err := atomicfile.MkdirAll(s.localRoot(), DirMode); err == nil {
		// Made once: of two processes making it, one's id is the
		// machine's (a link fails where the file is).
		if f, err := os.CreateTemp(s.localRoot(), "."+machineFile+".tmp-*"); err == nil {
			_, err := f.WriteString(hex.EncodeToString(id) + "\n")
			if err = errors.Join(err, f.Sync(), f.Close()); err == nil {
				os.Link(f.Name(), p)
			}
			os.Remove(f.Name())
		}
	}
	if read() {
		return s.machine
	}
	return hex.EncodeToString(id) // a store this machine cannot write to
}

// contKey is the key of the continuation a file is, on this machine.
func (s *Store) contKey(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	h := sha256.Sum256([]byte(s.machineID() + "\x00" + filepath.ToSlash(abs)))
	return hex.EncodeToString(h[:6])
}

// RecordExport records that this machine wrote path as an export of the
// session, so that a client's resuming it continues the session instead of
// taking its place (exports.tsv in .scribe/). It does nothing for a
// session not in the store.
func (s *Store) RecordExport(session, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	if size, ok := s.exportedSize(abs); ok && size == fi.Size() {
		return nil
	}
	if err := atomicfile.MkdirAll(s.localRoot(), DirMode); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.localRoot(), exportsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, FileMode)
	if err != nil {
		return err
	}
	// The size the export was written with tells a client's going on
	// from it; a later export of the same path adds a line, the last of
	// which counts.
	_, err = fmt.Fprintf(f, "%s\t%s\t%d\n", filepath.ToSlash(abs), session, fi.Size())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Exported records that this machine wrote path as an export of the
// document's session (Store.RecordExport); a document outside a store
// records nothing.
func (d *Doc) Exported(path string) error {
	if d.store == nil {
		return nil
	}
	return d.store.RecordExport(d.id, path)
}

// exportedSize reports whether this machine wrote the file at path as an
// export, and its size as written (-1 when an older record does not say).
func (s *Store) exportedSize(path string) (size int64, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	f, err := os.Open(filepath.Join(s.localRoot(), exportsFile))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	want := filepath.ToSlash(abs) + "\t"
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, found := strings.CutPrefix(sc.Text(), want)
		if !found {
			continue
		}
		ok, size = true, -1
		if _, n, cut := strings.Cut(line, "\t"); cut {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				size = v
			}
		}
	}
	return size, ok
}

// goneOn reports whether a client went on with the session file src, a
// file of the session whose document's head is m that scribe wrote (an
// export) or that holds the session in another format (a conversion):
// whether it differs from the export as this machine wrote it, or, where
// no size was recorded, whether its conversation ends after the
// document's.
func (s *Store) goneOn(src source.Session, m *session.Meta) bool {
	if size, ok := s.exportedSize(src.Path); ok && size >= 0 {
		fi, err := os.Stat(src.Path)
		return err != nil || fi.Size() != size
	}
	return endsAfter(src, m)
}

// continues reports whether the session file src, of the session whose
// document is md (which exists), is a continuation of it rather than its
// source, and its key (see the comment at the top of this file). same
// reports a copy that holds nothing the session lacks.
func (s *Store) continues(src source.Session, md string) (key string, cont, same bool) {
	folder := folderOf(md)
	if k, ok := s.lastContinuation(folder, src.Path); ok {
		return k, true, false
	}
	// The session's own source on this machine, as every append of a live
	// session finds it: decided from the read note, before the head is
	// read (the update reads both again).
	st, _ := readState(folder)
	st = resolveState(st, md)
	if st != nil && st.Source != "" && samePath(s.ResolveSource(st.Source), src.Path) {
		return "", false, false
	}
	m, err := readMeta(md)
	if err != nil || m.SidechainOf != nil || m.ContinuationOf != nil {
		return "", false, false // the update says what is wrong with it
	}
	format := m.SourceFormat
	if format == "" {
		format = firstFormat
	}
	_, exported := s.exportedSize(src.Path)
	switch {
	case src.Adapter.Format() != format || exported:
		// A conversion, or an export: a continuation once a client went
		// on with it.
		if !s.goneOn(src, m) {
			return "", false, true
		}
	case st == nil || st.Source == "" || !exists(s.ResolveSource(st.Source)):
		return "", false, false // the source here (a clone; a source moved)
	case prefixOfRecord(src.Path, folder):
		// Another copy of the source: nothing new while the session's
		// record holds all of it.
		return "", false, true
	}
	return s.contKey(src.Path), true, false
}

// endsAfter reports whether the conversation of the session file src ends
// after the session's document m does: whether a client went on with an
// export of it. It reads the file through its adapter's builder. Either end
// unknown counts as after: a file of the session is then kept.
func endsAfter(src source.Session, m *session.Meta) bool {
	if m.Ended == nil {
		return true
	}
	mine, err := time.Parse(time.RFC3339Nano, *m.Ended)
	if err != nil {
		return true
	}
	f, err := os.Open(src.Path)
	if err != nil {
		return true
	}
	defer f.Close()
	b, err := src.Adapter.NewBuilder(source.Config{File: src.Path, RawInSource: true}, nil, nil)
	if err != nil {
		return true
	}
	lr := source.NewLineReader(f, 1, 0)
	for {
		l, err := lr.Next()
		if err != nil || l.Torn() {
			break
		}
		b.Add(l)
	}
	fin := b.Finish()
	if fin.Meta.Ended == nil {
		return true
	}
	theirs, err := time.Parse(time.RFC3339Nano, *fin.Meta.Ended)
	return err != nil || theirs.After(mine)
}

// samePath reports whether two paths name the same file.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// prefixOfRecord reports whether the file at path holds nothing but a
// prefix of what the round files of the document whose folder is given
// hold: the bytes they were inscribed from.
func prefixOfRecord(path, folder string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	left := fi.Size()
	r := bufio.NewReaderSize(f, 64<<10)
	ns, err := roundNumbers(roundsDir(folder))
	if err != nil {
		return false
	}
	for _, n := range ns {
		if left == 0 {
			break
		}
		rf, err := readRound(roundPath(folder, n))
		if err != nil {
			return false
		}
		var buf bytes.Buffer
		if err := writeEntries(&buf, rf); err != nil {
			return false
		}
		want := buf.Bytes()
		if int64(len(want)) > left {
			want = want[:left]
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, want) {
			return false
		}
		left -= int64(len(want))
	}
	return left == 0
}

// updateContinuation inscribes, or appends to, the continuation key of the
// session whose document is md, from the file src.
func (s *Store) updateContinuation(src source.Session, md, key, agent string, role *string, opts Options) Result {
	base := contBase(key)
	cmd := filepath.Join(folderOf(md), base+".md")
	rounds := 0
	if !exists(cmd) {
		// What the file repeats of the session: the session's rounds when
		// it was made, or the whole of it for a copy.
		if n, err := roundNumbers(roundsDir(folderOf(md))); err == nil && len(n) > 0 {
			rounds = n[len(n)-1]
		}
	} else if m, err := readMeta(cmd); err == nil && m.ContinuationOf != nil {
		rounds = m.ContinuationOf.Rounds
	}
	of := &session.ContinuationOf{SessionID: src.ID, Key: key, Client: src.Adapter.AgentName(), Rounds: rounds}
	spec := s.childSpec(src, folderOf(md), base, src.Path, agent, role, func(m *session.Meta) { m.ContinuationOf = of })
	return s.updateDoc(spec, opts)
}

// childSpec is the spec of a document filed in the folder of its
// session's beside the session's own (a sidechain, a continuation), named
// base and fed by the file at path; set says what it is of.
func (s *Store) childSpec(src source.Session, folder, base, path, agent string, role *string, set func(*session.Meta)) docSpec {
	return docSpec{
		md:      filepath.Join(folder, base+".md"),
		key:     src.ID + "/" + base,
		source:  path,
		id:      src.ID,
		adapter: src.Adapter,
		cfg:     builderConfig(path, base),
		fixed: func(m *session.Meta) {
			m.SessionID = src.ID
			m.AgentID = agent
			m.Role = role
			m.Source = s.recordedSource(path)
			set(m)
		},
	}
}

// rewritten is the update of doc, the document of the session whose
// document is md or one of its continuations, from its source src, which
// no longer holds what was inscribed from it (se says how): nothing is
// lost, nothing fails. A source that holds nothing the record lacks (it
// was cut short) is nothing new; another one goes on as a continuation of
// the session, a new one each time its file is rewritten again.
func (s *Store) rewritten(src source.Session, md, doc, agent string, role *string, opts Options, se *SourceError) Result {
	why := fmt.Errorf("%s: %s", se.Source, se.Why)
	if prefixOfRecord(src.Path, folderOf(doc)) {
		return Result{Source: src.Path, Doc: doc, Outcome: Unchanged,
			Warnings: []error{fmt.Errorf("%v: it holds nothing the store lacks, and %s keeps what was inscribed", why, doc)}}
	}
	key := s.contKey(src.Path)
	for gen := 2; exists(filepath.Join(folderOf(md), contBase(key)+".md")); gen++ {
		key = s.contKey(src.Path + "\x00" + strconv.Itoa(gen)) // rewritten again
	}
	r := s.updateContinuation(src, md, key, agent, role, opts)
	r.Warnings = append(r.Warnings, fmt.Errorf("%v: what was inscribed stays in %s, and the file as it is now goes on as a continuation of the session, %s", why, doc, r.Doc))
	return r
}

// lastContinuation returns the key of the newest continuation of the file
// at path that has a document in the session's folder: its first, or the
// one a rewrite of the file made last.
func (s *Store) lastContinuation(folder, path string) (string, bool) {
	if s.readMachineID(false) == "" {
		return "", false // this machine made none
	}
	key, found := s.contKey(path), ""
	for gen := 2; exists(filepath.Join(folder, contBase(key)+".md")); gen++ {
		found, key = key, s.contKey(path+"\x00"+strconv.Itoa(gen))
	}
	return found, found != ""
}

// unlistedContinuations reports whether the session's folder holds a
// continuation its document does not list.
func unlistedContinuations(md, folder string) bool {
	conts := listContinuations(folder)
	if len(conts) == 0 {
		return false
	}
	m, err := readMeta(md)
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, c := range m.Continuations {
		have[c.Key] = true
	}
	for _, c := range conts {
		if !have[c.Key] {
			return true
		}
	}
	return false
}

// listContinuations returns the continuations filed in a session's folder,
// as its document lists them, in order of their keys.
func listContinuations(folder string) []session.Continuation {
	docs, _ := filepath.Glob(filepath.Join(folder, contGlob))
	var out []session.Continuation
	for _, p := range docs {
		m, err := readMeta(p)
		if err != nil || m.ContinuationOf == nil {
			continue
		}
		c := session.Continuation{Key: m.ContinuationOf.Key, Path: filepath.Base(folder) + "/" + filepath.Base(p), Client: m.ContinuationOf.Client}
		if m.Ended != nil {
			c.Started = *m.Ended
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Continuations returns the documents of the session's continuations,
// filed in its folder, in order of their names (none for a sidechain's or
// a continuation's document).
func (d *Doc) Continuations() ([]*Doc, error) {
	if d.sub != "" || d.cont != "" {
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(d.folder(), contGlob))
	if err != nil {
		return nil, err
	}
	out := make([]*Doc, len(paths))
	for i, p := range paths {
		out[i] = d.store.docAt(p)
	}
	return out, nil
}

// IsContinuation reports whether the document is a continuation's.
func (d *Doc) IsContinuation() bool { return d.cont != "" }

// Latest returns the document of the session's conversation that went on
// last: the session's own, or the continuation whose last message is the
// latest (an export of the session gives a client that one, the whole
// conversation as it went on).
func (d *Doc) Latest() *Doc {
	best, at := d, ended(d)
	conts, _ := d.Continuations()
	for _, c := range conts {
		if t := ended(c); t.After(at) {
			best, at = c, t
		}
	}
	return best
}

// ended is when a document's last message was, the zero time when unknown.
func ended(d *Doc) time.Time {
	m, err := d.Meta()
	if err != nil || m.Ended == nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, *m.Ended)
	return t
}
