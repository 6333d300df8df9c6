package inscribe

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
)

// This file is what the store gives the views derived from it (package
// inscribe/views): where their databases lie, and the files they write
// (the catalogs, each document's table of rounds, the engagement tags),
// which the store writes for them. The views decide what these hold; the
// store decides where they are and how they are written.

// IndexPath is where the store's index database lies (sessions.db). It is
// derived and kept per machine: a clone of the store does not carry it.
func (s *Store) IndexPath() string {
	return moveDB(filepath.Join(s.SessionsDir(), storeDB), filepath.Join(s.localRoot(), storeDB))
}

// IndexPath is where the document's own index database lies (session.db).
func (d *Doc) IndexPath() string {
	return moveDB(filepath.Join(d.folder(), sessionDB), filepath.Join(localOf(d.folder()), sessionDB))
}

// moveDB returns to, where a database lies now, having moved it there from
// from, where stores before 0.3 kept it, when it is there and not at to: a
// database is a file and its write-ahead log (its -shm is rebuilt).
func moveDB(from, to string) string {
	if from == to {
		return to
	}
	if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(from); err == nil && os.MkdirAll(filepath.Dir(to), DirMode) == nil {
			if os.Rename(from, to) == nil {
				os.Rename(from+"-wal", to+"-wal")
				os.Remove(from + "-shm")
			}
		}
	}
	return to
}

// Rel is the document's path relative to the store's sessions folder,
// with slashes: how the indexes name it.
func (d *Doc) Rel() string {
	if d.store == nil {
		return filepath.ToSlash(d.path)
	}
	rel, err := filepath.Rel(d.store.SessionsDir(), d.path)
	if err != nil {
		return filepath.ToSlash(d.path)
	}
	return filepath.ToSlash(rel)
}

// RoundRel is round n's file relative to the store's sessions folder, with
// slashes: how the indexes name it.
func (d *Doc) RoundRel(n int) string {
	rel := filepath.ToSlash(filepath.Join(strings.TrimSuffix(d.Rel(), ".md"), "rounds", roundName(n)))
	return rel
}

// DocAt returns the document a Rel names (as the indexes name it).
func (s *Store) DocAt(rel string) (*Doc, error) {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) || !strings.HasSuffix(p, ".md") {
		return nil, fmt.Errorf("%q names no document of the store", rel)
	}
	return s.docAt(filepath.Join(s.SessionsDir(), p)), nil
}

// PathOf is where a document the indexes name by rel lies, to show a
// person.
func (s *Store) PathOf(rel string) string {
	return filepath.Join(s.SessionsDir(), filepath.FromSlash(rel))
}

// Seen is how far the document's source was read, by its read note: -1
// when it has none.
func (d *Doc) Seen() (int64, error) {
	st, err := readState(d.folder())
	if err != nil || st == nil {
		return -1, err
	}
	return st.Seen, nil
}

// The catalogs: sessions/index.md lists the agents, and each agent's
// index.md its sessions.

// LockCatalogs takes the lock of the catalogs, waiting at most wait.
func (s *Store) LockCatalogs(wait time.Duration) (unlock func(), err error) {
	if err := s.ensureGitFiles(); err != nil {
		return nil, err
	}
	// The catalogs are written in the sessions folder, an empty store's
	// too.
	if err := atomicfile.MkdirAll(s.SessionsDir(), DirMode); err != nil {
		return nil, err
	}
	return lockWait(filepath.Join(s.localRoot(), catalogLock), s.SessionsDir(), wait)
}

// catalogPath is the catalog of an agent ("" for the store's).
func (s *Store) catalogPath(agent string) string {
	if agent == "" {
		return filepath.Join(s.SessionsDir(), catalogFile)
	}
	return filepath.Join(s.SessionsDir(), agent, catalogFile)
}

// CatalogName is the catalog of an agent ("" for the store's), to name in
// a message.
func (s *Store) CatalogName(agent string) string { return s.catalogPath(agent) }

// Catalog reads the catalog of an agent ("" for the store's).
func (s *Store) Catalog(agent string) ([]byte, error) { return os.ReadFile(s.catalogPath(agent)) }

