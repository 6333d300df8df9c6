// Package exportcodex turns a document of the store back into the rollout
// file the OpenAI Codex CLI wrote, one that codex resume accepts.
//
// As with package exportclaude, the export is generated from the store:
// structure and metadata from the round files, which hold every rollout
// line byte for byte; content from the markdown, which is the authority
// for it. A person's edit of a message, a reply, a reasoning summary or a
// tool's input or output is carried into the value it came from (strings
// written as Codex writes them, serde_json's escaping); every other byte is
// kept. An unedited document therefore exports to its rollout, byte for
// byte (a torn last line aside, which is never inscribed). An edit the
// rollout cannot express is reported as a warning and not carried.
package exportcodex

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Warning is an edit in a document that the export could not carry.
type Warning = exportcore.Warning

// Transcript writes the rollout of one document to w. src is the adapter
// of the format the document was inscribed from (its source_format): it
// groups the kept entries into the document's items again, to find the
// person's edits.
//
// The document is read a message at a time, alongside the round files, so
// neither is ever whole in memory.
func Transcript(d *inscribe.Doc, src source.Adapter, w io.Writer) ([]error, error) {
	return exportcore.Transcript(d, src, w, encodeInput)
}

// encodeInput writes an edited tool input back where it lies in the
// rollout, as it is written there: a function call's arguments are a JSON
// document inside a string, a custom tool call's input is a string (shown
// as a JSON string), a local shell call's action is JSON.
func encodeInput(d *session.Block, edited string) ([]byte, string) {
	switch {
	case strings.HasSuffix(d.Origin.Path, ".arguments"):
		return jsonpatch.EncodeString(edited), ""
	case strings.HasSuffix(d.Origin.Path, ".input"):
		var s string
		if json.Unmarshal([]byte(edited), &s) != nil {
			return nil, fmt.Sprintf("the input of tool call %s is not a JSON string: not carried", d.ID)
		}
		return jsonpatch.EncodeString(s), ""
	default:
		if !json.Valid([]byte(edited)) {
			return nil, fmt.Sprintf("the input of tool call %s is not valid JSON: not carried", d.ID)
		}
		return []byte(edited), ""
	}
}

// Options adjust Session.
type Options = exportcore.Options

// File is a file an export wrote or found already right.
type File = exportcore.File

// ExistsError is an existing file that differs from the export.
type ExistsError = exportcore.ExistsError

// datedRollout matches the end of a rollout's path as Codex lays it out:
// YYYY/MM/DD/rollout-<time>-<thread id>.jsonl.
var datedRollout = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|/)([0-9]{4}/[0-9]{2}/[0-9]{2}/rollout-[^/]+\.jsonl)$`)
})

// Rel is where Codex keeps a session's rollout below its sessions folder:
// the last four elements of the recorded source path when they are laid
// out as Codex lays them out (YYYY/MM/DD/rollout-<time>-<id>.jsonl), else
// a path of that shape made from the session's start and id.
func Rel(m *session.Meta) string {
	if g := datedRollout().FindStringSubmatch(filepath.ToSlash(m.Source)); g != nil && filepath.IsLocal(filepath.FromSlash(g[1])) {
		return filepath.FromSlash(g[1])
	}
	started := session.Str(m.Started)
	day, stamp := "1970/01/01", "1970-01-01T00-00-00"
	if len(started) >= 19 {
		day = started[0:4] + "/" + started[5:7] + "/" + started[8:10]
		stamp = strings.ReplaceAll(started[:19], ":", "-")
	}
	return filepath.FromSlash(day + "/rollout-" + stamp + "-" + m.SessionID + ".jsonl")
}

// DefaultDir is where Codex looks for rollouts: $CODEX_HOME/sessions, or
// ~/.codex/sessions.
func DefaultDir() (string, error) { return codex.DefaultSessionsDir() }

// Session exports a session document into sessions folder dir, at
// [Rel]. An existing identical file is left alone; a different one is an
// error unless opts.Force.
func Session(d *inscribe.Doc, src source.Adapter, dir string, opts Options) ([]File, []error, error) {
	meta, err := d.Meta()
	if err != nil {
		return nil, nil, err
	}
	if meta.SidechainOf != nil {
		return nil, nil, fmt.Errorf("%s is a sidechain: export its session, %s", d.Path(), meta.SidechainOf.SessionID)
	}
	target := filepath.Join(dir, Rel(meta))
	f, warnings, err := exportcore.WriteFile(target, opts, func(w io.Writer) ([]error, error) { return Transcript(d, src, w) })
	if err != nil {
		return nil, warnings, err
	}
	return []File{f}, warnings, nil
}
