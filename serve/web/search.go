package web

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// searchPage is a search and what it found.
type searchPage struct {
	chrome
	Q        SearchQuery
	Texts    []string // what In may be
	Agents   []Count
	Projects []Count
	Hits     []searchHit
	Error    string
	Searched bool
}

type searchHit struct {
	Hit
	URL     string
	DocURL  string
	Snippet template.HTML
}

// searchLimit is how many hits a search shows when the query says not.
const searchLimit = 50

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	if s.store.Search == nil {
		s.notFound(w, r, "This archive has no search.")
		return
	}
	v := r.URL.Query()
	q := SearchQuery{Text: strings.TrimSpace(v.Get("q")), Agent: v.Get("agent"), Project: v.Get("project"),
		Since: v.Get("since"), Until: v.Get("until"), Engagement: v.Get("engagement"), In: v.Get("in"), Raw: v.Get("fts") != "", Limit: searchLimit}
	if n, err := strconv.Atoi(v.Get("limit")); err == nil && n > 0 {
		q.Limit = min(n, 1000)
	}
	c := s.chrome(r, "Search")
	c.Query = q.Text
	if q.Text != "" {
		c.Title = "Search: " + q.Text
	}
	p := &searchPage{chrome: c, Q: q, Texts: []string{"prompts", "replies", "tools"}}
	var err error
	if p.Agents, p.Projects, err = s.store.counts(r.Context()); err != nil {
		s.serverError(w, r, err)
		return
	}
	if q.Text == "" {
		s.render(w, r, "search.html", p)
		return
	}
	p.Searched = true
	hits, err := s.store.Search(r.Context(), q)
	var qe *QueryError
	if errors.As(err, &qe) {
		p.Error = qe.Msg
		s.renderStatus(w, r, http.StatusBadRequest, "search.html", p)
		return
	}
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	for _, h := range hits {
		sh := searchHit{Hit: h, Snippet: snippetHTML(h.Snippet)}
		if key, ok := docKey(h.Doc); ok {
			sh.URL = c.L.DocFile(key, "round/"+strconv.Itoa(h.Round))
			sh.DocURL = c.L.Doc(key, 1)
		}
		p.Hits = append(p.Hits, sh)
	}
	s.render(w, r, "search.html", p)
}

// snippetHTML escapes a snippet and marks its matched words.
func snippetHTML(s string) template.HTML {
	var b strings.Builder
	open := false
	for s != "" {
		i := strings.IndexAny(s, HighlightStart+HighlightEnd)
		if i < 0 {
			b.WriteString(esc(s))
			break
		}
		b.WriteString(esc(s[:i]))
		switch {
		case s[i:i+1] == HighlightStart && !open:
			b.WriteString("<mark>")
			open = true
		case s[i:i+1] == HighlightEnd && open:
			b.WriteString("</mark>")
			open = false
		}
		s = s[i+1:]
	}
	if open {
		b.WriteString("</mark>")
	}
	return template.HTML(b.String())
}
