package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// docRef is a document of the store, found through the store.
type docRef struct {
	key string // sid, or sid/agent-aid
	sid string
	aid string // the subagent's id, for a sidechain document
	doc *inscribe.Doc
}

// fileBase is how a download of the document is named.
func (r docRef) fileBase() string {
	if r.aid == "" {
		return r.sid
	}
	return r.sid + "-agent-" + r.aid
}

// findDoc finds a document by its session id and, for a sidechain, its
// subagent's id. Both are checked before the store is asked.
func (s *Server) findDoc(sid, aid string) (docRef, bool) {
	// index.md beside the documents is the agent's catalog, not a
	// document (docs/FORMAT.md 10.1).
	if !validID(sid) || sid == "index" || aid != "" && !validID(aid) {
		return docRef{}, false
	}
	d, ok := s.store.Docs.Find(sid)
	if !ok {
		return docRef{}, false
	}
	ref := docRef{key: sid, sid: sid, doc: d}
	if aid != "" {
		ref.aid = aid
		ref.key = sid + "/agent-" + aid
		if ref.doc, ok = d.Sidechain(aid); !ok {
			return docRef{}, false
		}
	}
	return ref, ref.doc.Exists()
}

// handleDoc serves everything under /s/: a document's pages, the
// redirects to a round or a message, its files and its downloads.
func (s *Server) handleDoc(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(r.PathValue("path"), "/")
	sid, rest := segs[0], segs[1:]
	aid := ""
	if len(rest) > 0 && strings.HasPrefix(rest[0], "agent-") {
		aid, rest = strings.TrimPrefix(rest[0], "agent-"), rest[1:]
	}
	ref, ok := s.findDoc(sid, aid)
	if !ok {
		s.notFound(w, r, "There is no such session in the store.")
		return
	}
	if len(rest) == 0 { // the folder of pages, without its slash
		last := segs[len(segs)-1]
		relRedirect(w, url.PathEscape(last)+"/", http.StatusMovedPermanently)
		return
	}
	switch {
	case len(rest) == 1 && (rest[0] == "" || rest[0] == "index.html"):
		s.serveDocPage(w, r, ref, 1)
	case len(rest) == 1 && strings.HasPrefix(rest[0], "page-") && strings.HasSuffix(rest[0], ".html"):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rest[0], "page-"), ".html"))
		if err != nil || n < 2 {
			s.notFound(w, r, "There is no such page.")
			return
		}
		s.serveDocPage(w, r, ref, n)
	case len(rest) == 2 && rest[0] == "round":
		n, err := strconv.Atoi(rest[1])
		if err != nil || n < 1 {
			s.notFound(w, r, "There is no such round.")
			return
		}
		s.redirectTo(w, r, ref, func(it *session.Item) bool { return it.Round == n }, n, document.RoundAnchor(n))
	case len(rest) == 2 && rest[0] == "m":
		id := rest[1]
		s.redirectTo(w, r, ref, func(it *session.Item) bool { return len(it.IDs) > 0 && it.IDs[0] == id }, 0, "m-"+id)
	case len(rest) == 2 && rest[0] == "files":
		s.serveFile(w, r, ref, rest[1])
	case len(rest) == 1 && rest[0] == "document.md":
		s.serveMarkdown(w, r, ref)
	case len(rest) == 1 && rest[0] == "transcript.jsonl" && s.store.Transcript != nil:
		s.serveTranscript(w, r, ref)
	default:
		s.notFound(w, r, "There is no such page.")
	}
}

// docPage is a page of a document.
type docPage struct {
	chrome
	Key        string
	Meta       *session.Meta
	Heading    string // the document's own heading (Claude · 2026-11-22)
	Summary    template.HTML
	Items      template.HTML
	First      int // the number of the first message shown, from 1
	Last       int
	Pager      pager
	Parent     *navLink // the session a sidechain belongs to
	Forked     *navLink // the session this one was forked from
	Sidechains []navLink
	Markdown   string // "" when the site does not offer the document
	Transcript string // "" when there is no export
	// Newer and Older are the sessions beside this one in the sessions
	// list (nil for a sidechain, or at either end).
	Newer, Older *navLink
	// Outline is the session's rounds, each with its prompt's first
	// line, its time and its tokens: all of them, or of a long session
	// those about the page's, Before and After being how many it leaves
	// out on either side. Rounds is how many the session has, Tokens the
	// sum of theirs.
	Outline       []outlineRow
	Before, After int
	Rounds        int
	Tokens        int64
	// Span is when the session began and ended, in the pages' zone.
	Span string
}

