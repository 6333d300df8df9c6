package inscribe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// This file is the store's read face: a [Doc] is one document, and the
// [Store] lists ([Store.Docs], [Store.Walk]) and resolves ([Store.Resolve],
// [Store.Find]) them. Everything a reader needs of a document (its head,
// its items, its round files, its sidechains, the files kept beside it, its
// tags) is a method of Doc, so that no package but this one opens, lists
// or names a file of the store.

// Doc is one document of the store: a session's, or a subagent's transcript
// (a sidechain), whose document lies in its session's folder. Its head is
// read once, when first asked for. A Doc may be shared by goroutines.
type Doc struct {
	store *Store
	path  string // the .md
	agent string // the agent's bucket ("" outside a store)
	id    string // the session: the document's name, or its parent's for a sidechain
	sub   string // the subagent's id, for a sidechain; else ""
	cont  string // the continuation's key, for a continuation; else ""

	mu   sync.Mutex
	head *document.Head // nil until read
}

// docAt returns the document at path, a .md file in the store or outside it
// (a document given by its path, read where it is).
func (s *Store) docAt(path string) *Doc {
	d := &Doc{store: s, path: path}
	name := strings.TrimSuffix(filepath.Base(path), ".md")
	dir := filepath.Dir(path)
	if isSidechainBase(name) && sidechainFolder(dir) {
		sub := strings.TrimPrefix(name, sidechainBase(""))
		d.sub, d.id = sub, filepath.Base(dir)
		dir = filepath.Dir(dir)
	} else if isContBase(name) && sidechainFolder(dir) {
		d.cont, d.id = strings.TrimPrefix(name, contBase("")), filepath.Base(dir)
		dir = filepath.Dir(dir)
	} else {
		d.id = name
	}
	if s != nil && filepath.Clean(filepath.Dir(dir)) == filepath.Clean(s.SessionsDir()) {
		d.agent = filepath.Base(dir)
	}
	return d
}

// sidechainFolder reports whether dir, the folder of a document named
// agent-<id>.md, is a session's folder: it has a sibling document or is in
// an agent's bucket of a store.
func sidechainFolder(dir string) bool {
	if _, err := os.Stat(dir + ".md"); err == nil {
		return true
	}
	return ValidAgentID(filepath.Base(filepath.Dir(dir))) && filepath.Base(filepath.Dir(filepath.Dir(dir))) == "sessions"
}

// OpenDoc returns the document at path, a .md file inside a store or
// anywhere else: a document is read where it lies, with its folder beside
// it. One that lies in a store's sessions folder is that store's.
func OpenDoc(path string) (*Doc, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// <root>/sessions/<agent>/<name>.md, or a sidechain's one folder deeper.
	for dir, up := filepath.Dir(abs), 0; up < 3; dir, up = filepath.Dir(dir), up+1 {
		if up > 0 && filepath.Base(dir) == "sessions" {
			s, err := OpenStore(filepath.Dir(dir))
			if err != nil {
				return nil, err
			}
			return s.docAt(path), nil
		}
	}
	return (*Store)(nil).docAt(path), nil
}

// Path is where the document lies: to show a person, or to link to. Read
// it through the Doc's methods.
func (d *Doc) Path() string { return d.path }

// String is the document's path.
func (d *Doc) String() string { return d.path }

// SessionID is the session the document belongs to: its own, or its
// parent's for a sidechain, as the store files it (by name).
func (d *Doc) SessionID() string { return d.id }

// Agent is the agent bucket the document is filed under ("" for a document
// outside a store).
func (d *Doc) Agent() string { return d.agent }

// Subagent is the subagent's id of a sidechain's document, "" for a
// session's.
func (d *Doc) Subagent() string { return d.sub }

// IsSidechain reports whether the document is a subagent's transcript.
func (d *Doc) IsSidechain() bool { return d.sub != "" }

// Key is the document's key in the indexes: its session id, or
// <session>/agent-<id> for a sidechain.
func (d *Doc) Key() string {
	switch {
	case d.sub != "":
		return d.id + "/" + sidechainBase(d.sub)
	case d.cont != "":
		return d.id + "/" + contBase(d.cont)
	}
	return d.id
}

