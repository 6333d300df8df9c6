package mcp

import (
	"context"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// Store is the store as the server reads it. The command implements it
// over the store's packages (cmd/scribe/mcpstore.go), as the CLI reads
// them: a session appended since the last call is found by the next.
// Every method reports what the model got wrong, or what is damaged, as
// an error whose text says what to do; the server hands it to the model
// as a tool error.
type Store interface {
	// Resolve finds the document a session argument names: a session
	// id, a unique prefix of one (at least 4 characters), a sidechain's
	// key (<session>/agent-<id>, as search reports it), or the path of a
	// document inside the store.
	Resolve(ref string) (Doc, error)
	// Sessions lists the sessions (not sidechains) f selects, newest
	// first, as scribe list does.
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	// Search runs a search as scribe search does: best first, ranked
	// among the newest max(256, q.Limit) rounds that match; a Limit
	// larger than the hits there are returns them all.
	Search(ctx context.Context, q Query) ([]Hit, error)
	// Rounds reads a round selection ("3", "3-7", "all", "1,4-6") against
	// a document's rounds, as scribe tag and context read it.
	Rounds(d Doc, spec string) ([]int, error)
	// Head reads a document's head.
	Head(d Doc) (Head, error)
	// Table returns a document's table of rounds, in order.
	Table(ctx context.Context, d Doc) ([]Round, error)
	// Read renders rounds of a document (in increasing order) at a
	// detail level, as scribe context shows a round in full, calling
	// yield with each round's text; it stops when yield returns false.
	Read(d Doc, rounds []int, detail document.Detail, yield func(round int, text []byte) bool) error
	// Context returns the context view of a document, as scribe context
	// writes it.
	Context(d Doc, spec ContextSpec) ([]byte, error)
}

// Writer is what the write tools change, through the store: a
// document's head and the engagement tags of its rounds, never a round
// file. The server offers the write tools only with Options.Write.
type Writer interface {
	// SetSummary replaces a document's summary (the store refuses one
	// its parser would not read back).
	SetSummary(d Doc, summary string) (changed bool, err error)
	// SetTitle sets a document's title; "" clears it.
	SetTitle(d Doc, title string) (changed bool, err error)
	// Tag tags rounds with an engagement ("": untags them) and returns
	// how many changed.
	Tag(d Doc, rounds []int, engagement string) (changed int, err error)
}

// Doc is a document of the store, as Resolve found it.
type Doc struct {
	// Key is the session id, or <session>/agent-<id> for a sidechain:
	// what the tools name it by.
	Key string
	// Path is the document's path.
	Path string
	// Rounds is how many rounds it has.
	Rounds int
}

// SessionFilter selects sessions, as scribe list's flags do.
type SessionFilter struct {
	Agent   string // only this agent id
	Project string // only sessions whose project directory contains this
	Since   string // only sessions started at or after this (scribe list --since)
}

// Session is a session as scribe list shows it.
type Session struct {
	Key      string
	Agent    string
	Title    string // its title, else its first prompt
	Project  string
	Started  string
	Ended    string
	Messages int
}

// Query is a search as scribe search takes it, the times as typed.
type Query struct {
	Text                                     string
	Raw                                      bool // Text is FTS5 syntax (scribe search --fts)
	Agent, Project, Since, Until, Engagement string
	In                                       string // the texts to search, as scribe search --in takes them ("" for all)
	Limit                                    int
}

// Hit is one round a search found.
type Hit struct {
	Key        string // the document's key
	Agent      string
	Title      string
	Project    string
	Round      int
	Started    string
	Engagement string
	Snippet    string // the matched words between « and »
	In         string // the text the snippet is from: prompts, replies or tools
}

// Head is what comes before a document's first message.
type Head struct {
	Meta    *session.Meta
	Title   string // the title lists show: its title, else its first prompt
	Summary string
}

// Round is one row of a document's table of rounds.
type Round struct {
	Round      int
	Started    string
	Engagement string
	Tools      int
	User       string // the prompt's first words
	Agent      string // the reply's first words
}

// ContextSpec chooses the rounds of a context view (scribe context's
// flags).
type ContextSpec struct {
	Full, Ref, Omit, Engagement string
	Detail                      document.Detail
}
