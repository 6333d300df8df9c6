package exportclaude

import (
	"path/filepath"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session/source"
)

// lone exports the sidechains of a session whose own transcript was
// never inscribed (md, its document, does not exist: only its subagents'
// transcripts were found): each goes where the client kept it, relative to
// the project directory dir (<session>/subagents/agent-<id>.jsonl, or
// agent-<id>.jsonl beside the session for clients before 2.1), with its
// .meta.json.
func lone(md string, src source.Adapter, dir string, opts Options) ([]File, []error, error) {
	id := filepath.Base(inscribe.Folder(md))
	w := &sessionWriter{dir: dir, opts: opts}
	for _, sc := range inscribe.FiledSidechains(md) {
		if err := w.sidechain(filepath.Join(filepath.Dir(md), filepath.FromSlash(sc.Path)), id, src); err != nil {
			return w.files, w.warnings, err
		}
	}
	return w.files, w.warnings, nil
}