type navLink struct {
	Label, URL, Note string
}

// outlineRow is a round in a document's outline.
type outlineRow struct {
	N      int
	URL    string // the round, on this page or another
	Shown  string // the time as the outline shows it: 10:26, with the date when it is not the session's first day
	Prompt string // the first characters of the round's prompt
	Tokens int64
	Here   bool // the round starts on this page
}

func (s *Server) serveDocPage(w http.ResponseWriter, r *http.Request, ref docRef, page int) {
	c := s.chrome(r, "")
	v := &pageSet{}
	p, err := s.docPage(r.Context(), c, ref, page, v)
	if errors.Is(err, errNoPage) {
		s.notFound(w, r, "The document has no such page.")
		return
	}
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	s.render(w, r, "doc.html", p)
}

// errNoPage is a page past a document's last.
var errNoPage = errors.New("no such page")

// pageSet says on which page of a document each message and each round
// is, for links to messages on other pages. The server leaves it empty and
// links through its redirects (m/<id>, round/<n>); the static site fills
// it first.
type pageSet struct {
	page  map[string]int // first id -> page
	round map[int]int    // round -> the page it starts on
}

// docPage reads and renders one page of a document: it reads the
// messages before the page only to skip them, from the nearest page before
// it whose start it knows (places), and none after it but one.
func (s *Server) docPage(ctx context.Context, c chrome, ref docRef, page int, ps *pageSet) (*docPage, error) {
	var p *docPage
	err := s.withItems(ref, page, nil, func(src *itemSource) error {
		if err := src.skip((page-1)*s.opts.PageItems - src.index); err != nil {
			return err
		}
		var err error
		p, err = s.renderDocPage(ctx, c, ref, page, ps, src)
		return err
	})
	return p, err
}

// withItems calls read with a document's messages, read from the start of
// page `page`, or of the nearest page before it whose start is known and
// that accept accepts (nil: any), else from the first. A read from a page
// that fails but for a missing page or message is tried again from the
// first (a document that changed as it was read).
func (s *Server) withItems(ref docRef, page int, accept func(pageStart) bool, read func(*itemSource) error) error {
	path := ref.doc.Path()
	mod, size, err := ref.doc.Changed()
	known := err == nil
	k, at := 0, pageStart{}
	if known {
		k, at = s.places.nearest(path, mod, size, page, accept)
	}
	for {
		var rd *document.ItemReader
		var err error
		if k > 1 {
			rd, err = ref.doc.ItemsAt(at.at)
		} else {
			k, at = 1, pageStart{}
			rd, err = ref.doc.Items()
		}
		if err != nil {
			return err
		}
		src := &itemSource{rd: rd, round: at.round, index: (k - 1) * s.opts.PageItems, perPage: s.opts.PageItems}
		if known {
			src.mark = func(page int, at pageStart) { s.places.note(path, mod, size, page, at) }
			src.ver = &docVersion{path: path, mod: mod, size: size}
		}
		err = read(src)
		rd.Close()
		if k == 1 || err == nil || errors.Is(err, errNoPage) || errors.Is(err, errNoMessage) {
			return err
		}
		s.places.forget(path)
		k = 1
	}
}

// itemSource reads a document's messages, with one read ahead: a page
// knows whether another follows.
type itemSource struct {
	rd     *document.ItemReader
	peeked *session.Item
	round  int // the round of the last message returned
	index  int // how many messages of the document come before the next read (a page's start on)
	// mark, when set, is told where each page starts that is read,
	// perPage messages a page.
	mark    func(page int, at pageStart)
	perPage int
	// ver is the version of the document read, when known: its totals
	// are kept for it (roundTotals).
	ver *docVersion
}

