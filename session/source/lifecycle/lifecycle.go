// Package lifecycle owns the round lifecycle that every source adapter
// shares, so that an adapter supplies only what its format knows.
//
// A [Builder] is the [source.Builder] of every adapter. It owns a round's
// life: it opens a round at a prompt (the entries before a session's first
// prompt join its first round), adds entries, closes the round at the next
// prompt, at [Builder.Flush] or, left open, at [Builder.Finish]. It keeps
// the round's entries (with RawInSource, where they lie in the source,
// not their bytes), its start time and its tokens; the count of rounds
// and items; the builder's state between runs, as the opaque JSON the store
// persists; the graph nodes of closed rounds, handed to the store's
// [source.Recorder] or kept; and the warnings, each naming the file and
// line.
//
// An adapter implements a [Format], the hooks of its source format, in
// the manner of goldmark's block parsers (the parser owns the lifecycle;
// an extension implements Trigger, Open, Continue and Close):
//
//   - Decode reads one entry into the adapter's own value;
//   - Classify says whether it is a record to itemize, whether it is a
//     prompt, which opens a round, and when it was written;
//   - Open starts an [Itemizer] for a round, from the adapter's state at
//     the last closed round; it itemizes the round's records as they
//     arrive (Add) and hands back the round's items, the state after it,
//     its graph nodes and its tokens (Close);
//   - Finish describes the session from the state after the last round.
//
// An itemizer owns its round's items until it closes, so it may change or
// replace an item it built (a source that writes a message again by id
// replaces it), and its [Context] answers for the nodes of closed rounds
// ([Context.Lookup]) and for the document's branches.
//
// The package also holds the small helpers every itemizer uses: text
// made valid UTF-8, a prompt's first line, a file's name beside the
// document, a session's time span and token counts.
//
// # A source that rewrites its history
//
// Gemini CLI writes a message again by id (an upsert that replaces it),
// drops messages with {"$rewindTo": id} and replaces the whole history
// with {"$set": {"messages": [...]}}. Its Format keeps the ids of the open
// round's messages (a Format value serves one builder), so that Classify
// does not take a prompt written again for a new one. Its itemizer
// replaces the item of a message written again in the open round (Tokens.Set
// replaces its count), and asks [Context.Lookup] about a message of a
// closed round: closed rounds are written once and never change, so what
// revises them is shown in the open round. A rewind makes a fork of the
// item graph: the nodes an itemizer hands back name the parent the source
// gives, and [Context.Branches] finds the fork and the live branch, as
// for Claude Code's rewinds.
//
// # Entries, not lines
//
// The hooks see entries and rounds. [Builder.Add] is the one method that
// knows a source's lines (it makes the entry, with its Offset and Len),
// so a seam that feeds records in another way changes it alone.
package lifecycle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Format is an adapter's source format: the hooks a [Builder] calls. E is
// the adapter's decoded entry, S its state at the end of a round (the
// metadata it has learned, the last item; persisted between runs as JSON,
// so S must marshal to a JSON object).
//
// A Format value serves one builder, and may keep what it learns between
// calls (the ids of the open round's messages, for a source that writes a
// message again by id).
type Format[E, S any] interface {
	// Decode reads one entry of the source. It may warn about it
	// ([Context.Warnf]); bad input is reported, never refused.
	Decode(c *Context, e session.Entry) E
	// Classify says what the lifecycle needs to know of a decoded entry.
	Classify(c *Context, e E) Class
	// Open starts itemizing a round, from st, the state at the end of the
	// last closed round (the zero S for the first).
	Open(c *Context, st S) Itemizer[E, S]
	// Finish describes the session from st, the state after the open
	// round (after the last closed round when none is open): its Meta
	// and FirstPrompt. open holds the open round's nodes, which neither
	// the graph nor the builder holds. The lifecycle sets Open and
	// Meta.Messages.
	Finish(c *Context, st S, open []source.Node) source.Finished
}

