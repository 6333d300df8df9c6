// Package web is scribe's browsable archive: the HTTP handlers of
// `scribe serve` and the static site of `scribe html`, over a store read
// live.
//
// # Pages
//
//	/                                  agents and sessions, newest first (?agent= &project= &page=)
//	/search?q=…                        full-text search, as scribe search (server only)
//	/s/<session>/                      a document, PageItems messages a page
//	/s/<session>/page-<n>.html         its later pages
//	/s/<session>/round/<n>             redirect to the page that holds round n (#round-<n>)
//	/s/<session>/m/<id>                redirect to the page that holds message <id> (#m-<id>)
//	/s/<session>/files/<name>          an image or document the session showed (its files/ folder)
//	/s/<session>/document.md           the document, byte for byte
//	/s/<session>/transcript.jsonl      the session exported back to its source format
//	/s/<session>/agent-<id>/…          a sidechain (subagent) document, with the same pages
//	/static/…                          the style sheet and icon, embedded
//
// Every link a page holds is relative, so the static site works from any
// folder (GitHub Pages serves it under /<repository>/).
//
// # Safety
//
// Message text is markdown rendered inert (document.MarkdownHTML: raw
// HTML shown as text, links with schemes that could run script unlinked,
// images shown as links), or preformatted text; everything else is escaped
// by html/template or by the item renderer. Every response carries a
// Content-Security-Policy that allows no script at all, no object, no
// frame and nothing from another origin, and X-Content-Type-Options:
// nosniff; pages carry the same policy in a meta element, so the static
// site has it too. No JavaScript is used: collapsed blocks are <details>.
// A path in a URL names a document only through the store (session ids
// and file names are checked against the store's rules, and files are
// opened through an os.Root on the document's files/ folder), so no URL
// reaches outside the store.
package web

import (
	"context"
	"embed"
	"html/template"
	"io"
	"io/fs"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
)

// Store is how the server reads the store: the store's index for the
// lists, and plain functions for the rest, so that the command that starts
// it decides which code reads documents, searches and exports. Each is
// used when a page is asked for, and says what the store holds then: a
// session appended since shows on the next reload.
type Store struct {
	// Docs is the store: documents are read through its read face.
	Docs *inscribe.Store
	// Index is the store's index (sessions.db): the sessions and how many
	// each agent and project has.
	Index *index.DB
	// Search runs a search as scribe search runs it. A query the user
	// got wrong is reported as a *QueryError. Nil: no search page.
	Search func(ctx context.Context, q SearchQuery) ([]Hit, error)
	// Transcript writes a document's session in its source format (the
	// export chosen by the document's source format). Nil: no download.
	Transcript func(d *inscribe.Doc, w io.Writer) (warnings []error, err error)
}

// sessions returns the sessions (not sidechains) q selects, newest first,
// and how many it selects in all.
func (s Store) sessions(ctx context.Context, q index.ListQuery) ([]Session, int, error) {
	rows, total, err := s.Index.List(ctx, q)
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = sessionOf(r)
	}
	return out, total, err
}

func sessionOf(r index.Session) Session {
	return Session{Key: r.SessionID, Agent: r.AgentID, Title: r.Title, Project: r.Project, Started: r.Started, Ended: r.Ended, Doc: r.Doc, Tokens: r.Tokens}
}

// counts returns how many sessions each agent and each project has.
func (s Store) counts(ctx context.Context) (agents, projects []Count, err error) {
	as, ps, err := s.Index.Counts(ctx)
	conv := func(cs []index.Count) []Count {
		out := make([]Count, len(cs))
		for i, c := range cs {
			out[i] = Count{Value: c.Value, N: c.N}
		}
		return out
	}
	return conv(as), conv(ps), err
}

// Session is one row of the sessions list.
type Session struct {
	Key     string // the session id (the frontmatter's)
	Agent   string
	Title   string // the display title: the title, else the first prompt
	Project string
	Started string
	Ended   string
	Doc     string // the document, relative to Dir, with slashes: <agent>/<name>.md
	Tokens  int64  // the sum of its rounds' token counts
}

// Count is how many sessions have one agent or one project.
type Count struct {
	Value string
	N     int
}

// SearchQuery is a search as a person writes it: the query and the
// filters of scribe search, as typed.
type SearchQuery struct {
	Text, Agent, Project, Since, Until, Engagement string
	// In is the texts to search, as scribe search --in takes them
	// ("prompts", "replies", "tools"; "" for all).
	In    string
	Raw   bool // Text is FTS5 syntax (scribe search --fts)
	Limit int
}

