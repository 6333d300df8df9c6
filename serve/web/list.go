package web

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

// listPage is the sessions list: the agents, then a page of sessions.
type listPage struct {
	chrome
	Agents   []Count
	Projects []Count
	Agent    string
	Project  string
	Rows     []listRow
	Total    int
	Pager    pager
}

// listRow is a session in the list, with what its document's head adds.
type listRow struct {
	Session
	URL      string
	Messages int // -1: unknown
	Model    string
	Format   string
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	p, err := s.listPage(r.Context(), s.chrome(r, "Sessions"), q.Get("agent"), q.Get("project"), max(page, 1))
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	if page > p.Pager.Pages && page > 1 {
		s.notFound(w, r, "There is no such page of sessions.")
		return
	}
	s.render(w, r, "list.html", p)
}

func (s *Server) listPage(ctx context.Context, c chrome, agent, project string, page int) (*listPage, error) {
	n := s.opts.PageSessions
	rows, total, err := s.store.sessions(ctx, index.ListQuery{Agent: agent, Project: project, Offset: (page - 1) * n, Limit: n})
	if err != nil {
		return nil, err
	}
	agents, projects, err := s.store.counts(ctx)
	if err != nil {
		return nil, err
	}
	p := &listPage{chrome: c, Agents: agents, Projects: projects, Agent: agent, Project: project, Total: total}
	for _, row := range rows {
		lr := listRow{Session: row, Messages: -1}
		if key, ok := docKey(row.Doc); ok {
			lr.URL = c.L.Doc(key, 1)
		}
		if m := s.meta(row.Doc); m != nil {
			lr.Messages = m.Messages
			lr.Model = session.Str(m.Model)
		}
		p.Rows = append(p.Rows, lr)
	}
	p.Pager = newPager(page, (total+n-1)/n, func(i int) string { return c.L.List(agent, project, i) })
	return p, nil
}

// meta reads the head of a document (doc is relative to the sessions
// folder), or nil when it cannot be read.
func (s *Server) meta(doc string) *session.Meta {
	d, err := s.store.Docs.DocAt(doc)
	if err != nil {
		return nil
	}
	return heads.meta(d)
}

// headCache keeps documents' frontmatter by path, valid while the file's
// size and modification time are those it was read at, so a list page
// reads only the heads of documents that changed.
type headCache struct {
	mu sync.Mutex
	m  map[string]cachedHead
}

type cachedHead struct {
	size  int64
	mtime time.Time
	meta  *session.Meta
}

var heads = &headCache{m: map[string]cachedHead{}}

func (c *headCache) meta(d *inscribe.Doc) *session.Meta {
	mtime, size, err := d.Changed()
	if err != nil {
		return nil
	}
	path := d.Path()
	c.mu.Lock()
	h, ok := c.m[path]
	c.mu.Unlock()
	if ok && h.size == size && h.mtime.Equal(mtime) {
		return h.meta
	}
	m, err := d.Meta()
	if err != nil {
		return nil
	}
	c.mu.Lock()
	if len(c.m) >= 100_000 {
		clear(c.m)
	}
	c.m[path] = cachedHead{size: size, mtime: mtime, meta: m}
	c.mu.Unlock()
	return m
}

// pager is the links to the pages of a list or a document.
type pager struct {
	Page, Pages int
	Prev, Next  string
	Links       []pageLink
}

type pageLink struct {
	N       int
	URL     string
	Current bool
	Gap     bool // an ellipsis stands for the pages left out
}

// newPager links the first and last pages, and those around the current.
func newPager(page, pages int, url func(int) string) pager {
	p := pager{Page: page, Pages: max(pages, 1)}
	if page > 1 {
		p.Prev = url(page - 1)
	}
	if page < pages {
		p.Next = url(page + 1)
	}
	if pages <= 1 {
		return p
	}
	last := 0
	for i := 1; i <= pages; i++ {
		if i != 1 && i != pages && (i < page-2 || i > page+2) {
			continue
		}
		if last != 0 && i > last+1 {
			p.Links = append(p.Links, pageLink{Gap: true})
		}
		p.Links = append(p.Links, pageLink{N: i, URL: url(i), Current: i == page})
		last = i
	}
	return p
}