// Class is what the lifecycle needs to know of an entry.
type Class struct {
	// Record is false for a line that is no record of the format (blank,
	// or not JSON): it is kept in its round's entries, marked Invalid,
	// and never given to an itemizer.
	Record bool
	// Prompt marks a person's prompt: it opens a round, closing the open
	// round when that round has had its prompt.
	Prompt bool
	// Time is when the entry was written ("" when it does not say). A
	// round starts at its first item's time, or, when it has no item, at
	// the first time its records give.
	Time string
}

// Itemizer itemizes one round as its records arrive. It owns the round's
// items until Close: it may change or replace any of them.
type Itemizer[E, S any] interface {
	// Add itemizes a record of the round. The entry's bytes are valid
	// only during the call (with RawInSource, they are the reader's).
	Add(e E)
	// Close ends the round and returns what it made of it. It is called
	// once: when a prompt closes the round, at Flush, or at Finish, where
	// the round stays open.
	Close() Itemized[S]
}

// Itemized is what an [Itemizer] made of its round.
type Itemized[S any] struct {
	Items []session.Item
	// State is the state at the end of the round.
	State S
	// Nodes are the graph nodes of the round's entries (see
	// [source.Node]).
	Nodes []source.Node
	// Tokens are the tokens the round used, as the source counts them.
	Tokens int64
}

// position is where a source stood at the end of its last closed round:
// the lifecycle's part of the persisted state. Its fields come first in
// the state's JSON, the adapter's after.
type position struct {
	Round    int `json:"round"`     // last closed round (0: none)
	NextLine int `json:"next_line"` // first line of the open round
	Items    int `json:"items"`     // items in closed rounds
	// Forks is the item graph of the closed rounds, as Branches keeps it
	// (nil: not kept; Branches reads the graph).
	Forks *forks `json:"forks,omitempty"`
}

// Context is what a builder's hooks see of it: the document's
// configuration, its warnings, the rounds closed so far and their graph
// nodes. Its zero value is a builder's context before any round, with no
// graph.
type Context struct {
	cfg   source.Config
	pos   position
	graph source.Graph
	rec   source.Recorder // graph, when it records nodes
	// kept holds the nodes of the rounds closed by this builder when no
	// Recorder takes them.
	kept     []source.Node
	warnings []error
	// kinds are the warnings given so far, by kind (warnKind): a kind is
	// one warning, with the count of the lines like it.
	kinds map[string]*warnCount
}

// warnCount is a warning given for several lines.
type warnCount struct {
	first *source.LineError
	msg   string // its message, as first given
	more  int    // lines like it after the first
}

// Config is the configuration of the document being built.
func (c *Context) Config() source.Config { return c.cfg }

// Rounds is the number of rounds closed so far, by this run and the runs
// before it.
func (c *Context) Rounds() int { return c.pos.Round }

// Items is the number of items in the rounds closed so far.
func (c *Context) Items() int { return c.pos.Items }

// Warnf reports a problem with the entry at line; the warning names the
// source file and the line.
//
// A warning of a kind given before (the same message but for the errors
// in it: a line that does not decode, a record of a type scribe does not
// know) is not given again: the first says how many more lines are like
// it, so that a source of a million such lines gives one warning, not a
// million.
func (c *Context) Warnf(line int, format string, args ...any) {
	key := warnKind(format, args)
	if k, ok := c.kinds[key]; ok {
		k.more++
		lines := "lines"
		if k.more == 1 {
			lines = "line"
		}
		k.first.Msg = fmt.Sprintf("%s (and %d more %s like it, the last at line %d)", k.msg, k.more, lines, line)
		return
	}
	e := &source.LineError{File: c.cfg.File, Line: line, Msg: fmt.Sprintf(format, args...)}
	if c.kinds == nil {
		c.kinds = map[string]*warnCount{}
	}
	c.kinds[key] = &warnCount{first: e, msg: e.Msg}
	c.warnings = append(c.warnings, e)
}

// warnKind is the kind of a warning: its format and its arguments but the
// errors, which differ from line to line.
func warnKind(format string, args []any) string {
	key := format
	for _, a := range args {
		if _, isErr := a.(error); !isErr {
			key += "\x00" + fmt.Sprint(a)
		}
	}
	return key
}

