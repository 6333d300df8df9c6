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
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Warning is an edit in a document that the export could not carry.
type Warning struct {
	Doc  string // the document
	Item string // the item's identity, when the edit is in one
	Msg  string
}

func (w *Warning) Error() string {
	if w.Item != "" {
		return fmt.Sprintf("%s: message %s: %s", w.Doc, w.Item, w.Msg)
	}
	return fmt.Sprintf("%s: %s", w.Doc, w.Msg)
}

// Transcript writes the rollout of one document to w. src is the adapter of the format the document was
// inscribed from (its source_format): it groups the kept entries into the
// document's items again, to find the person's edits.
//
// The document is read a message at a time, alongside the round files, so
// neither is ever whole in memory.
func Transcript(md string, src source.Adapter, w io.Writer) ([]error, error) {
	items, err := document.OpenItems(md)
	if err != nil {
		return nil, err
	}
	defer items.Close()
	folder := inscribe.Folder(md)
	rounds, err := inscribe.RoundNumbers(inscribe.RoundsDir(folder))
	if err == nil && len(rounds) == 0 {
		if _, ierr := items.Next(); ierr != io.EOF {
			err = errors.New("the folder holds none")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: no round files: %w: the backing store is damaged", md, err)
	}
	x := &exporter{md: md, items: items, bw: bufio.NewWriterSize(w, 1<<16)}
	base := strings.TrimSuffix(filepath.Base(md), ".md")
	b, err := src.NewBuilder(source.Config{File: md, DocBase: base, Sidechain: items.Meta.SidechainOf != nil}, nil, nil)
	if err != nil {
		return nil, err
	}
	for want, n := range rounds {
		if n != want+1 {
			return x.warnings, fmt.Errorf("%s: round %d is missing (found round %d): the backing store is damaged", folder, want+1, n)
		}
		rf, err := inscribe.ReadRound(filepath.Join(inscribe.RoundsDir(folder), fmt.Sprintf("%03d.json", n)))
		if err != nil {
			return x.warnings, err
		}
		for _, re := range rf.Entries {
			raw, err := re.Bytes()
			if err != nil {
				return x.warnings, fmt.Errorf("%s: round %d: %w", folder, n, err)
			}
			e := session.Entry{Line: re.Line, Raw: raw, NoNewline: re.NoNewline}
			if r := b.AddEntry(e); r != nil {
				if err := x.flush(r); err != nil {
					return x.warnings, err
				}
			}
			x.pending = append(x.pending, e)
		}
	}
	if fin := b.Finish(); fin.Open != nil {
		if err := x.flush(fin.Open); err != nil {
			return x.warnings, err
		}
	}
	extra := 0
	for {
		_, err := items.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return x.warnings, err
		}
		extra++
	}
	if extra > 0 {
		what := "1 message at the end of the document has"
		if extra > 1 {
			what = fmt.Sprintf("%d messages at the end of the document have", extra)
		}
		x.warn("", what+" no source entries (added by hand?): not exported")
	}
	return x.warnings, x.bw.Flush()
}

type exporter struct {
	md       string
	items    *document.ItemReader // the document's items, from the next one to compare
	bw       *bufio.Writer
	pending  []session.Entry // entries of the round being built
	warnings []error
}

func (x *exporter) warn(item, msg string) {
	x.warnings = append(x.warnings, &Warning{Doc: x.md, Item: item, Msg: msg})
}

// flush compares a round's items with the document's, patches its entries
// with the document's edits, and writes them. The round's entries are those
// pending, except the one that opened the next round (still being added).
func (x *exporter) flush(r *session.Round) error {
	patches := map[int][]patch{}
	for i := range r.Items {
		derived := &r.Items[i]
		edited, err := x.items.Next()
		if err != nil && err != io.EOF {
			return err
		}
		if edited == nil {
			x.warn(derived.IDs[0], "missing from the document (deleted by hand?): exported from the round files")
			continue
		}
		x.compare(derived, edited, patches)
	}
	n := len(r.Entries)
	for _, e := range x.pending[:n] {
		raw := e.Raw
		for _, p := range patches[e.Line] {
			out, err := jsonpatch.Patch(raw, p.path, p.value)
			if err != nil {
				x.warn(p.item, fmt.Sprintf("edit not carried: %v", err))
				continue
			}
			raw = out
		}
		x.bw.Write(raw)
		if !e.NoNewline {
			x.bw.WriteByte('\n')
		}
	}
	x.pending = append(x.pending[:0], x.pending[n:]...)
	return nil
}

