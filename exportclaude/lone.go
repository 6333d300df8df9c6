package exportclaude

import (
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session/source"
)

// lone exports the sidechains of a session whose own transcript was
// never inscribed (d, its document, does not exist: only its subagents'
// transcripts were found): each goes where the client kept it, relative to
// the project directory dir (<session>/subagents/agent-<id>.jsonl, or
// agent-<id>.jsonl beside the session for clients before 2.1), with its
// .meta.json.
func lone(d *inscribe.Doc, subs []*inscribe.Doc, src source.Adapter, dir string, opts Options) ([]File, []error, error) {
	w := &sessionWriter{dir: dir, opts: opts}
	for _, sc := range subs {
		if err := w.sidechain(sc, d.SessionID(), src); err != nil {
			return w.files, w.warnings, err
		}
	}
	return w.files, w.warnings, nil
}