// Decoded reports whether an entry decoded as a record of its format,
// err being what its decoder returned, and warns as every adapter does: a
// line that does not decode is kept byte for byte and not shown; one with
// invalid UTF-8 is kept byte for byte and shown with U+FFFD.
func (c *Context) Decoded(e session.Entry, err error) bool {
	if err != nil {
		c.Warnf(e.Line, "not a JSON object (%v): kept in the backing store, not shown", ShortErr(err))
		return false
	}
	if !utf8.Valid(e.Raw) {
		c.Warnf(e.Line, "invalid UTF-8: kept byte for byte in the backing store, shown with U+FFFD")
	}
	return true
}

// Lookup returns the node of an identity in the closed rounds (the last
// recorded, when several rounds recorded it), from the graph of earlier
// runs and the rounds this builder closed. The open round's nodes are its
// itemizer's to look up.
func (c *Context) Lookup(id string) (source.Node, bool) {
	if c.graph != nil {
		if n, ok := c.graph.Lookup(id); ok {
			return n, true
		}
	}
	for i := len(c.kept) - 1; i >= 0; i-- {
		if c.kept[i].UUID == id {
			return c.kept[i], true
		}
	}
	return source.Node{}, false
}

// record takes the nodes of a closed round.
func (c *Context) record(nodes []source.Node) {
	c.follow(nodes)
	if c.rec != nil {
		c.rec.Record(nodes)
		return
	}
	c.kept = append(c.kept, nodes...)
}

// Builder is the [source.Builder] of an adapter's [Format]. Lines go in
// with Add (entries kept by an earlier run with AddEntry); a round comes
// back as soon as the next prompt closes it.
type Builder[E, S any] struct {
	c   Context
	f   Format[E, S]
	st  S      // the adapter's state at the last closed round
	cur *round // the open round (nil before its first entry)
	it  Itemizer[E, S]
}

var _ source.Builder = (*Builder[struct{}, struct{}])(nil)

// round is the lifecycle's part of the open round.
type round struct {
	r        *session.Round
	prompt   bool // the round has had its prompt
	lastLine int
	stamp    string // the first time its records give
}

// New starts a builder of format f for one document, at state (what
// [Builder.State] returned at the end of an earlier run; nil for a new
// document). graph answers for the nodes of the rounds closed by earlier
// runs (it may be nil when state is nil); when it is a [source.Recorder]
// it takes the nodes of each round as the round closes.
func New[E, S any](f Format[E, S], cfg source.Config, state json.RawMessage, graph source.Graph) (*Builder[E, S], error) {
	b := &Builder[E, S]{f: f, c: Context{cfg: cfg, graph: graph}}
	b.c.rec, _ = graph.(source.Recorder)
	if t := bytes.TrimSpace(state); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &b.c.pos); err != nil {
			return nil, fmt.Errorf("%s: the saved builder state is unreadable: %w", cfg.File, err)
		}
		if err := json.Unmarshal(t, &b.st); err != nil {
			return nil, fmt.Errorf("%s: the saved builder state is unreadable: %w", cfg.File, err)
		}
	}
	if b.c.pos.NextLine == 0 {
		b.c.pos.NextLine = 1
	}
	return b, nil
}

// Add feeds one line of the source. It returns the round the line closed,
// if any.
func (b *Builder[E, S]) Add(l source.Line) *session.Round {
	e := session.Entry{Line: l.No, Raw: l.Raw, NoNewline: !l.Terminated, Offset: l.Offset, Len: len(l.Raw)}
	if !b.c.cfg.RawInSource {
		e.Raw = append([]byte(nil), l.Raw...)
	}
	closed := b.add(e)
	if b.c.cfg.RawInSource {
		// The line is itemized: its round keeps where it lies, not the
		// reader's buffer.
		es := b.cur.r.Entries
		es[len(es)-1].Raw = nil
	}
	return closed
}

// AddEntry feeds an entry kept by an earlier run (read back from a round
// file). It returns the round the entry closed, if any.
func (b *Builder[E, S]) AddEntry(e session.Entry) *session.Round { return b.add(e) }

