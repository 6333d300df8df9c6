// Package source is the seam between the formats agents write and scribe's
// store: what a source adapter (package adapters/claude, adapters/codex)
// implements, and the plain values that cross the seam.
//
// An adapter knows one client's files: where the client keeps them
// ([Adapter.DefaultDir]), how to recognise and find them ([Adapter.Detect],
// [Adapter.Discover]), and how to turn their lines into canonical rounds and
// items ([Builder]). The store knows none of that. It reads a source as JSON
// lines ([LineReader]) from a saved position, hands each line to the
// adapter's builder, writes the rounds it gets back, and keeps the builder's
// state between runs as opaque bytes ([Builder.State]), so an append costs
// what is new in the source and never what is old.
//
// Every adapter's builder is the Builder of package
// session/source/lifecycle, which owns the rounds' lifecycle: an adapter
// supplies how its entries decode, which open a round, and how a round's
// entries become items.
//
// Adding a source format means writing an adapter and registering it in
// cmd/scribe; nothing on the store side changes.
package source

import (
	"encoding/json"
	"io"

	"github.com/scribe-archive/scribe/session"
)

// Adapter is one source format.
//
// An Adapter is a value that may be shared by goroutines: its methods may
// be called concurrently.
type Adapter interface {
	// Format names the source format, as documents record it in their
	// source_format field: "claude-code-jsonl", "codex-rollout".
	Format() string
	// Agent is the agent id its sessions are filed under when no role
	// claims them ("claude"), and AgentName the name documents show
	// ("Claude").
	Agent() string
	AgentName() string
	// DefaultDir is where the client keeps its sessions on this machine
	// (it need not exist).
	DefaultDir() (string, error)
	// Detect reports whether path is a source of this format: a session
	// file (recognised by its content, not only its name), or a directory
	// laid out as the client lays out its sessions.
	Detect(path string) bool
	// Sniff reports whether the bytes r gives are the start of a session
	// file of this format, as Detect recognises a file by its content
	// (a store's round files give them back).
	Sniff(r io.Reader) bool
	// Discover finds the sessions at path: one session file, or every
	// session under a directory.
	Discover(path string) ([]Session, error)
	// Identify reads the start of a session file for what the roles
	// registry matches on.
	Identify(path string) Identity
	// ForkOrigin returns the id of the session s was forked from, or ""
	// when it is not a fork (or its origin cannot be told).
	ForkOrigin(s Session) string
	// NewBuilder starts a builder for one document. state is what
	// [Builder.State] returned at the end of an earlier run (nil for a
	// new document); graph answers for the items of the rounds that run
	// closed (nil when state is nil).
	NewBuilder(cfg Config, state json.RawMessage, graph Graph) (Builder, error)
}

// Identity is what the roles registry matches a session on.
type Identity struct {
	// Name is the name the person gave the agent, if the client records
	// one (claude -n).
	Name string
	// Project is the session's working directory.
	Project string
}

// Session is one session found in a source: its file, and what the client
// keeps beside it.
type Session struct {
	Adapter Adapter
	// Path is the session file. It is "" when only sidechains of the
	// session were found (the session file is not where they are).
	Path string
	// ID is the session id, the name of its document.
	ID string
	// Dir is the folder the client kept the session in, and Rel the
	// session file's path relative to it: an exporter writes the session
	// back at Rel under the folder it is given.
	Dir, Rel string
	// FilesDir is a folder of files the client keeps for this session (a
	// large tool output), and Files their paths relative to it, with
	// slashes. The store keeps them byte for byte.
	FilesDir string
	Files    []string
	// Sidechains are transcripts of subagents the session started, each a
	// document of its own.
	Sidechains []Sidechain
}

// Sidechain is a subagent's transcript.
type Sidechain struct {
	Path string
	// ID names the subagent; its document is agent-<ID>.md in the folder of
	// the session's document.
	ID string
	// Rel is the file's path relative to the session's Dir.
	Rel string
	// MetaFile is a file the client writes about the subagent, kept beside
	// its document as meta.json ("" when there is none).
	MetaFile string
	// ToolUseID is the call that started the subagent, and Description what
	// it was asked to do, when the client records them.
	ToolUseID, Description string
}

