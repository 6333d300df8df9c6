// Package mcp is scribe's Model Context Protocol server (`scribe mcp`):
// tools through which an agent searches the archive of sessions and reads
// what it finds, as a model reads, a bounded result at a time. It is the
// only importer of the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// # Tools
//
//	search         {query, fts, agent, project, since, until, engagement, limit, cursor, max_bytes}
//	list_sessions  {agent, project, since, limit, cursor, max_bytes}
//	get_session    {session, cursor, max_bytes}
//	read_rounds    {session, rounds, detail, cursor, max_bytes}
//	context        {session, full, ref, omit, engagement, detail, cursor, max_bytes}
//
// and, with [Options.Write], set_summary {session, summary}, set_title
// {session, title} and tag_rounds {session, rounds, engagement}. Their
// names and the arguments named in issue 29 are fixed: clients and
// scripts rely on them. search, list_sessions and get_session answer JSON;
// read_rounds and context answer markdown. A session argument is what the
// command line takes (an id, a unique prefix, a document's path) or a
// sidechain's key as search reports it.
//
// # Budgets and cursors
//
// Every result fits its budget in bytes (max_bytes, DefaultBudget when not
// given), errors included. A list that does not fit ends with a
// next_cursor; a round or a view that does not fit is cut, preferably at a
// line's end, and ends with a line naming the cursor that continues it.
// Paging search reaches every round that matches: the first pages rank
// the newest 256 matches, as scribe search does, and each later window
// (twice as many of the newest) adds the matches the earlier ones did not
// hold, ranked among themselves.
//
// # Resources
//
// scribe://session/{session} is get_session's answer, and
// scribe://session/{session}/round/{round} the round in full, within
// DefaultBudget.
//
// # Transports and safety
//
// The server runs on stdio (what Claude Code, Codex and Gemini CLI start)
// and on streamable HTTP ([Server.Handler]), which answers only requests
// addressed to a loopback host (the Host header) and not sent by a web
// page of another origin (the Origin header), so that a web page cannot
// reach it through DNS rebinding. Without [Options.Write] no tool writes;
// a bad argument, an unknown session or a damaged store is a tool error
// the model reads, and a panic in a tool is one too, never the server's
// end.
package mcp

import (
	"context"
	"fmt"
	"io"
	"log"
	"runtime/debug"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options tunes a server.
type Options struct {
	// Write offers the write tools; the store must then implement
	// Writer.
	Write bool
	// Version is scribe's version, which the server reports.
	Version string
	// Logf reports what the model is not told (default: the log package).
	Logf func(format string, args ...any)
}

// Server is scribe's MCP server over a store.
type Server struct {
	store  Store
	writer Writer // nil: no write tools
	opts   Options
	srv    *sdk.Server
}

// New returns a server over store. With opts.Write, store must implement
// Writer.
func New(store Store, opts Options) (*Server, error) {
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	s := &Server{store: store, opts: opts}
	if opts.Write {
		w, ok := store.(Writer)
		if !ok {
			return nil, fmt.Errorf("the store cannot be written to: %T is not a Writer", store)
		}
		s.writer = w
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "scribe", Title: "scribe: the archive of agent sessions", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions(opts.Write),
			// Tools and resources only: the server logs to stderr, not
			// to the client.
			Capabilities: &sdk.ServerCapabilities{}})
	s.addTools()
	s.addResources()
	return s, nil
}

// ServeStdio serves one client over r and w (a client that started the
// command: its stdin and stdout) until the client goes or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// instructions tell a model when to use the server and how to page.
func instructions(write bool) string {
	s := `scribe is an archive of past AI-agent sessions (Claude Code, Codex, ...): every prompt, reply, tool call and its result, per session and round (a round is a prompt and everything the agent did for it).

Search it when the user refers to earlier work ("we fixed this before", "what did we decide about X", "the session where ..."), when an error or a task looks familiar, and before redoing work that may have been done. search takes words as typed (file names, error messages, identifiers) and filters (agent, project, since, until, engagement); each hit names a session and a round.

Then orient before reading: get_session gives a session's head and its table of rounds; read_rounds reads chosen rounds ("3", "3-7", "1,4-6", "all") at detail conversation (prompts, replies, one line per tool call), full (tool results and thinking too) or prompts; context gives a successor's view of a whole session: chosen rounds in full, the others as one-line references. list_sessions lists the newest sessions.

Every result is bounded (max_bytes, 20000 bytes by default). A result that did not fit ends with a next_cursor (JSON) or a "[more: ... cursor ...]" line (markdown): call the same tool with the same arguments and that cursor to read on.`
	if write {
		s += `

Write tools (this server was started with --write): set_summary and set_title describe a session in its document's head (a summary a person or agent writes is kept by every later append); tag_rounds tags rounds with an engagement.`
	}
	return s
}

// panicText is a panic in a tool, as the model is told of it.
func panicText(r any) string {
	return fmt.Sprintf("internal error (a bug in scribe; please report it): panic: %v", r)
}

// logPanic reports a panic's stack where the model does not see it.
func (s *Server) logPanic(what string, r any) {
	s.opts.Logf("%s: panic: %v\n%s", what, r, debug.Stack())
}
