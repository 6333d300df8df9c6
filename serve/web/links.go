package web

import (
	"net/url"
	"strconv"
	"strings"
)

// linker makes the links of a page, relative to it. The server and the
// static site share the documents' URLs (s/<key>/, s/<key>/page-2.html,
// s/<key>/files/…); they differ in the list pages, which the server
// filters with a query string and the static site writes one file per
// agent, and in the first page of a document, which the static site
// names index.html since a folder is not a page on a disk.
type linker struct {
	static bool
	base   string // from the page to the root: "", "../", "../../"
}

// IsStatic reports whether the links are the static site's.
func (l linker) IsStatic() bool { return l.static }

// Root is the sessions list, unfiltered.
func (l linker) Root() string { return l.List("", "", 1) }

// List is a page of the sessions list.
func (l linker) List(agent, project string, page int) string {
	if l.static {
		dir := ""
		if agent != "" {
			dir = "agents/" + url.PathEscape(agent) + "/"
		}
		return l.base + dir + pageFile(page)
	}
	v := url.Values{}
	if agent != "" {
		v.Set("agent", agent)
	}
	if project != "" {
		v.Set("project", project)
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		if l.base == "" {
			return "./"
		}
		return l.base
	}
	return l.base + "?" + v.Encode()
}

// Search is the search page with a query.
func (l linker) Search(q SearchQuery) string {
	v := url.Values{}
	for k, s := range map[string]string{"q": q.Text, "agent": q.Agent, "project": q.Project, "since": q.Since, "until": q.Until, "engagement": q.Engagement, "in": q.In} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Raw {
		v.Set("fts", "1")
	}
	return l.base + "search?" + v.Encode()
}

// SearchForm is where the search form goes.
func (l linker) SearchForm() string { return l.base + "search" }

// Static is an embedded asset.
func (l linker) Static(name string) string { return l.base + "static/" + name }

// Doc is a page of a document, by its key.
func (l linker) Doc(key string, page int) string {
	return l.base + "s/" + escapeKey(key) + "/" + l.docPage(page)
}

// docPage is a document's page, relative to the document's folder of
// pages.
func (l linker) docPage(page int) string {
	if page <= 1 && !l.static {
		return ""
	}
	return pageFile(page)
}

// DocFile is a file of a document's folder of pages (files/x.png,
// document.md, round/3).
func (l linker) DocFile(key, name string) string {
	return l.base + "s/" + escapeKey(key) + "/" + name
}

// pageFile names page n of a list of pages.
func pageFile(n int) string {
	if n <= 1 {
		return "index.html"
	}
	return "page-" + strconv.Itoa(n) + ".html"
}

// escapeKey escapes each part of a document's key for a URL path.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// fragment escapes an element id for a URL's fragment.
func fragment(id string) string { return url.PathEscape(id) }