// Config is what a builder needs to know about its document.
type Config struct {
	// File names the source in warnings.
	File string
	// FilePath is where a file the document shows (an image, a PDF) lies,
	// relative to the document's directory, given the name the builder
	// gives it (the hash of its bytes and an extension). The store
	// decides; nil when the caller keeps no files (a scan).
	FilePath func(name string) string
	// SidechainPath is where the document of a subagent the session
	// started lies, relative to this document's directory. The store
	// decides; nil when the caller links no sidechains.
	SidechainPath func(agentID string) string
	// Sidechain is set for a subagent's transcript.
	Sidechain bool
	// RawInSource leaves the lines' bytes in the source: the entries of
	// the rounds the builder returns have no Raw, only Offset and Len, and
	// the caller reads them back. A long round is then not held in memory.
	RawInSource bool
}

// FileOf is where the file name lies (FilePath), or name itself when the
// caller keeps no files.
func (c Config) FileOf(name string) string {
	if c.FilePath == nil {
		return name
	}
	return c.FilePath(name)
}

// Builder turns the lines of one source file into rounds.
//
// Lines go in with Add; a round comes back as soon as the next prompt
// closes it. Finish returns the last round, which stays open: a live
// session may still add to it. The builder's State at the last closed round
// is all a later run needs to continue from the open round's first line.
type Builder interface {
	// Add feeds one line and returns the round it closed, if any.
	Add(l Line) *session.Round
	// AddEntry feeds an entry kept by an earlier run (read back from a
	// round file) and returns the round it closed, if any.
	AddEntry(e session.Entry) *session.Round
	// Flush closes the current round, if any, as if a prompt followed it.
	Flush() *session.Round
	// Finish returns the open round and what the builder learned. Nothing
	// may be added after it.
	Finish() Finished
	// Nodes returns the graph nodes of the rounds this builder closed,
	// but for those it handed to its graph's Recorder.
	Nodes() []Node
	// State is the builder's state at the last closed round, to be given
	// back to NewBuilder by a later run. Its bytes are the adapter's own.
	State() (json.RawMessage, error)
	// Rounds is the number of rounds closed so far, by this run and the
	// runs before it.
	Rounds() int
	// Warnings returns the problems found in the input so far, each a
	// *LineError where it concerns a line. Bad input is kept and reported;
	// it never stops the builder.
	Warnings() []error
}

// A Lender is a Builder that can be lent an entry's bytes: AddLent is
// AddEntry for bytes valid only during the call, which the round it
// returns does not hold (its entry has no Raw). An export of a 100 MB
// line then writes the line from where it read it, not from memory.
type Lender interface {
	AddLent(e session.Entry) *session.Round
}

// Finished is what a builder knows at the end of its input.
type Finished struct {
	// Open is the last round, which stays open (nil when there is none).
	Open *session.Round
	// Meta is the session's metadata, as far as the builder can tell.
	Meta session.Meta
	// FirstPrompt is the first line of the session's first prompt.
	FirstPrompt string
}

// Node records where one entry identity shows in the document: Anchor is
// the first ID of the item that shows it (or that it descends from, for an
// entry that is not shown). For the first entry of an item (UUID ==
// Anchor), Parent is the anchor of the item it continues, "" for a root.
type Node struct {
	UUID   string
	Anchor string
	Parent string
}

// IsItem reports whether the node starts an item.
func (n Node) IsItem() bool { return n.UUID == n.Anchor }

// Graph looks up nodes recorded by earlier runs; the store keeps them.
type Graph interface {
	// Lookup returns the node of an identity, if recorded.
	Lookup(uuid string) (Node, bool)
	// Items returns the nodes of all items, in document order.
	Items() []Node
}

// Recorder is a Graph that also keeps the nodes of the rounds a builder
// closes: a builder given one hands it each round's nodes as the round
// closes (Record) and keeps none itself, so that neither holds the nodes
// of a whole session (a 300 MB session has hundreds of thousands). From
// then on Lookup answers for them too (the last recorded node of an
// identity, after any of earlier runs), and Items lists them.
type Recorder interface {
	Graph
	Record(nodes []Node)
}
