package inscribe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scribe-archive/scribe/session"
)

// A subagent's transcript may be found without its session's (the session
// file was deleted, or the source is a partial copy). Its document is filed
// where it would be with its session, <agent>/<session>/agent-<id>.md, in
// the folder of a session document that does not exist yet; the sidechains
// in such a folder are "lone sidechains". When the session's document
// is made, it lists them, whether or not their transcripts are still found
// beside it.

// adopt adds to the sidechains of a session document about to be made (md
// does not exist yet: exists is false) those already filed in its folder.
func adopt(md string, exists bool, found []session.Sidechain) []session.Sidechain {
	if exists {
		return found
	}
	filed := filedSidechains(md)
	if len(filed) == 0 {
		return found
	}
	return mergeSidechains(filed, found)
}

// FiledSidechains lists the sidechain documents in the folder of session
// document md, whether or not md exists, as md lists them.
func filedSidechains(md string) []session.Sidechain {
	docs, _ := filepath.Glob(filepath.Join(folderOf(md), sidechainGlob))
	id := filepath.Base(folderOf(md))
	var out []session.Sidechain
	for _, p := range docs {
		m, err := readMeta(p)
		if err != nil || m.SidechainOf == nil {
			continue // not a sidechain's document (check --store reports it)
		}
		out = append(out, session.Sidechain{AgentID: m.SidechainOf.AgentID, Path: id + "/" + filepath.Base(p), ToolUseID: m.SidechainOf.ToolUseID})
	}
	return out
}

// LoneSidechains lists the sidechain documents of the store whose session
// has no document: sessions/<agent>/<session>/agent-<id>.md without
// sessions/<agent>/<session>.md. They are in no catalog; check --store,
// reindex and search reach them by this list. It reads each agent's folder
// once, and only the folders of sessions without a document.
func (s *Store) LoneSidechains() ([]*Doc, error) {
	agents, err := os.ReadDir(s.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Doc
	for _, a := range agents {
		if !a.IsDir() || !ValidAgentID(a.Name()) {
			continue
		}
		dir := filepath.Join(s.SessionsDir(), a.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		docs := map[string]bool{}
		for _, e := range ents {
			docs[e.Name()] = true
		}
		for _, e := range ents {
			if !e.IsDir() || docs[e.Name()+".md"] || !ValidSessionID(e.Name()) {
				continue
			}
			subs, _ := filepath.Glob(filepath.Join(dir, e.Name(), sidechainGlob))
			for _, p := range subs {
				if s.isDocFile(p) {
					out = append(out, s.docAt(p))
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// Lone returns the document session id would have when only its
// sidechains were inscribed (its folder holds sidechain documents, and
// not the session's own): the Doc does not exist, its Sidechains do.
func (s *Store) Lone(id string) (*Doc, bool) {
	if !ValidSessionID(id) {
		return nil, false
	}
	agents, _ := s.Agents()
	for _, a := range agents {
		d := s.docAt(s.docPath(a, id))
		if d.Exists() {
			continue
		}
		if subs, _ := d.Sidechains(); len(subs) > 0 {
			return d, true
		}
	}
	return nil, false
}

// SessionMeta reads the frontmatter of a session's document or, for a
// session that has only sidechain documents (Lone), of its first
// sidechain's.
func (d *Doc) SessionMeta() (*session.Meta, error) {
	m, err := d.Meta()
	if !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	subs, _ := d.Sidechains()
	for _, sc := range subs {
		return sc.Meta()
	}
	return nil, err
}

// Orphans lists the documents that are gone while their folders are there,
// holding a read note or round files (a document deleted by hand), named
// by name (a session id), or all of them for "": each Doc does not exist.
func (s *Store) Orphans(name string) []*Doc { return s.gone(name, false) }

// gone lists the documents that are gone while their folders are there:
// those a first inscription was stopped before it wrote when stopped is
// true (Unfinished), the others when it is false (Orphans).
func (s *Store) gone(name string, stopped bool) []*Doc {
	pattern := name
	if pattern == "" {
		pattern = "*"
	} else if !ValidSessionID(name) {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(s.SessionsDir(), "*", pattern))
	var out []*Doc
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || strings.HasPrefix(filepath.Base(dir), ".") {
			continue
		}
		d := s.docAt(dir + ".md")
		if d.Exists() || d.agent == "" {
			continue
		}
		if !exists(filepath.Join(dir, stateFile)) && !exists(statePath(dir)) && !exists(roundsDir(dir)) {
			continue
		}
		if unfinished(dir) == stopped {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// Unfinished lists the documents that a first inscription on this machine
// was stopped before it wrote (killed, say), named by name (a session id),
// or all of them for "": their folders hold round files the inscription
// committed as it went (docs/FORMAT.md, section 9, Write order), and no
// read note that describes a document. Nothing is damaged: the next
// inscribe or append of the session's source finishes the inscription. A
// document that is gone while its folder holds a note is an orphan
// instead (Orphans), as are folders of round files with nothing of this
// machine's beside them (a clone's, whose document was deleted).
func (s *Store) Unfinished(name string) []*Doc { return s.gone(name, true) }

// UnfinishedError is what a command says of a document Unfinished lists.
type UnfinishedError struct {
	Session string
	Folder  string // the document's folder, which holds the round files
}

// Why says what the folder holds and what finishes it.
func (e *UnfinishedError) Why() string {
	return fmt.Sprintf("an inscription of session %s was stopped (killed?) before it wrote the document: nothing is lost; the round files it wrote wait in this folder, and the next scribe inscribe or scribe append of the session's source finishes it", e.Session)
}

func (e *UnfinishedError) Error() string { return e.Folder + ": " + e.Why() }

// Stopped is the UnfinishedError of a document Unfinished lists.
func (d *Doc) Stopped() *UnfinishedError { return &UnfinishedError{Session: d.id, Folder: d.folder()} }

// unfinished reports whether dir, the folder of a document that does not
// exist, holds what a first inscription on this machine leaves when it is
// stopped before it puts the document in place: the graph of the rounds it
// read, in this machine's folder of the document, and no read note, or
// only the pending note of a first inscription, which describes no
// document until the document is in place (resolveState).
func unfinished(dir string) bool {
	if !exists(graphPath(dir)) || exists(filepath.Join(dir, stateFile)) {
		return false
	}
	if !exists(statePath(dir)) {
		return true
	}
	st, err := readState(dir)
	return err == nil && st != nil && st.None && st.Next != nil && resolveState(st, dir+".md") == nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
