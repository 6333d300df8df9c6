// Package exportcore is what the exporters (exportclaude, exportcodex) share
// and no source format knows: the same-format export, which carries a
// person's edits of a document back into the source lines it was
// inscribed from; the writing of export files beside their targets; and,
// for the cross-agent exports, the live conversation of a document read as
// canonical items, the deterministic identities an export mints, and the
// account of what an export could not carry ([Losses]).
package exportcore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/internal/room"
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

// InputEncoder encodes a person's edit of a tool call's input (compact
// JSON, as the document shows it) as the value that replaces the input's
// source value, at d.Origin; where that value is and how it is written
// depend on the format. It returns "" and a warning when the edit cannot be
// carried.
type InputEncoder func(d *session.Block, edited string) (value []byte, warning string)

// Transcript writes the source file of one document (a session, or a
// sidechain) to w, as its round files keep it, with the document's edits
// carried into the values they came from. src is the adapter of the format
// the document was inscribed from (its source_format): it groups the kept
// entries into the document's items again, to find the person's edits.
// input encodes an edited tool input.
//
// The document is read a message at a time, alongside the round files, so
// neither is ever whole in memory.
func Transcript(d *inscribe.Doc, src source.Adapter, w io.Writer, input InputEncoder) ([]error, error) {
	md := d.Path()
	items, err := d.Items()
	if err != nil {
		return nil, err
	}
	defer items.Close()
	folder := d.Path() // names the round files in errors
	rounds, err := d.Rounds()
	if err == nil && len(rounds) == 0 {
		if _, ierr := items.Next(); ierr != io.EOF {
			err = errors.New("the folder holds none")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: no round files: %w: the backing store is damaged", md, err)
	}
	x := &exporter{md: md, doc: d, items: items, bw: bufio.NewWriterSize(w, 1<<16), input: input}
	// A long session's closed rounds' nodes are kept in a scratch file,
	// not by the builder.
	graph, graphDone, err := inscribe.BuilderGraph(len(rounds))
	if err != nil {
		return nil, fmt.Errorf("%s: a scratch folder for the session's graph: %w", md, err)
	}
	defer graphDone()
	b, err := src.NewBuilder(d.BuilderConfig(), nil, graph)
	if err != nil {
		return nil, err
	}
	for want, n := range rounds {
		if n != want+1 {
			return x.warnings, fmt.Errorf("%s: round %d is missing (found round %d): the backing store is damaged", folder, want+1, n)
		}
		if err := x.round(d, b, n); err != nil {
			return x.warnings, err
		}
	}
	fin := b.Finish()
	if err := graphDone(); err != nil {
		return x.warnings, fmt.Errorf("%s: the session's graph, kept in a scratch file: %w", md, err)
	}
	if fin.Open != nil {
		if err := x.flush(fin.Open); err != nil {
			return x.warnings, err
		}
	}
	extra := 0
	for {
		it, err := items.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return x.warnings, err
		}
		if !x.wasNote(it) {
			extra++
		}
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

// round adds round n's entries to the builder, writing each round it
// closes. A long entry is lent to the builder and read again from its
// round file when it is written, so that it is not held while the
// document's items are compared.
func (x *exporter) round(d *inscribe.Doc, b source.Builder, n int) error {
	entries, err := d.RoundEntries(n)
	if err != nil {
		return err
	}
	defer entries.Close()
	lender, _ := b.(source.Lender)
	for {
		re, at, err := entries.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		room.Make(int(at.Len)) // the step before left its copies of a long text as garbage
		raw, err := re.Bytes()
		if err != nil {
			return fmt.Errorf("%s: round %d: %w", d.Path(), n, err)
		}
		e := session.Entry{Line: re.Line, Raw: raw, NoNewline: re.NoNewline}
		var r *session.Round
		lent := lender != nil && at.Len >= longEntry
		if lent {
			r = lender.AddLent(e)
		} else {
			r = b.AddEntry(e)
		}
		if r != nil {
			if err := x.flush(r); err != nil {
				return err
			}
		}
		p := pending{Entry: e}
		if lent {
			p.Raw, p.at = nil, at
			x.lent = max(x.lent, at.Len)
		}
		x.pending = append(x.pending, p)
	}
}

// longEntry is the size from which an entry is lent to the builder.
const longEntry = 1 << 20

// pending is an entry of the round being built: its bytes, or where they
// lie in a round file.
type pending struct {
	session.Entry
	at inscribe.EntryAt
}

type exporter struct {
	md       string
	doc      *inscribe.Doc
	items    *document.ItemReader // the document's items, from the next one to compare
	bw       *bufio.Writer
	input    InputEncoder
	pending  []pending // entries of the round being built
	lent     int64     // the longest entry lent since the last round written
	warnings []error
	// notes are the entries shown as notes so far: a document written
	// before notes has them as messages of their own.
	notes map[string]bool
}

func (x *exporter) warn(item, msg string) {
	x.warnings = append(x.warnings, &Warning{Doc: x.md, Item: item, Msg: msg})
}

// flush compares a round's items with the document's, patches its entries
// with the document's edits, and writes them. The round's entries are those
// pending, except the one that opened the next round (still being added).
func (x *exporter) flush(r *session.Round) error {
	patches := map[int][]patch{}
	x.noteEntries(r.Items)
	// The lent entries' bytes are garbage, the builder's texts of them
	// not: the document's texts come next.
	room.Make(int(x.lent))
	x.lent = 0
	for i := range r.Items {
		derived := &r.Items[i]
		edited, err := x.items.Next()
		// A document written before the client's bookkeeping became notes
		// holds such an entry as a message of its own: it has nothing to
		// carry.
		for err == nil && edited != nil && x.wasNote(edited) && edited.IDs[0] != derived.IDs[0] {
			edited, err = x.items.Next()
		}
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
		if raw == nil && e.at.Len > 0 {
			if len(patches[e.Line]) == 0 {
				if err := x.bw.Flush(); err != nil {
					return err
				}
				if err := x.doc.CopyEntry(x.bw, e.at); err != nil {
					return err
				}
				if !e.NoNewline {
					x.bw.WriteByte('\n')
				}
				continue
			}
			var err error
			if raw, err = x.doc.ReadEntry(e.at); err != nil {
				return err
			}
		}
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
	// Notes carry nothing a person edits; a document written before they
	// existed lacks them.
	d, e := *derived, *edited
	d.Blocks, e.Blocks = withoutNotes(d.Blocks), withoutNotes(e.Blocks)
	derived, edited = &d, &e
	if !slices.Equal(derived.IDs, edited.IDs) {
		x.warn(id, fmt.Sprintf("the document has message %v here: messages were reordered or changed by hand; exported from the round files", edited.IDs))
		return
	}
	if derived.Time != edited.Time || derived.Role != edited.Role || derived.Note != edited.Note || derived.Parent != edited.Parent || derived.Round != edited.Round {
		x.warn(id, "its heading or identity was edited: not carried (timestamps, roles and links come from the round files)")
	}
	if len(derived.Blocks) != len(edited.Blocks) {
		x.warn(id, fmt.Sprintf("has %s in the round files and %d in the document: blocks added or removed by hand are not exported", Amount(len(derived.Blocks), "blocks"), len(edited.Blocks)))
		return
	}
	for j := range derived.Blocks {
		d, e := &derived.Blocks[j], &edited.Blocks[j]
		if d.Kind != e.Kind {
			x.warn(id, fmt.Sprintf("block %d is a %s in the round files and a %s in the document: not carried", j+1, d.Kind, e.Kind))
			continue
		}
		x.compareText(id, d.Kind, d.Text, e.Text, d.Origin, patches)
		if d.Kind == session.KindToolUse && document.Shown(d.Input) != e.Input {
			if d.Origin == nil {
				x.warn(id, fmt.Sprintf("an edit of the input of tool call %s cannot be carried (it has no single source value)", d.ID))
			} else if value, w := x.input(d, e.Input); w != "" {
				x.warn(id, w)
			} else {
				x.add(id, d.Origin, value, patches)
			}
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

// compareText records an edit of a text value.
func (x *exporter) compareText(id string, kind session.BlockKind, derived, edited string, o *session.Origin, patches map[int][]patch) {
	if document.Shown(derived) == edited {
		// Unedited: invalid UTF-8 in the source shows as U+FFFD in the
		// document, and is exported from the round files as it was.
		return
	}
	if o == nil {
		x.warn(id, fmt.Sprintf("an edit of a %s block cannot be carried (it has no single source value)", kind))
		return
	}
	value := jsonpatch.EncodeString(edited)
	if kind == session.KindRaw {
		// A raw block is JSON as recorded: the edit replaces it whole.
		if !jsonValid(edited) {
			x.warn(id, "an edited raw block is not valid JSON: not carried")
			return
		}
		value = []byte(edited)
	}
	x.add(id, o, value, patches)
}

func (x *exporter) add(id string, o *session.Origin, value []byte, patches map[int][]patch) {
	patches[o.Line] = append(patches[o.Line], patch{item: id, path: o.Path, value: value})
}

// noteEntries records the entries a round's items show as notes.
func (x *exporter) noteEntries(items []session.Item) {
	for _, it := range items {
		for _, b := range it.Blocks {
			if b.Kind == session.KindNote && b.Entry != "" {
				if x.notes == nil {
					x.notes = map[string]bool{}
				}
				x.notes[b.Entry] = true
			}
		}
	}
}

// wasNote reports whether an item of the document is an entry the round
// files now show as a note (in this round or an earlier one).
func (x *exporter) wasNote(it *session.Item) bool {
	return len(it.IDs) > 0 && x.notes[it.IDs[0]]
}

func withoutNotes(bs []session.Block) []session.Block {
	out := bs[:0:0]
	for _, b := range bs {
		if b.Kind != session.KindNote {
			out = append(out, b)
		}
	}
	return out
}