type patch struct {
	item, path string
	value      []byte
}

// compare finds the document's edits of one item and records them as
// patches of the entries they came from.
func (x *exporter) compare(derived, edited *session.Item, patches map[int][]patch) {
	id := derived.IDs[0]
	if !equalStrings(derived.IDs, edited.IDs) {
		x.warn(id, fmt.Sprintf("the document has message %v here: messages were reordered or changed by hand; exported from the round files", edited.IDs))
		return
	}
	if derived.Time != edited.Time || derived.Role != edited.Role || derived.Note != edited.Note || derived.Parent != edited.Parent || derived.Round != edited.Round {
		x.warn(id, "its heading or identity was edited: not carried (timestamps, roles and links come from the round files)")
	}
	if len(derived.Blocks) != len(edited.Blocks) {
		x.warn(id, fmt.Sprintf("has %s in the round files and %d in the document: blocks added or removed by hand are not exported", blocks(len(derived.Blocks)), len(edited.Blocks)))
		return
	}
	for j := range derived.Blocks {
		d, e := &derived.Blocks[j], &edited.Blocks[j]
		if d.Kind != e.Kind {
			x.warn(id, fmt.Sprintf("block %d is a %s in the round files and a %s in the document: not carried", j+1, d.Kind, e.Kind))
			continue
		}
		x.compareText(id, d.Kind, d.Text, e.Text, d.Origin, patches)
		if d.Kind == session.KindToolUse && d.Input != e.Input {
			x.compareInput(id, d, e.Input, patches)
		}
		if d.Label != e.Label || d.ID != e.ID || d.Entry != e.Entry || d.Time != e.Time || d.Sidechain != e.Sidechain {
			x.warn(id, fmt.Sprintf("block %d: its name, identity or time was edited: not carried", j+1))
		}
		if (d.Result == nil) != (e.Result == nil) {
			x.warn(id, fmt.Sprintf("block %d: a tool result was added or removed by hand: not carried", j+1))
			continue
		}
		if d.Result != nil {
			if len(d.Result.Parts) != len(e.Result.Parts) || d.Result.Error != e.Result.Error {
				x.warn(id, fmt.Sprintf("block %d: the tool result's parts or error flag were edited: not carried", j+1))
				continue
			}
			for k := range d.Result.Parts {
				dp, ep := &d.Result.Parts[k], &e.Result.Parts[k]
				x.compareText(id, dp.Kind, dp.Text, ep.Text, dp.Origin, patches)
			}
		}
	}
}

// compareInput records an edit of a tool call's input. Where it lies in
// the rollout says how it is written back: a function call's arguments are
// a JSON document inside a string, a custom tool call's input is a string
// (shown as a JSON string), a local shell call's action is JSON.
func (x *exporter) compareInput(id string, d *session.Block, edited string, patches map[int][]patch) {
	if d.Origin == nil {
		x.warn(id, fmt.Sprintf("an edit of the input of tool call %s cannot be carried (it has no single source value)", d.ID))
		return
	}
	var value []byte
	switch {
	case strings.HasSuffix(d.Origin.Path, ".arguments"):
		value = jsonpatch.EncodeString(edited)
	case strings.HasSuffix(d.Origin.Path, ".input"):
		var s string
		if json.Unmarshal([]byte(edited), &s) != nil {
			x.warn(id, fmt.Sprintf("the input of tool call %s is not a JSON string: not carried", d.ID))
			return
		}
		value = jsonpatch.EncodeString(s)
	default:
		if !json.Valid([]byte(edited)) {
			x.warn(id, fmt.Sprintf("the input of tool call %s is not valid JSON: not carried", d.ID))
			return
		}
		value = []byte(edited)
	}
	x.add(id, d.Origin, value, patches)
}