// Hit is one round a search found.
type Hit struct {
	Key        string // the document's key: a session id, or <session>/agent-<id>
	Doc        string // the document, as the index names it (inscribe.Doc.Rel)
	Agent      string
	Title      string
	Project    string
	Round      int
	Started    string
	Engagement string
	// Snippet has the matched words between HighlightStart and
	// HighlightEnd (index.HighlightStart and index.HighlightEnd).
	Snippet string
	In      string // the text the snippet is from: prompts, replies or tools
}

// The marks around matched words in Hit.Snippet, as package index sets
// them.
const (
	HighlightStart = "\x02"
	HighlightEnd   = "\x03"
)

// QueryError is a search query the user needs to correct.
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return e.Msg }

// Options tunes a server.
type Options struct {
	// PageItems is how many messages a document page shows (default 200).
	PageItems int
	// OutlineRounds is how many rounds a document page's outline lists
	// at most: a longer session's outline lists those about the page's
	// (default 1000).
	OutlineRounds int
	// PageSessions is how many sessions a list page shows (default 50).
	PageSessions int
	// Logf reports what a visitor is not told: server errors, export
	// warnings (default: the log package).
	Logf func(format string, args ...any)
	// Zone is the time zone pages show times in, named beside them
	// (default: the machine's, time.Local). Pages run no script, so they
	// cannot ask the visitor's browser for its own.
	Zone *time.Location
	// NoTranscripts leaves the downloads out of the static site (WriteSite):
	// neither the exported transcript nor the markdown document is
	// written, and the pages do not offer them. The server offers them
	// all the same.
	NoTranscripts bool
}

func (o Options) withDefaults() Options {
	if o.PageItems <= 0 {
		o.PageItems = 200
	}
	if o.OutlineRounds <= 0 {
		o.OutlineRounds = 1000
	}
	if o.PageSessions <= 0 {
		o.PageSessions = 50
	}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
	if o.Zone == nil {
		o.Zone = time.Local
	}
	return o
}

// CSP is the Content-Security-Policy of every response: no script, no
// plugin, no frame, nothing from elsewhere; style sheets and images only
// from the archive itself.
const CSP = metaCSP + "; frame-ancestors 'none'"

// metaCSP is the policy pages repeat in a meta element, for the static
// site, where no header carries it: all of it that a meta element can
// carry (not frame-ancestors).
const metaCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'"

//go:embed templates/*.html static/*
var assets embed.FS

// pages are the templates, parsed when a page is first rendered, not when
// the program starts: every command pays for what its package initializes,
// and most never serve a page.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(funcs).ParseFS(assets, "templates/*.html"))
})

// Server serves a store.
type Server struct {
	store  Store
	opts   Options
	mux    *http.ServeMux
	places places // where the pages of the documents served lately start
}

// New returns a server of the store.
func New(store Store, opts Options) *Server {
	s := &Server{store: store, opts: opts.withDefaults(), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.handleList)
	s.mux.HandleFunc("GET /index.html", s.handleList)
	s.mux.HandleFunc("GET /search", s.handleSearch)
	s.mux.HandleFunc("GET /static/{name}", s.handleStatic)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "static/favicon.svg", http.StatusMovedPermanently)
	})
	s.mux.HandleFunc("GET /s/{path...}", s.handleDoc)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.notFound(w, r, "There is no such page.")
	})
	return s
}

// ServeHTTP serves a request, with the security headers on every
// response.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache") // the store changes under us: always revalidate
	s.mux.ServeHTTP(w, r)
}

func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !validName(name) {
		s.notFound(w, r, "There is no such file.")
		return
	}
	data, err := fs.ReadFile(assets, "static/"+name)
	if err != nil {
		s.notFound(w, r, "There is no such file.")
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Write(data)
}

// errorPage is what a page says when it cannot show what was asked.
type errorPage struct {
	chrome
	Status  int
	Message string
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	s.errorPage(w, r, http.StatusNotFound, msg)
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	p := errorPage{chrome: s.chrome(r, ""), Status: status, Message: msg}
	p.Title = http.StatusText(status)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := pages().ExecuteTemplate(w, "error.html", p); err != nil {
		s.opts.Logf("web: %s: %v", r.URL.Path, err)
	}
}

