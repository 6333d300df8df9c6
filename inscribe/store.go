package inscribe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session/source"
)

// Store is a scribe store: a directory laid out as layout.go says (and
// docs/FORMAT.md §2).
type Store struct {
	Root  string
	Roles []Role

	// Indexer, when set, keeps the store's derived views (indexes,
	// catalogs) current: every update of a document ends with it.
	Indexer Indexer

	// Formats are the source formats scribe reads (their adapters): the
	// store reads a document's round files back with the adapter of its
	// source_format, and finds a session's source again through them
	// (sources.go).
	Formats []source.Adapter

	// Redact, when set, replaces secrets in what the store inscribes
	// (redact.go).
	Redact Redactor

	// buckets are the names of the agents' buckets as FindDoc last read
	// them: it reads them again only when a session is not in them (a
	// bucket may have been made since), so that an update of every
	// document of a store does not list its sessions folder each time.
	bucketsMu sync.Mutex
	buckets   []string

	// machine is this machine's id as machineID last read or made it.
	machineMu sync.Mutex
	machine   string

	// gitOnce writes the store's .gitignore once (git.go).
	gitOnce sync.Once
	gitErr  error
}

// An Indexer keeps a store's derived views current. The store calls
// Indexed after every update of a document that did not fail, unchanged
// ones too, still holding the document's lock.
type Indexer interface {
	Indexed(u Update) (warnings []error, err error)
}

// Update is what the store tells its Indexer of an update.
type Update struct {
	Doc *Doc   // the document
	Key string // its key: the session id, or <session>/agent-<id> for a sidechain
	// Seen is how far the source was read (the read note's seen).
	Seen int64
	// Rounds are the headers of the round files this update wrote (but
	// for the tool calls' results), which the indexer takes one by one;
	// the others are unchanged on disk.
	Rounds *Written
	// Repair says the update was a repair (Options.Repair): the views are
	// checked, and rebuilt from every round file when damaged or when All
	// is set.
	Repair bool
	// All says the document's views are to be rebuilt from every round
	// file: a repair mended the document.
	All bool
}

// Role is an entry of the roles registry: sessions that match it are filed
// under its id instead of their source's agent id ("claude", "codex").
type Role struct {
	ID   string `yaml:"id"`
	Name string `yaml:"name"`
	// AgentNames match the name a person gave the agent, where the
	// source records one (Claude Code: claude -n).
	AgentNames []string `yaml:"agent_names"`
	// Projects are path.Match patterns matched against the project
	// directory (the session's working directory).
	Projects []string `yaml:"projects"`
}

// OpenStore opens the store at root, reading its roles registry. The
// directory need not exist yet.
func OpenStore(root string) (*Store, error) {
	s := &Store{Root: root}
	data, err := os.ReadFile(filepath.Join(root, rolesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if line := conflictLine(data); line > 0 {
		return nil, &MergeConflictError{File: filepath.Join(root, rolesFile), Line: line}
	}
	var reg struct {
		Roles []Role `yaml:"roles"`
	}
	if err := document.DecodeYAML(data, &reg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, rolesFile), err)
	}
	for _, r := range reg.Roles {
		if !ValidAgentID(r.ID) {
			return nil, fmt.Errorf("%s: role id %q: use lowercase letters, digits, dashes and underscores", filepath.Join(root, rolesFile), r.ID)
		}
		for _, p := range r.Projects {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%s:%d: role %s: the projects pattern %q is malformed, so it would never match: write it as a shell pattern (* any name, ? one character, [a-z] a class closed by ], \\ before a character to take it as it is)",
					filepath.Join(root, rolesFile), lineOf(data, p), r.ID, p)
			}
		}
	}
	s.Roles = reg.Roles
	return s, nil
}