// Exists reports whether the document's file is there (a session of which
// only sidechains were inscribed has none).
func (d *Doc) Exists() bool { return d.store.isDocFile(d.path) }

// Head returns the document's head (frontmatter, title, summary), read once.
func (d *Doc) Head() (*document.Head, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head == nil {
		h, err := readHeadVia(d.open, d.path)
		if err != nil {
			return nil, err
		}
		d.head = h
	}
	return d.head, nil
}

// forget drops what the Doc read of the document, which changed.
func (d *Doc) forget() {
	d.mu.Lock()
	d.head = nil
	d.mu.Unlock()
}

// RewriteHead changes the document's frontmatter with edit, keeping its
// summary and body byte for byte, under the document's lock. It reports
// whether the document changed.
func (d *Doc) RewriteHead(edit func(*session.Meta)) (bool, error) {
	defer d.forget()
	return d.store.RewriteHead(d.path, edit)
}

// readHead reads the head of the document at path.
func readHead(path string) (*document.Head, error) { return readHeadVia(osfile.Open, path) }

// readHeadVia is readHead opening the file with open.
func readHeadVia(open opener, path string) (*document.Head, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return document.ReadHead(f, fi.Size(), path)
}

// Meta returns the document's frontmatter.
func (d *Doc) Meta() (*session.Meta, error) {
	h, err := d.Head()
	if err != nil {
		return nil, err
	}
	return h.Meta, nil
}

// Title is the title lists show for the document: its title, else its
// first prompt (document.DisplayTitle). It is "" when the head does not
// read.
func (d *Doc) Title() string {
	h, err := d.Head()
	if err != nil {
		return ""
	}
	return document.DisplayTitle(h.Meta, h.Summary)
}

// Open opens the document's bytes as they are stored.
func (d *Doc) Open() (*os.File, error) { return d.open(d.path) }

// open opens a file of the document (the document, a round file, a file
// kept beside it) for reading. Every read of a Doc goes through it: in a
// store, it opens the file through the store's sessions folder (an
// os.Root), so that a link that leads out of it (a store cloned from git
// or synced by a tool holds what links it was given) is not followed,
// and the reader is told so; links within the folder are followed. A
// document outside a store is read where it lies.
func (d *Doc) open(p string) (*os.File, error) {
	if d.store != nil {
		if rel, err := filepath.Rel(d.store.SessionsDir(), p); err == nil && filepath.IsLocal(rel) {
			f, err := os.OpenInRoot(d.store.SessionsDir(), rel)
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
				if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
					err = fmt.Errorf("%s: a link that leads out of the store's folder %s: not followed", p, d.store.SessionsDir())
				}
			}
			return f, err
		}
	}
	return osfile.Open(p)
}

// Changed is when the document's file last changed (its modification
// time), for a reader that caches what it derived from it.
func (d *Doc) Changed() (time.Time, int64, error) {
	fi, err := os.Stat(d.path)
	if err != nil {
		return time.Time{}, 0, err
	}
	return fi.ModTime(), fi.Size(), nil
}

