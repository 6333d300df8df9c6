// Package exportclaude turns a document of the store back into the
// transcript Claude Code wrote, one that claude --resume accepts.
//
// The export is generated from the store. Structure and metadata come from
// the round files, which hold every source line byte for byte; content comes
// from the markdown, which is the authority for it: when a person edited the
// text of a message in the document (a redaction, a typo), the export carries
// the edit into the entry it came from, and changes nothing else. An
// unedited document therefore exports to its source, byte for byte. An edit
// the transcript format cannot express (a message added or removed, a
// changed timestamp or identity) is reported as a warning and not carried.
package exportclaude

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Warning is an edit in a document that the export could not carry.
type Warning = exportcore.Warning

// Transcript writes the transcript of one document (a session, or a
// sidechain) to w. src is the adapter of the format the document was
// inscribed from (its source_format): it groups the kept entries into the
// document's items again, to find the person's edits.
//
// The document is read a message at a time, alongside the round files, so
// neither is ever whole in memory.
func Transcript(d *inscribe.Doc, src source.Adapter, w io.Writer) ([]error, error) {
	return exportcore.Transcript(d, src, w, encodeInput)
}

// encodeInput writes an edited tool input as it is in a transcript: the
// input object itself.
func encodeInput(d *session.Block, edited string) ([]byte, string) {
	if !json.Valid([]byte(edited)) {
		return nil, fmt.Sprintf("the input of tool call %s is not valid JSON: not carried", d.ID)
	}
	return []byte(edited), ""
}

// Options adjust Session.
type Options = exportcore.Options

// File is one file an export wrote or found already right.
type File = exportcore.File

// ExistsError is an existing file that differs from the export.
type ExistsError = exportcore.ExistsError

// ProjectDir returns the directory Claude Code keeps a session's transcript
// in: <projects>/<slug of the session's working directory>.
func ProjectDir(projects string, m *session.Meta) (string, error) {
	if m.Project == nil || *m.Project == "" {
		return "", fmt.Errorf("session %s does not record its project directory: give an output directory", m.SessionID)
	}
	return filepath.Join(projects, claude.ProjectSlug(*m.Project)), nil
}

// Session exports a session document, its sidechains and the files Claude
// Code kept beside it into project directory dir, laid out as Claude Code
// lays them out: <id>.jsonl, <id>/subagents/agent-<agent>.jsonl (with its
// .meta.json), <id>/tool-results/... An existing identical file is left
// alone; a different one is an error unless opts.Force. A session that has
// no document, only sidechain documents in its folder (its own transcript
// was never found), exports those; so does one of them given as d.
func Session(d *inscribe.Doc, src source.Adapter, dir string, opts Options) ([]File, []error, error) {
	if p := d.Parent(); p != nil && !p.Exists() {
		d = p
	}
	if !d.Exists() {
		if subs, _ := d.Sidechains(); len(subs) > 0 {
			return lone(d, subs, src, dir, opts)
		}
	}
	meta, err := d.Meta()
	if err != nil {
		return nil, nil, err
	}
	if meta.SidechainOf != nil {
		return nil, nil, fmt.Errorf("%s is a sidechain: export its session, %s", d.Path(), meta.SidechainOf.SessionID)
	}
	w := &sessionWriter{dir: dir, opts: opts}
	if err := w.put(meta.SessionID+".jsonl", func(out io.Writer) ([]error, error) { return Transcript(d, src, out) }); err != nil {
		return w.files, w.warnings, err
	}
	sidechains, err := d.Sidechains()
	if err != nil {
		return w.files, w.warnings, err
	}
	for _, sc := range sidechains {
		if err := w.sidechain(sc, meta.SessionID, src); err != nil {
			return w.files, w.warnings, err
		}
	}
	kept, err := d.SourceFiles()
	if err != nil {
		return w.files, w.warnings, err
	}
	for _, rel := range kept {
		if err := w.put(filepath.Join(meta.SessionID, filepath.FromSlash(rel)), copySourceFile(d, rel)); err != nil {
			return w.files, w.warnings, err
		}
	}
	return w.files, w.warnings, nil
}

// sessionWriter writes the files of a session's export into dir.
type sessionWriter struct {
	dir      string
	opts     Options
	files    []File
	warnings []error
}

// put writes the file at rel in the export.
func (w *sessionWriter) put(rel string, gen func(io.Writer) ([]error, error)) error {
	f, ws, err := exportcore.WriteFile(filepath.Join(w.dir, rel), w.opts, gen)
	w.warnings = append(w.warnings, ws...)
	if err != nil {
		return err
	}
	w.files = append(w.files, f)
	return nil
}

// sidechain writes the transcript of the sidechain document sc of session
// sessionID where the client kept it, with its .meta.json.
func (w *sessionWriter) sidechain(sc *inscribe.Doc, sessionID string, src source.Adapter) error {
	sm, err := sc.Meta()
	if err != nil {
		return err
	}
	if sm.SidechainOf == nil {
		return nil
	}
	rel := sm.SidechainOf.File
	if rel == "" || !local(rel) {
		rel = filepath.Join(sessionID, "subagents", "agent-"+sm.SidechainOf.AgentID+".jsonl")
	}
	if err := w.put(rel, func(out io.Writer) ([]error, error) { return Transcript(sc, src, out) }); err != nil {
		return err
	}
	if m, ok, err := sc.SidechainMeta(); err != nil || ok {
		if err != nil {
			return err
		}
		return w.put(strings.TrimSuffix(rel, ".jsonl")+".meta.json", func(out io.Writer) ([]error, error) {
			_, err := out.Write(m)
			return nil, err
		})
	}
	return nil
}

// local reports whether a recorded relative path stays inside its directory.
func local(rel string) bool {
	return filepath.IsLocal(filepath.FromSlash(rel))
}

// copySourceFile copies one of the files the client kept beside session d.
func copySourceFile(d *inscribe.Doc, rel string) func(io.Writer) ([]error, error) {
	return func(w io.Writer) ([]error, error) {
		f, err := d.OpenSourceFile(rel)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return nil, err
	}
}
