package inscribe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/scribe-archive/scribe/inscribe/document"
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
	filed := FiledSidechains(md)
	if len(filed) == 0 {
		return found
	}
	return mergeSidechains(filed, found)
}

// FiledSidechains lists the sidechain documents in the folder of session
// document md, whether or not md exists, as md lists them.
func FiledSidechains(md string) []session.Sidechain {
	docs, _ := filepath.Glob(filepath.Join(Folder(md), "agent-*.md"))
	id := filepath.Base(Folder(md))
	var out []session.Sidechain
	for _, p := range docs {
		m, err := document.ReadMeta(p)
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
func (s *Store) LoneSidechains() ([]string, error) {
	agents, err := os.ReadDir(s.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
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
			subs, _ := filepath.Glob(filepath.Join(dir, e.Name(), "agent-*.md"))
			out = append(out, subs...)
		}
	}
	sort.Strings(out)
	return out, nil
}
