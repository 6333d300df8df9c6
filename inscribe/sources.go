package inscribe

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// The store knows no source format, but it is told which there are
// (Store.Formats): to read the round files of a document back with the
// adapter of its source_format, and to find a session's source again when
// it is repaired.

// Adapter returns the adapter of a document's source format. A document
// without source_format (format scribe/1) came from Claude Code, whose
// format is the first one scribe knew ("claude-code-jsonl").
func (s *Store) Adapter(m *session.Meta) (source.Adapter, error) {
	name := m.SourceFormat
	if name == "" {
		name = firstFormat
	}
	for _, a := range s.Formats {
		if a.Format() == name {
			return a, nil
		}
	}
	var names []string
	for _, a := range s.Formats {
		names = append(names, a.Format())
	}
	return nil, fmt.Errorf("session %s was inscribed from %s, a source format this scribe does not know (it knows %s): use a newer scribe", m.SessionID, name, strings.Join(names, ", "))
}

// firstFormat is the source format of documents of format scribe/1.
const firstFormat = "claude-code-jsonl"

// sniff tells the source format of a document by the lines of its first
// round file, which are the start of its source.
func (d *Doc) sniff() source.Adapter {
	rf, err := d.Round(1)
	if err != nil {
		return nil
	}
	for _, a := range d.store.Formats {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeEntries(pw, rf)) }()
		ok := a.Sniff(pr)
		pr.Close()
		if ok {
			return a
		}
	}
	return nil
}

// discover finds the sessions at path in every format that reads it.
func (s *Store) discover(path string) []source.Session {
	var out []source.Session
	for _, a := range s.Formats {
		if !a.Detect(path) {
			continue
		}
		ss, _ := a.Discover(path)
		out = append(out, ss...)
	}
	return out
}

// RepairSource describes the session of a document as a repair takes it
// (Options.Repair): found at its recorded source when that is still there,
// else named by it, with the sidechains the store holds that the source
// no longer has. d may be an orphan (its file is gone: Store.Orphans).
func (s *Store) RepairSource(d *Doc) (source.Session, error) {
	folder := d.folder()
	id := d.id
	var a source.Adapter
	rec := noteSource(folder)
	var listed []session.Sidechain
	if m, err := d.Meta(); err == nil {
		if a, err = s.Adapter(m); err != nil {
			return source.Session{}, err
		}
		id, rec, listed = m.SessionID, m.Source, m.Sidechains
	}
	path := ""
	if rec != "" {
		path = s.ResolveSource(rec)
	}
	var t source.Session
	if path != "" {
		for _, x := range s.discover(path) {
			if x.ID == id && x.Path != "" {
				t = x
			}
		}
	}
	if t.Path == "" {
		if a == nil {
			a = d.sniff()
		}
		if a == nil {
			return source.Session{}, fmt.Errorf("%s: neither its head, its source nor its first round file says which client it came from", d.path)
		}
		if path == "" {
			path = filepath.Join(folder, "(source unknown)")
		}
		t = source.Session{Adapter: a, Path: path, ID: id, Dir: filepath.Dir(path), Rel: filepath.Base(path)}
	}
	have := map[string]bool{}
	for _, sc := range t.Sidechains {
		have[sc.ID] = true
	}
	// The sidechains filed, and the folders of sidechains whose document
	// is gone.
	subs, _ := filepath.Glob(filepath.Join(folder, sidechainGlob))
	dirs, _ := filepath.Glob(filepath.Join(folder, sidechainBase("*")))
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() && !exists(dir+".md") {
			subs = append(subs, dir+".md")
		}
	}
	sort.Strings(subs)
	for _, sub := range subs {
		sd := s.docAt(sub)
		if have[sd.sub] {
			continue
		}
		sc := source.Sidechain{ID: sd.sub, Path: s.ResolveSource(noteSource(sd.folder()))}
		if m, err := sd.Meta(); err == nil {
			sc.Path = s.ResolveSource(m.Source)
			if of := m.SidechainOf; of != nil {
				sc.ToolUseID, sc.Rel = of.ToolUseID, filepath.FromSlash(of.File)
			}
		}
		for _, l := range listed {
			if l.AgentID == sd.sub {
				sc.Description = l.Description
				if sc.ToolUseID == "" {
					sc.ToolUseID = l.ToolUseID
				}
			}
		}
		if sc.Path == "" {
			sc.Path = filepath.Join(sd.folder(), "(source unknown)")
		}
		if sc.Rel == "" {
			sc.Rel = filepath.Base(sc.Path)
		}
		t.Sidechains = append(t.Sidechains, sc)
	}
	return t, nil
}