// WriteCatalog writes the catalog of an agent ("" for the store's), if it
// does not hold data already. It says whether the catalog it replaced held
// a git merge's conflict markers (a store merged before it had its
// .gitattributes, or a person's merge), which a rewrite mends.
//
// The new version is written in the store's own folder (.scribe), where
// the catalogs' lock is, and renamed into place: a writer killed before
// the rename leaves its temporary file there, which the next one removes
// (RemoveStaleTemps) without listing the agent's folder of ten thousand
// documents.
func (s *Store) WriteCatalog(agent string, data []byte) (mendedConflict bool, err error) {
	p := s.catalogPath(agent)
	var was time.Time // the old version's time, which the new one's follows
	if f, err := osfile.Open(p); err == nil {
		fi, err := f.Stat()
		var old []byte
		if err == nil {
			was = fi.ModTime()
			old, err = osfile.ReadAll(f, fi.Size())
		}
		f.Close()
		if err == nil {
			if string(old) == string(data) {
				return false, nil
			}
			mendedConflict = conflictLine(old) > 0
		}
	}
	if err := atomicfile.MkdirAll(s.localRoot(), DirMode); err != nil {
		return false, err
	}
	err = writeVia(s.localRoot(), p, func(dir string) error { return writeIn(dir, p, was, data) })
	return mendedConflict && err == nil, err
}

// writeVia has write put p's new version in place through a temporary
// file in dir (the store's own folder, whose lock the writer holds), or in
// p's own folder when p is on another file system.
func writeVia(dir, p string, write func(dir string) error) error {
	err := write(dir)
	var le *os.LinkError
	if errors.As(err, &le) && errors.Is(le.Err, syscall.EXDEV) {
		err = write(filepath.Dir(p))
	}
	return err
}

// A Splice replaces the bytes [At, End) of a file with With.
type Splice struct {
	At, End int64
	With    []byte
}

// A FileStamp is a file's version as read or written: its size and
// modification time (ns). The store writes each version of a catalog
// with a later time than the one it replaces, so that two versions of one
// size written within a tick of a coarse clock have two stamps.
type FileStamp struct {
	Size, Mtime int64
}

// ErrMoved says a file was not the version its caller read: another hand
// wrote it since.
var ErrMoved = errors.New("changed since it was read")

// CatalogLines is one version of an agent's catalog, or of its kept
// rows, open to read its lines by place (osfile.Lines): an append finds
// the rows it replaces among ten thousand by a search, reading a few
// dozen lines, not the others. Stamp is the version's, which
// SpliceCatalog checks.
type CatalogLines struct {
	*osfile.Lines
	Stamp FileStamp
}

// OpenCatalog opens the catalog of an agent ("" for the store's) to read
// its lines by place.
func (s *Store) OpenCatalog(agent string) (*CatalogLines, error) {
	return openCatalogLines(s.catalogPath(agent))
}

func openCatalogLines(p string) (*CatalogLines, error) {
	l, fi, err := osfile.OpenLines(p)
	if err != nil {
		return nil, err
	}
	return &CatalogLines{l, FileStamp{fi.Size(), fi.ModTime().UnixNano()}}, nil
}

// SpliceCatalog writes the catalog of an agent again with edits made
// (they do not overlap), unless it is no longer the version was (ErrMoved):
// the bytes around them are copied from the old version by the kernel
// where it can, without passing through memory, so that replacing a row
// of ten thousand costs what the row does. It returns the new version's
// stamp. The caller read the catalog it patches and knows it is the one it
// kept (a catalog merged by git, with conflict markers, is written whole
// by WriteCatalog).
func (s *Store) SpliceCatalog(agent string, was FileStamp, edits []Splice) (FileStamp, error) {
	return spliceFile(s.localRoot(), s.catalogPath(agent), was, edits)
}

