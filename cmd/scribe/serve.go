package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/serve/guard"
	"github.com/scribe-archive/scribe/serve/web"
)

type serveOptions struct {
	addr string
	open bool
	utc  bool
}

func newServeCmd(e *env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--open]",
		Short: "Browse the archive in a web browser",
		Long: `serve starts a web server over the store: every agent's sessions, newest
first, each session's document rendered (tool calls and thinking collapsed,
images inline, long sessions in pages with an outline of their rounds, each
round's time and tokens, a way to the prompts before and after it, and to
the sessions before and after), search over every round, and the document
and its exported transcript to download. Times are in this machine's time
zone (TZ chooses it), named beside them, or in UTC with --utc. It reads the
store as it is at each request, so a session appended meanwhile shows on
reload.

It listens on 127.0.0.1:7420, reachable from this machine only. Another
--addr is allowed; one that is not a loopback address lets anyone who can
reach it read every session, and serve says so. An address of every
interface (0.0.0.0:7420, [::]:7420, :7420) is served at the addresses
serve prints, which a terminal lets you click. It answers only requests
addressed to localhost or to an address it listens on, so that no web page
reaches it by making its own name resolve to this machine. Message text is
shown as text, never run, and pages allow no script at all.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:7420", "listen on this address")
	cmd.Flags().BoolVar(&o.open, "open", false, "open the archive in the default browser")
	cmd.Flags().BoolVar(&o.utc, "utc", false, "show times in UTC, not in this machine's time zone")
	return cmd
}

func runServe(ctx context.Context, e *env, o serveOptions) error {
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	ws, closeStore, err := webStore(e, store)
	if err != nil {
		return err
	}
	defer closeStore()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return withHint(err, "choose another address with --addr, such as 127.0.0.1:0 for any free port")
	}
	url, others := serveURLs(ln.Addr(), net.InterfaceAddrs)
	fmt.Fprintf(e.stdout, "serving %s at %s\n", store.SessionsDir(), url)
	if len(others) > 0 {
		fmt.Fprintf(e.stdout, "and from other machines at %s\n", strings.Join(others, " "))
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
		fmt.Fprintf(e.stdout, "listening on a loopback address: only this machine can connect; stop with Ctrl-C\n")
	} else {
		fmt.Fprintf(e.stderr, "scribe: warning: %s is not a loopback address: anyone who can reach it can read every session in the store\n", ln.Addr())
	}
	logger := log.New(e.stderr, "scribe: ", 0)
	srv := &http.Server{
		// Only requests addressed to this server's addresses or
		// localhost: no web page that makes its name resolve to one.
		Handler:           guard.For(ln.Addr(), net.InterfaceAddrs).Handler("scribe serve", web.New(ws, web.Options{Logf: logger.Printf, Zone: zone(o.utc)})),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          logger,
	}
	return serveHTTP(ctx, srv, ln, func() {
		if o.open {
			if err := openBrowser(url); err != nil {
				fmt.Fprintf(e.stderr, "scribe: could not open a browser (%v): visit %s\n", err, url)
			}
		}
	})
}

// serveHTTP serves srv on ln, calling started once it serves, until it
// fails or ctx ends; then it shuts srv down, giving the requests under way
// 5 seconds.
func serveHTTP(ctx context.Context, srv *http.Server, ln net.Listener, started func()) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	started()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveURLs says where a server listening at addr is reached: the URL
// to open on this machine, and, for an address of every interface
// (0.0.0.0, ::), the URLs other machines reach it at (this machine's
// addresses, as addrs gives them, but loopback and link-local ones).
// http://[::]:7420/ is no place a browser goes: this machine's own is
// 127.0.0.1 (a listener of every interface takes IPv4 too).
func serveURLs(addr net.Addr, addrs func() ([]net.Addr, error)) (string, []string) {
	a, ok := addr.(*net.TCPAddr)
	if !ok || !a.IP.IsUnspecified() {
		return "http://" + addr.String() + "/", nil
	}
	port := strconv.Itoa(a.Port)
	var others []string
	if ifs, err := addrs(); err == nil {
		for _, ia := range ifs {
			ipn, ok := ia.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || ipn.IP.IsLinkLocalMulticast() {
				continue
			}
			others = append(others, "http://"+net.JoinHostPort(ipn.IP.String(), port)+"/")
		}
	}
	return "http://" + net.JoinHostPort("127.0.0.1", port) + "/", others
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

func newHTMLCmd(e *env) *cobra.Command {
	var out string
	var noTranscripts, utc bool
	cmd := &cobra.Command{
		Use:   "html --out DIR",
		Short: "Write the archive as a static web site",
		Long: `html writes the pages serve shows into DIR, as files: the sessions list
(all agents, and one list per agent), every session and sidechain in pages,
the files they showed, and each document and its exported transcript to
download. Every link is relative, so DIR can be published anywhere (GitHub
Pages) or opened from disk. There is no search page: search needs the
server (scribe serve, or scribe search). Files already in DIR are
overwritten; files of sessions no longer in the store are not removed.
Times are in this machine's time zone, named beside them, or in UTC with
--utc.

The downloads are most of a site's size (a transcript is about the size of
the session's source): --no-transcripts leaves them out, the exported
transcripts and the markdown documents both, and the pages do not offer
them. html ends by saying what it wrote, kind by kind, and its size.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &flagError{errors.New("html: --out DIR is required")}
			}
			store, err := e.openExistingStore()
			if err != nil {
				return err
			}
			ws, closeStore, err := webStore(e, store)
			if err != nil {
				return err
			}
			defer closeStore()
			ws.Search = nil
			start := time.Now()
			opts := web.Options{Logf: log.New(e.stderr, "scribe: ", 0).Printf, Zone: zone(utc), NoTranscripts: noTranscripts}
			rep, err := web.New(ws, opts).WriteSite(cmd.Context(), out)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote %s to %s in %s\n", siteReport(rep), out, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the site into this directory")
	cmd.Flags().BoolVar(&noTranscripts, "no-transcripts", false, "leave out the downloads (exported transcripts and markdown documents): a far smaller site")
	cmd.Flags().BoolVar(&utc, "utc", false, "show times in UTC, not in this machine's time zone")
	return cmd
}