// Parse reads the whole document.
func (d *Doc) Parse() (*session.Document, error) {
	f, err := d.open(d.path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	return document.Parse(data, d.path)
}

// Items opens the document's messages for reading one at a time, so that a
// long document is never whole in memory. Close the reader when done.
func (d *Doc) Items() (*document.ItemReader, error) { return d.items(nil) }

// ItemsAt is Items from the message at a Place that a reader of the same
// document gave (document.ItemReader.Place) on, without reading those
// before it: a reader of a document's last pages need not read it all.
// A Place of a document since changed reads wrong or fails; the caller
// keeps places with the document's Changed.
func (d *Doc) ItemsAt(at document.Place) (*document.ItemReader, error) { return d.items(&at) }

func (d *Doc) items(at *document.Place) (*document.ItemReader, error) {
	f, err := d.open(d.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	var r *document.ItemReader
	if at != nil {
		r, err = document.ReadItemsAt(f, fi.Size(), d.path, *at)
	} else {
		r, err = document.ReadItems(f, fi.Size(), d.path)
	}
	if err != nil {
		f.Close()
	}
	return r, err
}

// folder is the document's folder: its round files, files, sidechains.
func (d *Doc) folder() string { return folderOf(d.path) }

// BuilderConfig is the configuration of a builder that reads the
// document's round files back (source.Adapter.NewBuilder).
func (d *Doc) BuilderConfig() source.Config {
	return builderConfig(d.path, strings.TrimSuffix(filepath.Base(d.path), ".md"))
}

// Rounds lists the numbers of the document's round files, in order.
func (d *Doc) Rounds() ([]int, error) {
	ns, err := roundNumbers(roundsDir(d.folder()))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ns, err
}

// RoundCount is the number of the document's rounds: the number of its
// last round file (they are numbered from 1 without a gap).
func (d *Doc) RoundCount() (int, error) {
	ns, err := d.Rounds()
	if err != nil || len(ns) == 0 {
		return 0, err
	}
	return ns[len(ns)-1], nil
}

// Round reads round n's file whole.
func (d *Doc) Round(n int) (*RoundFile, error) { return readRoundVia(d.open, roundPath(d.folder(), n)) }

// RoundHeader reads round n's file up to its entries (the bulk of it).
func (d *Doc) RoundHeader(n int) (*RoundFile, error) {
	return readRoundUpTo(d.open, roundPath(d.folder(), n), "entries")
}

// RoundName names round n's file where a person reads it (an error, a
// note): its path.
func (d *Doc) RoundName(n int) string { return roundPath(d.folder(), n) }

// WriteSource writes the source lines the document's round files hold to
// w, as the source had them: concatenated, they are the source.
func (d *Doc) WriteSource(w io.Writer) error {
	ns, err := d.Rounds()
	if err != nil {
		return err
	}
	for _, n := range ns {
		rf, err := d.Round(n)
		if err != nil {
			return err
		}
		if err := writeEntries(w, rf); err != nil {
			return err
		}
	}
	return nil
}

// Sidechains returns the documents of the session's subagents, filed in
// its folder, in order of their names (none for a sidechain).
func (d *Doc) Sidechains() ([]*Doc, error) {
	if d.sub != "" {
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(d.folder(), sidechainGlob))
	if err != nil {
		return nil, err
	}
	out := make([]*Doc, 0, len(paths))
	for _, p := range paths {
		if d.store.isDocFile(p) {
			out = append(out, d.store.docAt(p))
		}
	}
	return out, nil
}

// Sidechain returns the document of the session's subagent id, if filed.
func (d *Doc) Sidechain(id string) (*Doc, bool) {
	if d.sub != "" || !ValidSessionID(id) {
		return nil, false
	}
	sc := d.store.docAt(filepath.Join(d.folder(), sidechainDoc(id)))
	return sc, sc.Exists()
}

// SidechainAt returns the sidechain document a parent's head lists at rel
// (session.Sidechain.Path: relative to the parent's bucket), if it lies in
// the parent's folder.
func (d *Doc) SidechainAt(rel string) (*Doc, bool) {
	p := filepath.Join(filepath.Dir(d.path), filepath.FromSlash(rel))
	if !filepath.IsLocal(filepath.FromSlash(rel)) || filepath.Dir(p) != d.folder() {
		return nil, false
	}
	sc := d.store.docAt(p)
	return sc, sc.Exists()
}

// Parent returns the session's document of a sidechain or a continuation
// (nil for a session's document).
func (d *Doc) Parent() *Doc {
	if d.sub == "" && d.cont == "" {
		return nil
	}
	return d.store.docAt(filepath.Dir(folderOf(d.path)) + ".md")
}

// Sibling returns the document of session id in the same bucket, if there
// is one (the session a fork started from).
func (d *Doc) Sibling(id string) (*Doc, bool) {
	if !ValidSessionID(id) {
		return nil, false
	}
	sib := d.store.docAt(filepath.Join(filepath.Dir(d.path), id+".md"))
	return sib, sib.Exists()
}

// The files a document shows (images, PDFs) lie in the files/ folder of
// its folder, named by the hash of their bytes; the document names one by
// its path relative to the document's directory (session.File.Path),
// <document's name>/files/<name>.

// ReadFile reads a file the document shows, rel as the document names it.
func (d *Doc) ReadFile(rel string) ([]byte, error) {
	prefix := filepath.Base(d.folder()) + "/" + filesDir + "/"
	name, ok := strings.CutPrefix(rel, prefix)
	if !ok {
		return nil, fmt.Errorf("%s: file %q lies outside the document's folder", d.path, rel)
	}
	f, err := d.OpenShown(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ShownName returns the name in the document's files folder of a file
// the document refers to by p (session.File.Path), if it is there.
func (d *Doc) ShownName(p string) (string, bool) {
	name, ok := strings.CutPrefix(p, filepath.Base(d.folder())+"/"+filesDir+"/")
	return name, ok && name != "" && !strings.ContainsAny(name, `/\`)
}

// LinkedSidechain returns the subagent whose document a link of the
// document names (session.Block.Sidechain: relative to the document's
// directory), if it is a sidechain of the same session.
func (d *Doc) LinkedSidechain(link string) (string, bool) {
	p := filepath.Clean(filepath.Join(filepath.Dir(d.path), filepath.FromSlash(link)))
	sessionFolder := d.folder()
	if d.sub != "" {
		sessionFolder = filepath.Dir(d.path)
	}
	base, ok := strings.CutSuffix(filepath.Base(p), ".md")
	if !ok || filepath.Dir(p) != sessionFolder || !isSidechainBase(base) {
		return "", false
	}
	return strings.TrimPrefix(base, sidechainBase("")), true
}

// OpenShown opens the file of that name in the document's files folder,
// through an os.Root: a name that leads out of the folder, or a link that
// does, is refused.
func (d *Doc) OpenShown(name string) (*os.File, error) {
	return os.OpenInRoot(filepath.Join(d.folder(), filesDir), name)
}

// Shown lists the names of the files in the document's files folder.
func (d *Doc) Shown() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(d.folder(), filesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && !isTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, err
}

// SourceFiles lists the files the source client kept beside the session,
// kept byte for byte: their paths relative to that folder, with slashes.
func (d *Doc) SourceFiles() ([]string, error) {
	kept := filepath.Join(d.folder(), sourceFilesDir)
	var out []string
	err := filepath.WalkDir(kept, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == kept {
				return fs.SkipDir
			}
			return err
		}
		if e.IsDir() || isTemp(e.Name()) {
			return nil
		}
		rel, _ := filepath.Rel(kept, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out, err
}

// OpenSourceFile opens one of SourceFiles.
func (d *Doc) OpenSourceFile(rel string) (*os.File, error) {
	r := filepath.FromSlash(rel)
	if !filepath.IsLocal(r) {
		return nil, fmt.Errorf("%s: kept file %q lies outside the document's folder", d.path, rel)
	}
	return d.open(filepath.Join(d.folder(), sourceFilesDir, r))
}

// SidechainMetaName is the file SidechainMeta reads, to name in a message.
func (d *Doc) SidechainMetaName() string { return filepath.Join(d.folder(), sidechainMetaFile) }

// SidechainMeta returns what the source client wrote about a subagent
// (kept as meta.json beside its document), and whether there is any.
func (d *Doc) SidechainMeta() ([]byte, bool, error) {
	f, err := d.open(filepath.Join(d.folder(), sidechainMetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	return data, err == nil, err
}

// Lock takes the document's lock, waiting at most wait (zero: the default,
// 30 s) for another process that holds it; past it, the error is a
// *LockError. Hold it while changing what the store keeps of the document
// (its tags).
func (d *Doc) Lock(wait time.Duration) (unlock func(), err error) {
	return lockDoc(d.folder(), wait)
}

// Source is the source the document was inscribed from, as a path of this
// machine: the frontmatter's, else its read note's ("" when neither
// says).
func (d *Doc) Source() string {
	if m, err := d.Meta(); err == nil && m.Source != "" {
		return d.store.ResolveSource(m.Source)
	}
	if rec := noteSource(d.folder()); rec != "" {
		return d.store.ResolveSource(rec)
	}
	return ""
}

// The store's listings.

// Agents lists the agents' buckets of the store, in order.
func (s *Store) Agents() ([]string, error) {
	ents, err := os.ReadDir(s.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && ValidAgentID(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// AgentDocs lists the session documents filed under one agent (not the
// catalog, not the sidechains), in order of their names.
func (s *Store) AgentDocs(agent string) ([]*Doc, error) {
	if !ValidAgentID(agent) {
		return nil, fmt.Errorf("agent id %q: use lowercase letters, digits, dashes and underscores", agent)
	}
	ents, err := os.ReadDir(filepath.Join(s.SessionsDir(), agent))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Doc
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || e.IsDir() || name == strings.TrimSuffix(catalogFile, ".md") || isTemp(e.Name()) {
			continue
		}
		p := filepath.Join(s.SessionsDir(), agent, e.Name())
		if e.Type()&fs.ModeSymlink != 0 && !s.linkWithin(p) {
			continue
		}
		out = append(out, &Doc{store: s, path: p, agent: agent, id: name})
	}
	return out, nil
}

// Docs lists the store's session documents (not the catalogs, not the
// sidechains), by agent and name.
func (s *Store) Docs() ([]*Doc, error) {
	agents, err := s.Agents()
	if err != nil {
		return nil, err
	}
	var out []*Doc
	for _, a := range agents {
		docs, err := s.AgentDocs(a)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// Walk calls fn for every document of the store: each session's, followed
// by its sidechains', then the sidechains whose session has no document
// (LoneSidechains). It stops at the first error fn returns.
func (s *Store) Walk(fn func(*Doc) error) error {
	docs, err := s.Docs()
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := fn(d); err != nil {
			return err
		}
		subs, _ := d.Sidechains()
		conts, _ := d.Continuations()
		for _, sc := range append(subs, conts...) {
			if err := fn(sc); err != nil {
				return err
			}
		}
	}
	lone, err := s.LoneSidechains()
	if err != nil {
		return err
	}
	for _, sc := range lone {
		if err := fn(sc); err != nil {
			return err
		}
	}
	return nil
}

// Find returns the document of session id, looking in every agent's
// bucket.
func (s *Store) Find(id string) (*Doc, bool) {
	if !ValidSessionID(id) {
		return nil, false
	}
	p, ok := s.FindDoc(id)
	if !ok {
		return nil, false
	}
	return s.docAt(p), true
}

// Doc returns the document at path, which must lie in the store's
// sessions folder.
func (s *Store) Doc(path string) (*Doc, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(s.SessionsDir())
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(root, abs); err != nil || !filepath.IsLocal(rel) || !strings.HasSuffix(rel, ".md") || filepath.Base(rel) == catalogFile {
		return nil, fmt.Errorf("%s is not a document of the store %s", path, s.Root)
	}
	return s.docAt(filepath.Join(s.SessionsDir(), mustRel(root, abs))), nil
}

func mustRel(base, p string) string {
	rel, _ := filepath.Rel(base, p)
	return rel
}

// MinPrefix is the shortest prefix of a session id that Resolve takes.
const MinPrefix = 4

// NotFoundError is a session the store does not hold.
type NotFoundError struct{ Ref, Dir string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no session %s in %s", e.Ref, e.Dir) }

// AmbiguousError is a prefix that more than one session answers to.
type AmbiguousError struct {
	Ref     string
	Matches []Match
}

// Match is a document a reference answers to, and the session id it
// answers by.
type Match struct {
	Doc *Doc
	ID  string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("session %s is ambiguous: %d sessions match", e.Ref, len(e.Matches))
}

// Resolve finds the document a reference names: a document's path (.md),
// a session id (the document of that name, else the one whose session_id
// is that), or a unique prefix of one of at least MinPrefix characters,
// git-style. It returns a *NotFoundError or an *AmbiguousError when no
// one document answers.
func (s *Store) Resolve(ref string) (*Doc, error) {
	if strings.HasSuffix(ref, ".md") {
		if _, err := os.Stat(ref); err != nil {
			return nil, err
		}
		if d, err := s.Doc(ref); err == nil {
			return d, nil
		}
		return s.docAt(ref), nil
	}
	if !ValidSessionID(ref) {
		return nil, fmt.Errorf("%q is neither a session id (%s) nor a document (.md)", ref, SessionIDRule)
	}
	if d, ok := s.Find(ref); ok {
		return d, nil
	}
	docs, err := s.Docs()
	if err != nil {
		return nil, err
	}
	var exact, prefixed []Match
	for _, d := range docs {
		if strings.HasPrefix(d.id, ref) {
			prefixed = append(prefixed, Match{d, d.id})
			continue
		}
		id, err := readSessionID(d.path)
		if err != nil {
			continue // not a document (check reports it)
		}
		switch {
		case id == ref:
			exact = append(exact, Match{d, id})
		case strings.HasPrefix(id, ref):
			prefixed = append(prefixed, Match{d, id})
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0].Doc, nil
	case len(exact) > 1:
		return nil, ambiguous(ref, exact)
	case len(prefixed) == 0:
		return nil, &NotFoundError{Ref: ref, Dir: s.SessionsDir()}
	case len(ref) < MinPrefix:
		return nil, fmt.Errorf("%q is too short to name a session: give at least %d characters of its id", ref, MinPrefix)
	case len(prefixed) > 1:
		return nil, ambiguous(ref, prefixed)
	}
	return prefixed[0].Doc, nil
}

func ambiguous(ref string, ms []Match) error {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Doc.path < ms[j].Doc.path })
	return &AmbiguousError{Ref: ref, Matches: ms}
}

// readMeta reads the frontmatter of the document at path.
func readMeta(path string) (*session.Meta, error) {
	h, err := readHead(path)
	if err != nil {
		return nil, err
	}
	return h.Meta, nil
}

// readSessionID reads a document's session_id, reading as little of it as
// it can: the frontmatter's session_id line when its value is a plain id,
// else the frontmatter.
func readSessionID(md string) (string, error) {
	f, err := osfile.Open(md)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 4<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return "", err
	}
	buf = buf[:n]
	if i := bytes.Index(buf, []byte("\nsession_id: ")); i >= 0 && bytes.HasPrefix(buf, []byte("---\n")) {
		line := buf[i+len("\nsession_id: "):]
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			v := strings.Trim(string(line[:nl]), `"' `)
			if ValidSessionID(v) && !bytes.Contains(buf[:i], []byte("\n---\n")) {
				return v, nil
			}
		}
	}
	m, err := readMeta(md)
	if err != nil {
		return "", err
	}
	return m.SessionID, nil
}

// RoundsFrom returns the numbers of the document's rounds from round from
// on. From the first, it lists the rounds folder, so that a gap in the
// numbers (a lost round file) does not hide the rounds after it; from a
// later round (an append indexes the last few) it looks for them one by
// one rather than list a folder that grows with the session.
func (d *Doc) RoundsFrom(from int) ([]int, error) {
	if from <= 1 {
		return d.Rounds()
	}
	var ns []int
	for n := from; ; n++ {
		if _, err := os.Stat(roundPath(d.folder(), n)); errors.Is(err, fs.ErrNotExist) {
			return ns, nil
		} else if err != nil {
			return nil, err
		}
		ns = append(ns, n)
	}
}

// Check checks, cheaply, that the document's round files are those its
// read note and their record describe: that each is there, with the size
// scribe wrote (checkDoc).
func (d *Doc) Check() error { return checkDoc(d.path) }

// Verify checks everything scribe wrote for the document against what it
// recorded, reading it all (verifyDoc): a, the adapter of its source
// format, rebuilds its graph to compare; its source, when at sourcePath,
// tells the open round's file an update stopped after writing it from a
// damaged one. It returns a *DamageError (or a *MissingNoteError) for each
// problem.
func (d *Doc) Verify(a source.Adapter, sourcePath string) []error {
	return verifyDoc(d.path, a, sourcePath)
}