// AddLent is AddEntry of an entry whose bytes are lent for the call
// only: the round keeps the entry without them (source.Lender).
func (b *Builder[E, S]) AddLent(e session.Entry) *session.Round {
	closed := b.add(e)
	es := b.cur.r.Entries
	es[len(es)-1].Raw = nil
	return closed
}

func (b *Builder[E, S]) add(e session.Entry) *session.Round {
	d := b.f.Decode(&b.c, e)
	class := b.f.Classify(&b.c, d)
	var closed *session.Round
	if class.Prompt && b.cur != nil && b.cur.prompt {
		closed = b.close()
	}
	if b.cur == nil {
		b.cur = &round{r: &session.Round{N: b.c.pos.Round + 1}}
		b.it = b.f.Open(&b.c, b.st)
	}
	cur := b.cur
	cur.prompt = cur.prompt || class.Prompt
	if !class.Record {
		e.Invalid = true
	}
	cur.r.Entries = append(cur.r.Entries, e)
	cur.lastLine = e.Line
	if class.Record {
		if cur.stamp == "" {
			cur.stamp = class.Time
		}
		b.it.Add(d)
	}
	return closed
}

// end ends the open round: the round, and what its itemizer made of it.
func (b *Builder[E, S]) end() (*session.Round, Itemized[S]) {
	x := b.it.Close()
	r := b.cur.r
	r.Items = x.Items
	if len(r.Items) > 0 {
		r.Items[0].Round = r.N
		r.Started = r.Items[0].Time
	} else {
		r.Started = b.cur.stamp
	}
	r.TokenCount = x.Tokens
	return r, x
}

// close ends the open round as closed and advances the state.
func (b *Builder[E, S]) close() *session.Round {
	r, x := b.end()
	r.Open = false
	b.st = x.State
	b.c.record(x.Nodes)
	b.c.pos = position{Round: r.N, NextLine: b.cur.lastLine + 1, Items: b.c.pos.Items + len(r.Items), Forks: b.c.pos.Forks}
	b.cur, b.it = nil, nil
	return r
}

// Flush closes the open round, if any, as if a prompt had followed it.
func (b *Builder[E, S]) Flush() *session.Round {
	if b.cur == nil {
		return nil
	}
	return b.close()
}

// Finish returns the open round, which stays open, and what the builder
// learned. The builder's State stays that of the last closed round.
// Nothing may be added after it.
func (b *Builder[E, S]) Finish() source.Finished {
	st, items := b.st, b.c.pos.Items
	var open *session.Round
	var nodes []source.Node
	if b.cur != nil {
		var x Itemized[S]
		open, x = b.end()
		open.Open = true
		st, nodes, items = x.State, x.Nodes, items+len(open.Items)
		b.cur, b.it = nil, nil
	}
	fin := b.f.Finish(&b.c, st, nodes)
	fin.Open = open
	fin.Meta.Messages = items
	return fin
}

// Nodes returns the graph nodes of the rounds this builder closed (none
// when its graph is a source.Recorder, which keeps them instead).
func (b *Builder[E, S]) Nodes() []source.Node { return b.c.kept }

// State returns the state at the last closed round: the lifecycle's
// fields, then the adapter's, in one JSON object.
func (b *Builder[E, S]) State() (json.RawMessage, error) {
	pos, err := json.Marshal(b.c.pos)
	if err != nil {
		return nil, err
	}
	own, err := json.Marshal(b.st)
	if err != nil {
		return nil, err
	}
	if len(own) < 2 || own[0] != '{' {
		return nil, fmt.Errorf("the builder state of %s is not a JSON object", b.c.cfg.File)
	}
	if len(own) == 2 {
		return pos, nil
	}
	out := append(pos[:len(pos)-1], ',')
	return append(out, own[1:]...), nil
}

// Rounds is the number of rounds closed so far, by this run and the runs
// before it.
func (b *Builder[E, S]) Rounds() int { return b.c.pos.Round }

// Warnings returns the problems found in the input so far, each naming
// the file and line. Bad input is kept and reported; it never stops the
// builder.
func (b *Builder[E, S]) Warnings() []error { return b.c.warnings }