// lineOf returns the line of data that first holds text (0 when none).
func lineOf(data []byte, text string) int {
	i := bytes.Index(data, []byte(text))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// ValidAgentID reports whether s is a usable agent id (a role slug).
func ValidAgentID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// SessionIDRule says which session ids can name a document (ValidSessionID).
const SessionIDRule = "1 to 200 characters from A-Z a-z 0-9 . _ - (not . or ..)"

// ValidSessionID reports whether s can name a document and its folder in
// the store: 1 to 200 characters from A-Z a-z 0-9 . _ -, and not . or ..
// (docs/FORMAT.md, section 2). Subagent ids follow the same rule.
func ValidSessionID(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// roleFor picks the role of a session from its agent name and project.
func (s *Store) roleFor(agentName, project string) *Role {
	for i := range s.Roles {
		r := &s.Roles[i]
		for _, n := range r.AgentNames {
			if agentName != "" && strings.EqualFold(n, agentName) {
				return r
			}
		}
		for _, p := range r.Projects {
			if ok, _ := path.Match(p, project); ok && project != "" {
				return r
			}
		}
	}
	return nil
}

// role returns the role registered under id, if any.
// Role returns the registered role of an agent id, or nil.
func (s *Store) Role(id string) *Role {
	for i := range s.Roles {
		if s.Roles[i].ID == id {
			return &s.Roles[i]
		}
	}
	return nil
}

// FindDoc looks for the document of a session in every agent's bucket, in
// the order of their names.
func (s *Store) FindDoc(id string) (string, bool) {
	s.bucketsMu.Lock()
	known := s.buckets
	s.bucketsMu.Unlock()
	if p, ok := s.findIn(known, id); ok {
		return p, true
	}
	ents, err := os.ReadDir(s.SessionsDir())
	if err != nil {
		return "", false
	}
	var buckets, unseen []string // unseen: those not looked in above
	for _, e := range ents {
		if e.IsDir() {
			buckets = append(buckets, e.Name())
			if !slices.Contains(known, e.Name()) {
				unseen = append(unseen, e.Name())
			}
		}
	}
	s.bucketsMu.Lock()
	s.buckets = buckets
	s.bucketsMu.Unlock()
	return s.findIn(unseen, id)
}

// findIn looks for the document of a session in the buckets named.
func (s *Store) findIn(buckets []string, id string) (string, bool) {
	for _, b := range buckets {
		p := s.docPath(b, id)
		if s.isDocFile(p) {
			return p, true
		}
	}
	return "", false
}

// isDocFile reports whether p is a file the store reads as a document (or
// another file of its own): a regular file, or a link to one within the
// store's sessions folder. A link that leads out of the folder (a store
// cloned from git, or synced by a tool, holds whatever links it was
// given) is none: nothing is read through it (Doc.open).
func (s *Store) isDocFile(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.Mode().IsRegular() {
		return true
	}
	return fi.Mode()&fs.ModeSymlink != 0 && s.linkWithin(p)
}

// linkWithin reports whether the link p leads to a regular file within
// the store's sessions folder (or, for no store, anywhere).
func (s *Store) linkWithin(p string) bool {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if s == nil {
		return true
	}
	root, err := filepath.EvalSymlinks(s.SessionsDir())
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, target)
	return err == nil && filepath.IsLocal(rel)
}

// LockError reports that another process holds a document's lock.
type LockError struct {
	Path string
}

func (e *LockError) Error() string {
	return fmt.Sprintf("%s: another scribe is updating this document", e.Path)
}

// lockTimeout is how long an update waits for another process that is
// updating the same document.
var lockTimeout = 30 * time.Second

// lockDoc takes the exclusive lock of the document whose folder is
// given, waiting up to wait (lockTimeout when zero); past it, the error is
// a *LockError. Two processes that update the same document run one after
// the other: the second waits and then sees what the first wrote. The lock
// is an flock(2) on the document's .lock among the machine's own state
// (LockFileEx on Windows), so it is released when the process dies.
func lockDoc(folder string, wait time.Duration) (unlock func(), err error) {
	unlock, err = lockWait(lockPath(folder), folder, wait)
	if err != nil {
		return nil, err
	}
	// A rewrite of several files (forget) a kill cut short is completed
	// before anything reads the document's files, or removes the
	// temporary files it was renaming.
	if _, err := atomicfile.Recover(journalPath(folder)); err != nil {
		unlock()
		return nil, fmt.Errorf("complete the rewrite a kill stopped: %w", err)
	}
	return unlock, nil
}

// lockWait takes the lock of the file name, waiting up to wait
// (lockTimeout when zero); what names what it guards in a *LockError.
func lockWait(name, what string, wait time.Duration) (unlock func(), err error) {
	if wait <= 0 {
		wait = lockTimeout
	}
	f, err := osfile.OpenFile(name, os.O_CREATE|os.O_RDWR, FileMode)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder is made on first use only: over a store of many
		// documents, a stat each is not free.
		if err = os.MkdirAll(filepath.Dir(name), DirMode); err == nil {
			f, err = osfile.OpenFile(name, os.O_CREATE|os.O_RDWR, FileMode)
		}
	}
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if held {
			return func() {
				unlockFile(f)
				f.Close()
			}, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, &LockError{Path: what}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordedSource is how a source path is written in the frontmatter:
// relative to the store's parent directory when it lies inside it (so a
// repository that holds both its sessions and their store is
// relocatable), else relative to the home directory as ~/… (so a store
// shared with a team does not publish where each one's home is), else
// absolute.
func (s *Store) recordedSource(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	rootAbs, err := filepath.Abs(s.Root)
	if err == nil {
		base := filepath.Dir(rootAbs)
		if rel, err := filepath.Rel(base, abs); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, abs); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}

// ResolveSource turns a recorded source back into a path of this machine:
// ~/… from this home directory, a relative one from the store's parent
// directory.
func (s *Store) ResolveSource(rec string) string {
	if rest, ok := strings.CutPrefix(rec, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil && home != "" {
			return filepath.Join(home, filepath.FromSlash(rest))
		}
	}
	p := filepath.FromSlash(rec)
	if filepath.IsAbs(p) || s == nil {
		return p
	}
	rootAbs, err := filepath.Abs(s.Root)
	if err != nil {
		return p
	}
	return filepath.Join(filepath.Dir(rootAbs), p)
}