// compareText records an edit of a text value.
func (x *exporter) compareText(id string, kind session.BlockKind, derived, edited string, o *session.Origin, patches map[int][]patch) {
	if derived == edited {
		return
	}
	if o == nil {
		x.warn(id, fmt.Sprintf("an edit of a %s block cannot be carried (it has no single source value)", kind))
		return
	}
	value := jsonpatch.EncodeString(edited)
	if kind == session.KindRaw {
		// A raw block is JSON as recorded: the edit replaces it whole.
		if !json.Valid([]byte(edited)) {
			x.warn(id, "an edited raw block is not valid JSON: not carried")
			return
		}
		value = []byte(edited)
	}
	x.add(id, o, value, patches)
}

func (x *exporter) add(id string, o *session.Origin, value []byte, patches map[int][]patch) {
	if o == nil {
		x.warn(id, "edit not carried: no source location")
		return
	}
	patches[o.Line] = append(patches[o.Line], patch{item: id, path: o.Path, value: value})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Options adjust Session.
type Options struct {
	// Force replaces an existing file that differs from the export.
	Force bool
}

// File is a file an export wrote or found already right.
type File struct {
	Path    string
	Written bool // false: an identical file was already there
}

// ExistsError is an existing file that differs from the export.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s exists and differs from the export: not overwritten", e.Path)
}

// datedRollout matches the end of a rollout's path as Codex lays it out:
// YYYY/MM/DD/rollout-<time>-<thread id>.jsonl.
var datedRollout = regexp.MustCompile(`(?:^|/)([0-9]{4}/[0-9]{2}/[0-9]{2}/rollout-[^/]+\.jsonl)$`)

// Rel is where Codex keeps a session's rollout below its sessions folder:
// the last four elements of the recorded source path when they are laid
// out as Codex lays them out (YYYY/MM/DD/rollout-<time>-<id>.jsonl), else
// a path of that shape made from the session's start and id.
func Rel(m *session.Meta) string {
	if g := datedRollout.FindStringSubmatch(filepath.ToSlash(m.Source)); g != nil && filepath.IsLocal(filepath.FromSlash(g[1])) {
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
func Session(md string, src source.Adapter, dir string, opts Options) ([]File, []error, error) {
	meta, err := document.ReadMeta(md)
	if err != nil {
		return nil, nil, err
	}
	if meta.SidechainOf != nil {
		return nil, nil, fmt.Errorf("%s is a sidechain: export its session, %s", md, meta.SidechainOf.SessionID)
	}
	target := filepath.Join(dir, Rel(meta))
	f, warnings, err := writeFile(target, opts, func(w io.Writer) ([]error, error) { return Transcript(md, src, w) })
	if err != nil {
		return nil, warnings, err
	}
	return []File{f}, warnings, nil
}

// writeFile generates a file beside its target, then keeps the existing
// target if it is identical, replaces it if allowed, or reports it.
func writeFile(target string, opts Options, gen func(io.Writer) ([]error, error)) (File, []error, error) {
	if err := atomicfile.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return File{}, nil, err
	}
	p, err := atomicfile.Create(target)
	if err != nil {
		return File{}, nil, err
	}
	defer p.Abort()
	warnings, err := gen(p)
	if err != nil {
		return File{}, warnings, err
	}
	if _, err := os.Stat(target); err == nil {
		same, err := p.Same()
		if err != nil {
			return File{}, warnings, err
		}
		if same {
			return File{Path: target}, warnings, nil
		}
		if !opts.Force {
			return File{}, warnings, &ExistsError{Path: target}
		}
	}
	if err := p.Commit(0o600); err != nil {
		return File{}, warnings, err
	}
	return File{Path: target, Written: true}, warnings, nil
}

// blocks says how many blocks there are, in words.
func blocks(n int) string {
	if n == 1 {
		return "1 block"
	}
	return fmt.Sprintf("%d blocks", n)
}
