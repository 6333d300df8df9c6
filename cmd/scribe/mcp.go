package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/serve/guard"
	"github.com/scribe-archive/scribe/serve/mcp"
)

type mcpOptions struct {
	write bool
	http  string
}

func newMCPCmd(e *env) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp [--write] [--http 127.0.0.1:PORT]",
		Short: "Serve the archive to agents over the Model Context Protocol",
		Long: `mcp serves the store to AI agents as a Model Context Protocol server: tools
to search every round (search), list the sessions (list_sessions), orient in
a session (get_session), read chosen rounds (read_rounds) and view a session
for a successor (context), with results bounded in bytes and cursors to read
on. It reads the store as it is at each call, so a session appended
meanwhile is found by the next.

By default it speaks on stdin and stdout, as Claude Code, Codex and Gemini
CLI start a local server (claude mcp add scribe -- scribe mcp). With --http
it serves streamable HTTP at http://ADDR/mcp instead, on a loopback address
only, and refuses requests addressed to another host or sent by a web page
of another origin.

It writes nothing unless --write, which adds set_summary, set_title and
tag_rounds: they change a document's head and its tags through the store,
never a round file. Messages go to stderr; stdout is the protocol's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.Context(), e, o)
		},
	}
	cmd.Flags().BoolVar(&o.write, "write", false, "offer the write tools (set_summary, set_title, tag_rounds)")
	cmd.Flags().StringVar(&o.http, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:7421) instead of stdio")
	return cmd
}

func runMCP(ctx context.Context, e *env, o mcpOptions) error {
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	defer store.CloseIndex()
	root, _, err := e.storeRoot()
	if err != nil {
		return err
	}
	logger := log.New(e.stderr, "scribe: ", 0)
	srv, err := mcp.New(&mcpStore{e: e, store: store, root: root}, mcp.Options{Write: o.write, Version: version(), Logf: logger.Printf})
	if err != nil {
		return err
	}
	if o.http == "" {
		err := srv.ServeStdio(ctx, e.stdin, e.stdout)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	notLoopback := withHint(fmt.Errorf("--http %s: not a loopback address; scribe mcp serves this machine only", o.http), "use 127.0.0.1:PORT or [::1]:PORT")
	if !guard.LoopbackHost(o.http) {
		return notLoopback
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return withHint(err, "choose another address with --http, such as 127.0.0.1:0 for any free port")
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		ln.Close()
		return notLoopback // localhost named another address
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}
	return serveHTTP(ctx, hs, ln, func() {
		fmt.Fprintf(e.stderr, "scribe: serving %s over MCP at http://%s%s (streamable HTTP; stop with Ctrl-C)\n", store.SessionsDir(), ln.Addr(), mcp.Path)
	})
}
