package inscribe

import (
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/session/source"
)

// The store's tests inscribe the sample sessions, Claude Code transcripts
// and Codex rollouts; the store itself knows no source format.
var (
	claudeSrc = claude.New()
	codexSrc  = codex.New()
)

// claudeAt describes the Claude Code transcript at p as session id, kept in
// project directory dir.
func claudeAt(p, id, dir string) source.Session {
	return source.Session{Adapter: claudeSrc, Path: p, ID: id, Dir: dir, Rel: filepath.Base(p), FilesDir: strings.TrimSuffix(p, ".jsonl")}
}