// spliceFile is SpliceCatalog of the file p, its new version written
// through a temporary file in dir (or beside p when dir is on another file
// system).
func spliceFile(dir, p string, was FileStamp, edits []Splice) (FileStamp, error) {
	edits = slices.Clone(edits)
	slices.SortFunc(edits, func(x, y Splice) int { return cmp.Or(cmp.Compare(x.At, y.At), cmp.Compare(x.End, y.End)) })
	from := int64(0)
	for _, e := range edits {
		if e.At < from || e.End < e.At || e.End > was.Size {
			return FileStamp{}, fmt.Errorf("splice %s: bytes %d-%d do not follow %d in %d", p, e.At, e.End, from, was.Size)
		}
		from = e.End
	}
	err := writeVia(dir, p, func(dir string) error { return spliceIn(dir, p, was, edits) })
	if err != nil {
		return FileStamp{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return FileStamp{}, err
	}
	return FileStamp{fi.Size(), fi.ModTime().UnixNano()}, nil
}

// spliceIn writes the new version of spliceFile through a temporary file
// in dir. The old version is closed before the new one takes its name
// (Windows refuses to rename over a file open without FILE_SHARE_DELETE).
func spliceIn(dir, p string, was FileStamp, edits []Splice) error {
	old, err := osfile.Open(p)
	if err != nil {
		return err
	}
	defer old.Close()
	fi, err := old.Stat()
	if err != nil {
		return err
	}
	if (FileStamp{fi.Size(), fi.ModTime().UnixNano()}) != was {
		return &fs.PathError{Op: "splice", Path: p, Err: ErrMoved}
	}
	f, err := atomicfile.CreateIn(dir, p)
	if err != nil {
		return err
	}
	from := int64(0)
	for _, e := range edits {
		if err = atomicfile.CopyRange(f, old, from, e.At-from); err != nil {
			break
		}
		if _, err = f.Write(e.With); err != nil {
			break
		}
		from = e.End
	}
	if err == nil {
		err = atomicfile.CopyRange(f, old, from, was.Size-from)
	}
	if err == nil {
		err = f.After(fi.ModTime())
	}
	if cerr := old.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit(FileMode)
}

// CatalogHead reads the first line of the catalog of an agent ("" for
// the store's), without its line end: the summary the store's catalog
// shows, read without the rows below it.
func (s *Store) CatalogHead(agent string) ([]byte, error) {
	f, err := osfile.Open(s.catalogPath(agent))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), nil
}

// writeIn writes data (its pieces one after another) to p atomically,
// through a temporary file in dir, its modification time after was (the
// version it replaces).
func writeIn(dir, p string, was time.Time, data ...[]byte) error {
	f, err := atomicfile.CreateIn(dir, p)
	if err != nil {
		return err
	}
	for _, b := range data {
		if _, err := f.Write(b); err != nil {
			f.Abort()
			return err
		}
	}
	if err := f.After(was); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(FileMode)
}

// CatalogLink is how a catalog links to a document (rel as the agent's
// catalog sees it), and TopLink how the store's catalog links to an
// agent's catalog.
func CatalogLink(id string) string { return id + ".md" }

// TopLink is how the store's catalog links to an agent's catalog.
func TopLink(agent string) string { return agent + "/" + catalogFile }

// UpLink is how an agent's catalog links to the store's.
const UpLink = "../" + catalogFile

// CatalogStamps reads when each agent's catalog was last written (the
// newest modification time of the documents it reflects, in nanoseconds).
// It is per-machine bookkeeping.
func (s *Store) CatalogStamps() map[string]int64 {
	stamps := map[string]int64{}
	if b, err := os.ReadFile(s.stampPath()); err == nil {
		json.Unmarshal(b, &stamps)
	}
	return stamps
}

// SetCatalogStamps records CatalogStamps.
func (s *Store) SetCatalogStamps(stamps map[string]int64) error {
	b, err := json.Marshal(stamps)
	if err != nil {
		return err
	}
	p := s.stampPath()
	if err := atomicfile.MkdirAll(filepath.Dir(p), DirMode); err != nil {
		return err
	}
	_, err = atomicfile.WriteIfChanged(p, b, FileMode)
	return err
}

// CatalogRows reads what the views kept of an agent's catalog when they
// last wrote it (nil when nothing was kept): per-machine bookkeeping, so
// that a catalog is written again without reading every document's head.
func (s *Store) CatalogRows(agent string) []byte {
	b, err := os.ReadFile(s.catalogRowsPath(agent))
	if err != nil {
		return nil
	}
	return b
}

// OpenCatalogRows is OpenCatalog of what CatalogRows reads.
func (s *Store) OpenCatalogRows(agent string) (*CatalogLines, error) {
	return openCatalogLines(s.catalogRowsPath(agent))
}

// SetCatalogRows keeps what CatalogRows reads: data's pieces, one after
// another.
func (s *Store) SetCatalogRows(agent string, data ...[]byte) error {
	p := s.catalogRowsPath(agent)
	if err := atomicfile.MkdirAll(s.localRoot(), DirMode); err != nil {
		return err
	}
	_, err := atomicfile.WritePiecesIfChanged(p, FileMode, data...)
	return err
}