// siteReport says what html wrote: each kind of file, how many and how
// large, then the whole.
func siteReport(r web.SiteReport) string {
	var parts []string
	for _, k := range []struct {
		what string
		t    web.Tally
	}{{"page", r.Pages}, {"document", r.Documents}, {"transcript", r.Transcripts}, {"file", r.Files}} {
		if k.t.N > 0 || k.what == "page" {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", k.t.N, plural(k.t.N, k.what, k.what+"s"), byteSize(k.t.Bytes)))
		}
	}
	return strings.Join(parts, ", ") + ", " + byteSize(r.Total().Bytes) + " in all"
}

// byteSize says a size in bytes the way a person reads it: 812 B, 3.4 kB,
// 67.5 MB, 1.2 GB (powers of 1000, as du -h --si and file browsers say).
func byteSize(n int64) string {
	const k = 1000
	if n < k {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, unit := range []string{"kB", "MB", "GB"} {
		f /= k
		if f < k || unit == "GB" {
			return fmt.Sprintf("%.1f %s", f, unit)
		}
	}
	return ""
}

// webStore gives the web server its view of the store: the sessions list
// from the store's index (brought up to date first, as before a search),
// the documents through the store, search through the same code as
// scribe search, and the Claude Code export for downloads.
func webStore(e *env, store *views.Views) (web.Store, func() error, error) {
	warnings, err := store.EnsureSearchable()
	printWarnings(e, warnings)
	if err != nil {
		store.CloseIndex()
		return web.Store{}, nil, err
	}
	db, err := index.Open(store.IndexPath())
	if err != nil {
		store.CloseIndex()
		return web.Store{}, nil, err
	}
	closeAll := func() error {
		err := db.Close()
		if cerr := store.CloseIndex(); err == nil {
			err = cerr
		}
		return err
	}
	ws := web.Store{
		Docs:  store.Store,
		Index: db,
		Search: func(ctx context.Context, q web.SearchQuery) ([]web.Hit, error) {
			return webSearch(store, q)
		},
		// Each document is exported by the export of its source format,
		// as export-claude and export-codex choose it.
		Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
			m, err := d.Meta()
			if err != nil {
				return nil, err
			}
			f, err := formatOf(m)
			if err != nil {
				return nil, err
			}
			return f.transcript(d, w)
		},
	}
	return ws, closeAll, nil
}

// webSearch searches as scribe search does: the same query, the same
// dates, the same complaints. What the person got wrong comes back as a
// *web.QueryError, which the page shows beside the form.
func webSearch(store *views.Views, q web.SearchQuery) ([]web.Hit, error) {
	hits, err := searchAs(store, index.Query{Text: q.Text, Raw: q.Raw, Agent: q.Agent, Project: q.Project, Engagement: q.Engagement, Limit: max(q.Limit, 1)}, q.Since, q.Until, q.In)
	var ue *userError
	if errors.As(err, &ue) {
		return nil, &web.QueryError{Msg: ue.Error()}
	}
	if err != nil {
		return nil, err
	}
	out := make([]web.Hit, len(hits))
	for i, h := range hits {
		out[i] = web.Hit{Key: h.SessionID, Doc: h.Doc, Agent: h.AgentID, Title: h.Title, Project: h.Project, Round: h.Round, Started: h.Started, Snippet: h.Snippet, In: h.In}
		if h.EngagementID != nil {
			out[i].Engagement = *h.EngagementID
		}
	}
	return out, nil
}

// userError is what a person (or a model) got wrong in a search given
// other than on the command line: the message, with its hints in
// parentheses.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

// searchAs runs a search given other than on the command line (a page of
// scribe serve, a tool of scribe mcp) as scribe search runs it, since, until
// and in (the texts, as --in takes them) as typed. What the query got wrong
// is a *userError.
func searchAs(store *views.Views, iq index.Query, since, until, in string) ([]views.Hit, error) {
	if in != "" {
		t, err := index.ParseTexts(in)
		if err != nil {
			return nil, &userError{"in: " + err.Error()}
		}
		iq.In = t
	}
	now := clock()
	for _, w := range []struct {
		name, value string
		to          *time.Time
	}{{"since", since, &iq.Since}, {"until", until, &iq.Until}} {
		if w.value == "" {
			continue
		}
		t, err := parseWhen(w.value, now)
		if err != nil {
			return nil, &userError{fmt.Sprintf("%s: %v; use %s", w.name, err, whenForms)}
		}
		*w.to = t
	}
	if !iq.Since.IsZero() && !iq.Until.IsZero() && !iq.Since.Before(iq.Until) {
		return nil, &userError{"since is not before until: no round can match"}
	}
	hits, err := store.Search(iq)
	var qe *index.QueryError
	var fe *index.FilterError
	if errors.As(err, &qe) || errors.As(err, &fe) {
		return nil, &userError{withHints(searchError(err))}
	}
	return hits, err
}

// withHints is an error's message followed by its hints in parentheses.
func withHints(err error) string {
	msg := err.Error()
	var he *hintError
	if errors.As(err, &he) {
		msg += " (" + strings.Join(he.hints, "; ") + ")"
	}
	return msg
}