// docVersion is a document as it was read: what places keys what it keeps
// of it by.
type docVersion struct {
	path string
	mod  time.Time
	size int64
}

// roundTotals returns the index's totals of a document's rounds: for a
// version of it whose totals are kept (v not nil), those, while the
// index's last round is still theirs (a cheap lookup of its key); else
// read, and kept: reading them reads every round's row (0.1 s a page at
// 150,000 rounds).
func (s *Server) roundTotals(ctx context.Context, key string, v *docVersion) (t roundTotals, err error) {
	if v != nil {
		if t, ok := s.places.docTotals(v.path, v.mod, v.size); ok {
			if last, err := s.store.Index.MaxRound(ctx, key); err == nil && last == t.last {
				return t, nil
			}
		}
	}
	t.count, t.last, t.tokens, err = s.store.Index.RoundTotals(ctx, key)
	if err == nil && v != nil {
		s.places.setTotals(v.path, v.mod, v.size, t)
	}
	return t, err
}

func (src *itemSource) next() (*session.Item, error) {
	it := src.peeked
	if it != nil {
		src.peeked = nil
	} else {
		if src.mark != nil && src.index%src.perPage == 0 {
			src.mark(src.index/src.perPage+1, pageStart{at: src.rd.Place(), round: src.round})
		}
		var err error
		if it, err = src.rd.Next(); err != nil {
			return nil, err
		}
		src.index++
	}
	if it.Round > 0 {
		src.round = it.Round
	}
	return it, nil
}

// skip reads past n messages; errNoPage when there are fewer.
func (src *itemSource) skip(n int) error {
	for i := 0; i < n; i++ {
		if _, err := src.next(); err == io.EOF {
			return errNoPage
		} else if err != nil {
			return err
		}
	}
	return nil
}