// SpliceCatalogRows is SpliceCatalog of what CatalogRows reads.
func (s *Store) SpliceCatalogRows(agent string, was FileStamp, edits []Splice) error {
	_, err := spliceFile(s.localRoot(), s.catalogRowsPath(agent), was, edits)
	return err
}

// catalogRowsPath is where CatalogRows are kept.
func (s *Store) catalogRowsPath(agent string) string {
	return filepath.Join(s.localRoot(), catalogRowsPrefix+agent+".tsv")
}

// stampPath is the catalogs' stamps, moved from where stores before 0.3
// kept them.
func (s *Store) stampPath() string {
	to := filepath.Join(s.localRoot(), stampFile)
	if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
		legacy := filepath.Join(s.SessionsDir(), legacyStamp)
		if _, err := os.Lstat(legacy); err == nil && os.MkdirAll(filepath.Dir(to), DirMode) == nil {
			os.Rename(legacy, to)
		}
	}
	return to
}

// InAgentFolder reports whether the document is one of an agent's session
// documents (listed in its catalog), not a sidechain.
func (d *Doc) InAgentFolder() bool { return d.sub == "" && d.agent != "" }

// A FolderStamp describes an agent's folder, where every document is added
// or removed (a sidechain's document, in its session's folder, comes with
// its parent's rewritten): the views record them, to tell cheaply that no
// document was added or removed since.
type FolderStamp struct {
	dir      string
	Modified time.Time
	names    uint64 // the sum of the hashes of its names, but hidden ones (temporary files, locks); 0: not read
}

// String is how a stamp is recorded: the agent, the modification time and
// the hash of its names.
func (f FolderStamp) String() string {
	return fmt.Sprintf("%s %d %x", filepath.Base(f.dir), f.Modified.UnixNano(), f.names)
}

// Agent is the agent whose folder the stamp describes.
func (f FolderStamp) Agent() string { return filepath.Base(f.dir) }

// NamesRead reports whether ReadNames ran (or the names were taken from a
// record, SetNames).
func (f FolderStamp) NamesRead() bool { return f.names != 0 }

// Names is the hash of the folder's names (0: not read).
func (f FolderStamp) Names() uint64 { return f.names }

// SetNames takes the names' hash from a record.
func (f *FolderStamp) SetNames(h uint64) { f.names = h }

// ReadNames reads the names of the folder.
func (f *FolderStamp) ReadNames() error {
	d, err := osfile.Open(f.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	f.names = 1 // read
	for _, n := range names {
		if !strings.HasPrefix(n, ".") {
			h := fnv.New64a()
			h.Write([]byte(n))
			f.names += h.Sum64()
		}
	}
	return nil
}

// FolderStamps returns the stamps of the agents' folders, their names not
// read.
func (s *Store) FolderStamps() ([]FolderStamp, error) {
	agents, err := s.Agents()
	if err != nil {
		return nil, err
	}
	var out []FolderStamp
	for _, a := range agents {
		dir := filepath.Join(s.SessionsDir(), a)
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, FolderStamp{dir: dir, Modified: fi.ModTime()})
	}
	return out, nil
}

// The table of rounds (Method 53's index.md in a document's folder).

func (d *Doc) roundsTable() string { return filepath.Join(d.folder(), roundsIndex) }

// RoundsTableLink is how a document's table of rounds links to the
// document.
func (d *Doc) RoundsTableLink() string { return "../" + filepath.Base(d.path) }

// WriteRoundsTable writes the document's table of rounds, if it does not
// hold data already.
func (d *Doc) WriteRoundsTable(data []byte) error {
	_, err := atomicfile.WriteIfChanged(d.roundsTable(), data, FileMode)
	return err
}

// WriteRoundsTableFrom writes the document's table of rounds, as write
// writes it to a file beside it, unless it holds those bytes already: a
// table too long to hold in memory (a session of many rounds).
func (d *Doc) WriteRoundsTableFrom(write func(io.Writer) error) error {
	p, err := atomicfile.Create(d.roundsTable())
	if err != nil {
		return err
	}
	defer p.Abort()
	w := bufio.NewWriterSize(p, 64<<10)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if same, err := p.Same(); err != nil || same {
		return err
	}
	return p.Commit(FileMode)
}

// RoundsTableName is the document's table of rounds, to name in a message.
func (d *Doc) RoundsTableName() string { return d.roundsTable() }

// ReadRoundsTable reads the document's table of rounds.
func (d *Doc) ReadRoundsTable() ([]byte, error) { return os.ReadFile(d.roundsTable()) }