// serverError logs err and tells the visitor that something went wrong.
func (s *Server) serverError(w http.ResponseWriter, r *http.Request, err error) {
	s.opts.Logf("web: %s: %v", r.URL.Path, err)
	s.errorPage(w, r, http.StatusInternalServerError, "The store could not be read: "+err.Error())
}

// render executes a page template into a buffer first, so that a failure
// is an error page rather than half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	s.renderStatus(w, r, http.StatusOK, name, data)
}

func (s *Server) renderStatus(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var sb strings.Builder
	if err := pages().ExecuteTemplate(&sb, name, data); err != nil {
		s.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, sb.String())
}

// chrome is what every page shows around its content.
type chrome struct {
	Title  string
	L      linker
	CSP    string
	Search bool   // the server has a search page
	Query  string // the search box's text
	zone   *time.Location
}

// chrome returns the frame of a page whose URL path (below the root)
// is rel.
func (s *Server) chrome(r *http.Request, title string) chrome {
	return chrome{Title: title, L: linker{base: baseOf(r.URL.Path)}, CSP: metaCSP, Search: s.store.Search != nil, zone: s.opts.Zone}
}

// Time shows an RFC 3339 time in the pages' zone, with layout (a
// reference time's layout, MST for the zone's name); a time that does not
// parse is shown as it is, and none as "—".
func (c chrome) Time(ts, layout string) string {
	if ts == "" {
		return "—"
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.In(c.zone).Format(layout)
}

// When is a time to the minute, with its zone: 2026-11-22 10:26 CET.
func (c chrome) When(ts string) string { return c.Time(ts, "2006-01-02 15:04 MST") }

// Between is when something began and ended, the end's date left out when
// it is the same day: 2026-11-22 10:26 CET to 11:02.
func (c chrome) Between(start, end string) string {
	if end == "" || end == start {
		return c.When(start)
	}
	if c.Date(start) == c.Date(end) {
		return c.When(start) + " to " + c.Time(end, "15:04")
	}
	return c.When(start) + " to " + c.When(end)
}

// Date is a time's day in the pages' zone: 2026-11-22.
func (c chrome) Date(ts string) string { return c.Time(ts, "2006-01-02") }

// Zone names the pages' zone as it is now (CET, UTC).
func (c chrome) Zone() string { return time.Now().In(c.zone).Format("MST") }

// baseOf is the way from a page's URL path back to the root: "" for
// /search, "../../" for /s/<id>/page-2.html.
func baseOf(p string) string {
	n := strings.Count(strings.TrimPrefix(p, "/"), "/")
	return strings.Repeat("../", n)
}

var funcs = template.FuncMap{
	"add":    func(a, b int) int { return a + b },
	"tokens": tokens,
}

// tokens writes a count of tokens with thousands separated: 12,345.
func tokens(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func contentType(name string) string {
	ext := name[strings.LastIndexByte(name, '.')+1:]
	switch strings.ToLower(ext) {
	case "css":
		return "text/css; charset=utf-8"
	case "svg":
		return "image/svg+xml"
	case "png":
		return "image/png"
	case "jpg", "jpeg":
		return "image/jpeg"
	case "gif":
		return "image/gif"
	case "webp":
		return "image/webp"
	case "pdf":
		return "application/pdf"
	case "txt":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// validID reports whether s can be a session or agent id of the store
// (docs/FORMAT.md section 2): 1 to 200 characters from A-Z a-z 0-9 . _ -,
// and not . or .. (claude.ValidID).
func validID(s string) bool {
	if s == "" || len(s) > 200 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// docKey is the key a document's pages are found by, from its path below
// the sessions folder: <name> for <agent>/<name>.md, <session>/agent-<id>
// for a sidechain, <agent>/<session>/agent-<id>.md.
func docKey(doc string) (string, bool) {
	parts := strings.Split(strings.TrimSuffix(doc, ".md"), "/")
	switch {
	case !strings.HasSuffix(doc, ".md"):
	case len(parts) == 2 && validID(parts[1]):
		return parts[1], true
	case len(parts) == 3 && validID(parts[1]) && strings.HasPrefix(parts[2], "agent-") && validID(strings.TrimPrefix(parts[2], "agent-")):
		return parts[1] + "/" + parts[2], true
	}
	return "", false
}

// validName reports whether s can be the name of a file in a files/
// folder: a plain name, no path.
func validName(s string) bool { return validID(s) && !strings.HasPrefix(s, ".") }