// take reads up to n messages, and reports whether more follow.
func (src *itemSource) take(n int) ([]*session.Item, bool, error) {
	var items []*session.Item
	for {
		round := src.round
		it, err := src.next()
		if err == io.EOF {
			return items, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if len(items) == n {
			src.peeked, src.round = it, round
			return items, true, nil
		}
		items = append(items, it)
	}
}

// renderDocPage renders the page of a document whose messages src reads
// next.
func (s *Server) renderDocPage(ctx context.Context, c chrome, ref docRef, page int, ps *pageSet, src *itemSource) (*docPage, error) {
	n := s.opts.PageItems
	before := src.round // the round the page goes on with
	items, more, err := src.take(n)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 && page > 1 {
		return nil, errNoPage
	}
	rd := src.rd
	m := rd.Meta
	pages := max((m.Messages+n-1)/n, page)
	if more {
		pages = max(pages, page+1)
	} else {
		pages = page
	}
	title := document.DisplayTitle(m, rd.Summary)
	c.Title = title
	p := &docPage{chrome: c, Key: ref.key, Meta: m, Heading: document.Title(m),
		First: (page-1)*n + 1, Last: (page-1)*n + len(items),
		Markdown: c.L.DocFile(ref.key, "document.md")}
	if s.store.Transcript != nil {
		p.Transcript = c.L.DocFile(ref.key, "transcript.jsonl")
	}
	p.Pager = newPager(page, pages, func(i int) string { return c.L.Doc(ref.key, i) })
	if page == 1 {
		var sb bytes.Buffer
		if err := document.MarkdownHTML(&sb, rd.Summary); err != nil {
			return nil, err
		}
		p.Summary = template.HTML(sb.String())
	}
	if so := m.SidechainOf; so != nil && validID(so.SessionID) {
		p.Parent = &navLink{Label: so.SessionID, URL: c.L.Doc(so.SessionID, 1)}
	}
	if m.ForkedFrom != nil && validID(*m.ForkedFrom) {
		p.Forked = &navLink{Label: *m.ForkedFrom, URL: c.L.Doc(*m.ForkedFrom, 1)}
	}
	v := newDocView(ref, c, m)
	for _, sc := range m.Sidechains {
		nl := navLink{Label: sc.Path, Note: sc.Description}
		if key, ok := v.sidechainKey(sc.Path); ok {
			nl.URL = c.L.Doc(key, 1)
		}
		p.Sidechains = append(p.Sidechains, nl)
	}
	if ps.page != nil {
		v.elsewhere = func(id string) string {
			if pg, ok := ps.page[id]; ok {
				return c.L.Doc(ref.key, pg) + "#" + fragment("m-"+id)
			}
			return ""
		}
	} else {
		v.elsewhere = func(id string) string {
			if !validID(id) {
				return ""
			}
			return c.L.DocFile(ref.key, "m/"+url.PathEscape(id))
		}
	}
	here := map[int]bool{}
	lo, hi := 0, 0 // the rounds the page shows
	if len(items) > 0 && items[0].Round == 0 {
		lo, hi = before, before // and the one it goes on with
	}
	for _, it := range items {
		if it.Round > 0 {
			here[it.Round] = true
			if lo < 1 || it.Round < lo {
				lo = it.Round
			}
			hi = max(hi, it.Round)
		}
	}
	// The rounds, from the index: what the outline and the rounds'
	// headings show. A document the index lacks has no outline. A long
	// session's outline is the Options.OutlineRounds rounds about the page's
	// (the page of a session of half a million rounds listing them all
	// was 80 MB).
	var rows []index.Row
	var from, to int
	t, err := s.roundTotals(ctx, ref.key, src.ver)
	count, last, tokens := t.count, t.last, t.tokens
	if err == nil && count > 0 {
		// (And the rounds on either side, which the headings link.)
		from, to = outlineWindow(lo, hi, last, s.opts.OutlineRounds)
		rows, err = s.store.Index.RoundsBetween(ctx, ref.key, from-1, to+1)
		p.Rounds, p.Tokens = count, tokens
	}
	if err != nil {
		return nil, err
	}
	v.roundURL = func(n int) string {
		switch {
		case here[n]:
			return "#" + document.RoundAnchor(n)
		case ps.round != nil:
			if pg, ok := ps.round[n]; ok {
				return c.L.Doc(ref.key, pg) + "#" + document.RoundAnchor(n)
			}
			return ""
		}
		return c.L.DocFile(ref.key, "round/"+strconv.Itoa(n))
	}
	p.Span = c.Between(session.Str(m.Started), session.Str(m.Ended))
	v.rounds = map[int]index.Row{}
	firstDay := c.Date(session.Str(m.Started))
	v.last = last
	for _, r := range rows {
		v.rounds[r.Round] = r
		if r.Round < from || r.Round > to {
			continue
		}
		shown := c.Time(r.Started, "15:04")
		if c.Date(r.Started) != firstDay {
			shown = c.Time(r.Started, "2006-01-02 15:04")
		}
		p.Outline = append(p.Outline, outlineRow{N: r.Round, URL: v.roundURL(r.Round), Shown: shown,
			Prompt: r.UserPreview, Tokens: r.TokenCount, Here: here[r.Round]})
	}
	if n := len(p.Outline); n > 0 {
		p.After = last - p.Outline[n-1].N // (a round missing from the index aside)
		p.Before = count - n - p.After
	}
	if m.SidechainOf == nil && ref.aid == "" {
		newer, older, _, err := s.store.Index.Neighbours(ctx, ref.sid)
		if err != nil {
			return nil, err
		}
		p.Newer, p.Older = s.neighbour(c, newer), s.neighbour(c, older)
	}
	var buf bytes.Buffer
	v.renderItems(&buf, items)
	p.Items = template.HTML(buf.String())
	return p, nil
}

// outlineWindow returns the first and last round of an outline of at
// most n rounds of a session whose last is last, about the rounds lo to
// hi that a page shows (0: none), those centred in it.
func outlineWindow(lo, hi, last, n int) (from, to int) {
	if last <= n {
		return 1, last
	}
	if lo < 1 {
		lo, hi = 1, 1
	}
	from = max(1, lo-max(0, n-(hi-lo+1))/2)
	to = min(last, from+n-1)
	return max(1, to-n+1), to
}

// neighbour links a session beside this one in the list.
func (s *Server) neighbour(c chrome, n *index.Session) *navLink {
	if n == nil {
		return nil
	}
	key, ok := docKey(n.Doc)
	if !ok || strings.Contains(key, "/") {
		return nil
	}
	title := n.Title
	if strings.TrimSpace(title) == "" {
		title = n.SessionID
	}
	return &navLink{Label: title, URL: c.L.Doc(key, 1), Note: c.When(n.Started)}
}

// redirectTo sends the visitor to the page that holds the first message
// match accepts, at anchor; a round's (round > 0) is looked for from the
// last page known to start before it, a message's from the first.
func (s *Server) redirectTo(w http.ResponseWriter, r *http.Request, ref docRef, match func(*session.Item) bool, round int, anchor string) {
	page, accept := 1, (func(pageStart) bool)(nil)
	if round > 0 {
		// Rounds follow each other in a document: the page holding
		// round n starts after a message of an earlier round.
		page, accept = math.MaxInt, func(p pageStart) bool { return p.round < round }
	}
	found := 0
	err := s.withItems(ref, page, accept, func(src *itemSource) error {
		from := src.index
		for {
			it, err := src.next()
			if err == io.EOF {
				if from > 0 {
					// Not after the page it was looked for from: an
					// edited document, whose rounds go back.
					return errAgain
				}
				return errNoMessage
			}
			if err != nil {
				return err
			}
			if match(it) {
				found = (src.index-1)/s.opts.PageItems + 1
				return nil
			}
		}
	})
	switch {
	case errors.Is(err, errNoMessage):
		s.notFound(w, r, "The document has no such message.")
	case err != nil:
		s.serverError(w, r, err)
	default:
		// From …/<key>/round/<n> back to the document's folder of pages.
		relRedirect(w, "../"+linker{}.docPage(found)+"#"+fragment(anchor), http.StatusFound)
	}
}

// errNoMessage is a message or round that a document does not hold;
// errAgain a read to be tried again from the document's first message.
var errNoMessage, errAgain = errors.New("no such message"), errors.New("read again from the first message")

// relRedirect redirects to a location relative to the request's URL, as
// every link of the archive is (http.Redirect would make it absolute).
func relRedirect(w http.ResponseWriter, to string, status int) {
	w.Header().Set("Location", to)
	w.WriteHeader(status)
}

// serveFile serves an image or document from the document's files/
// folder, opened through an os.Root so that nothing outside it can be.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, ref docRef, name string) {
	if !validName(name) {
		s.notFound(w, r, "There is no such file.")
		return
	}
	f, err := ref.doc.OpenShown(name)
	if err != nil {
		s.notFound(w, r, "There is no such file.")
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		s.notFound(w, r, "There is no such file.")
		return
	}
	ct := contentType(name)
	w.Header().Set("Content-Type", ct)
	if ct == "application/octet-stream" {
		w.Header().Set("Content-Disposition", "attachment")
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// serveMarkdown serves the document as it is on disk.
func (s *Server) serveMarkdown(w http.ResponseWriter, r *http.Request, ref docRef) {
	f, err := ref.doc.Open()
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", ref.fileBase()+".md"))
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// serveTranscript streams the session exported to its source format. An
// export that fails after it started writing aborts the response, so a
// client never takes a cut transcript for a whole one.
func (s *Server) serveTranscript(w http.ResponseWriter, r *http.Request, ref docRef) {
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", ref.fileBase()+".jsonl"))
	cw := &countingWriter{w: w}
	warnings, err := s.store.Transcript(ref.doc, cw)
	for _, wn := range warnings {
		s.opts.Logf("web: export %s: %v", ref.doc, wn)
	}
	if err != nil {
		if cw.n == 0 {
			h.Del("Content-Disposition")
			s.serverError(w, r, err)
			return
		}
		s.opts.Logf("web: export %s: %v (response cut off)", ref.doc, err)
		panic(http.ErrAbortHandler)
	}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