// SpliceRoundsTable replaces the rows of the document's table of rounds
// from the row that starts with rowStart on, and its head (which ends with
// the line rule). It reads the file's first lines and its end back to that
// row; the rows in between are copied by the kernel. It reports false,
// having written nothing, when there is no table that has that row.
func (d *Doc) SpliceRoundsTable(head []byte, rule string, rowStart, rows []byte) (bool, error) {
	path := d.roundsTable()
	f, err := osfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	size := fi.Size()
	first := make([]byte, min(size, 64<<10))
	if _, err := f.ReadAt(first, 0); err != nil {
		return false, err
	}
	i := bytes.Index(first, []byte("\n"+rule))
	if i < 0 {
		return false, nil
	}
	tableAt := int64(i + 1 + len(rule))
	// Find the row, reading back from the end in growing windows.
	rowAt := int64(-1)
	needle := append([]byte("\n"), rowStart...)
	for window := int64(16 << 10); rowAt < 0; window *= 4 {
		start := max(tableAt-1, size-window)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return false, err
		}
		if j := bytes.LastIndex(buf, needle); j >= 0 {
			rowAt = start + int64(j) + 1
			if !bytes.Equal(buf[j+1:], rows) || !bytes.Equal(first[:tableAt], head) {
				break
			}
			return true, nil // already says this
		}
		if start == tableAt-1 {
			return false, nil
		}
	}
	return true, atomicfile.Write(path, FileMode, func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		if err := atomicfile.CopyRange(w, f, tableAt, rowAt-tableAt); err != nil {
			return err
		}
		_, err := w.Write(rows)
		return err
	})
}

// Engagement tags: the durable record of scribe tag, one round a line.

func (d *Doc) tagsPath() string { return filepath.Join(d.folder(), tagsFile) }

// Tags reads the document's engagement tags: round -> engagement. A line
// that does not read is damage (only scribe writes the file): a
// *DamageError.
func (d *Doc) Tags() (map[int]string, error) {
	tags := map[int]string{}
	f, err := osfile.Open(d.tagsPath())
	if errors.Is(err, os.ErrNotExist) {
		return tags, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f) // a short file of short lines, written by scribe
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		round, eng, ok := strings.Cut(line, "\t")
		r, err := strconv.Atoi(round)
		if !ok || err != nil || r < 1 || eng == "" {
			return nil, &DamageError{Session: d.id, File: d.tagsPath(),
				Why: fmt.Sprintf("line %d: expected \"<round>\\t<engagement>\"", n)}
		}
		tags[r] = eng
	}
	return tags, sc.Err()
}

// TagsLeniently reads what can be read of the document's tags file (a
// damaged one, for a repair), and whether there is one.
func (d *Doc) TagsLeniently() (map[int]string, bool) {
	data, err := os.ReadFile(d.tagsPath())
	if err != nil {
		return nil, false
	}
	tags := map[int]string{}
	for _, line := range strings.Split(string(data), "\n") {
		round, eng, ok := strings.Cut(line, "\t")
		if r, err := strconv.Atoi(round); ok && err == nil && r > 0 && eng != "" && !strings.ContainsAny(eng, "\r") {
			tags[r] = eng
		}
	}
	return tags, true
}

// TagsName is the tags file, to name in a message.
func (d *Doc) TagsName() string { return d.tagsPath() }

// SetAsideTags renames a damaged tags file out of the way
// (tags.tsv.damaged-<time>), for whoever wants to look at it, and returns
// its new name.
func (d *Doc) SetAsideTags() (string, error) {
	to := d.tagsPath() + ".damaged-" + time.Now().UTC().Format("20060102T150405.000Z")
	return to, os.Rename(d.tagsPath(), to)
}

// SetTags writes the document's engagement tags, one round a line, in
// order (no file when there is none). Hold the document's lock.
func (d *Doc) SetTags(tags map[int]string) error {
	var rounds []int
	for r := range tags {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	var buf bytes.Buffer
	buf.WriteString("# round\tengagement (scribe tag and scribe untag edit this file; the indexes are rebuilt from it)\n")
	for _, r := range rounds {
		fmt.Fprintf(&buf, "%d\t%s\n", r, tags[r])
	}
	p := d.tagsPath()
	if len(rounds) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	_, err := atomicfile.WriteIfChanged(p, buf.Bytes(), FileMode)
	return err
}
