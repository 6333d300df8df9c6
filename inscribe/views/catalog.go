package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
)

// IndexRow is one session in an agent's index.
type IndexRow struct {
	ID      string
	Title   string
	Started string
	Ended   string
	Summary string
}

// agentSummary is carried in a comment at the top of an agent's index, so
// the top index can be written without reading every document.
type agentSummary struct {
	Sessions int    `json:"sessions"`
	First    string `json:"first,omitempty"`
	Last     string `json:"last,omitempty"`
	Role     string `json:"role,omitempty"`
}

// RefreshAfter rewrites the index files of every agent whose documents the
// results changed, or changed in an earlier run that was stopped before
// its index files were written. It does nothing when there is none.
func (s *Views) RefreshAfter(results []inscribe.Result) error {
	agents := map[string]bool{}
	for _, r := range results {
		if r.Doc == "" || r.Outcome == inscribe.Failed {
			continue
		}
		d, err := s.Doc(r.Doc)
		if err != nil || d.Agent() == "" {
			continue
		}
		if r.Outcome != inscribe.Unchanged || s.indexStale(d) {
			agents[d.Agent()] = true
		}
	}
	if len(agents) == 0 {
		return nil
	}
	return s.RefreshIndexes(slices.Sorted(maps.Keys(agents))...)
}

// RefreshIndexes rewrites the index of each named agent (every agent when
// none is named) and then the top index. Both are derived from the
// documents and are deterministic: the same store gives the same bytes.
func (s *Views) RefreshIndexes(agents ...string) error {
	unlock, err := s.LockCatalogs(s.wait())
	if err != nil {
		return err
	}
	defer unlock()
	all, err := s.Agents()
	if err != nil {
		return err
	}
	if len(agents) == 0 {
		agents = all
	}
	s.RemoveStaleTemps(agents...)
	stamps := s.CatalogStamps()
	for _, a := range agents {
		newest, err := s.writeAgentIndex(a)
		if err != nil {
			return err
		}
		stamps[a] = newest
	}
	if err := s.writeTopIndex(all); err != nil {
		return err
	}
	return s.SetCatalogStamps(stamps)
}

// Rows returns the sessions filed under an agent, oldest first.
func (s *Views) Rows(agent string) ([]IndexRow, error) {
	rows, _, err := s.rows(agent)
	return rows, err
}

// rows also returns the newest modification time among the documents.
func (s *Views) rows(agent string) ([]IndexRow, int64, error) {
	docs, err := s.AgentDocs(agent)
	if err != nil {
		return nil, 0, err
	}
	var rows []IndexRow
	var newest int64
	for _, d := range docs {
		if t, _, err := d.Changed(); err == nil && t.UnixNano() > newest {
			newest = t.UnixNano()
		}
		od, err := d.Head()
		if err != nil {
			continue // not a document (or a broken one: check reports it)
		}
		m := od.Meta
		rows = append(rows, IndexRow{ID: m.SessionID, Title: document.DisplayTitle(m, od.Summary), Started: strOr(m.Started, ""), Ended: strOr(m.Ended, ""), Summary: od.Summary})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Started != rows[j].Started {
			return rows[i].Started < rows[j].Started
		}
		return rows[i].ID < rows[j].ID
	})
	return rows, newest, nil
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// writeAgentIndex writes an agent's index and returns the newest document
// modification time it reflects.
func (s *Views) writeAgentIndex(agent string) (int64, error) {
	data, newest, err := s.agentIndex(agent)
	if err != nil {
		return 0, err
	}
	return newest, s.WriteCatalog(agent, data)
}

// agentIndex is what an agent's index holds, and the newest document
// modification time it reflects.
func (s *Views) agentIndex(agent string) ([]byte, int64, error) {
	rows, newest, err := s.rows(agent)
	if err != nil {
		return nil, 0, err
	}
	sum := agentSummary{Sessions: len(rows)}
	if r := s.Role(agent); r != nil {
		sum.Role = r.Name
	}
	for _, r := range rows {
		if r.Started != "" && (sum.First == "" || r.Started < sum.First) {
			sum.First = r.Started
		}
		last := r.Ended
		if last == "" {
			last = r.Started
		}
		if last > sum.Last {
			sum.Last = last
		}
	}
	var buf bytes.Buffer
	document.WriteMarker(&buf, "index", sum)
	buf.WriteString("\n\n# Sessions of ")
	buf.WriteString(document.EscapeInline(agent))
	if sum.Role != "" {
		buf.WriteString(" (" + document.EscapeInline(sum.Role) + ")")
	}
	buf.WriteString("\n\n[All agents](" + inscribe.UpLink + ")\n\n")
	if len(rows) == 0 {
		buf.WriteString("No sessions.\n")
	} else {
		buf.WriteString("| session | title | date | summary |\n| --- | --- | --- | --- |\n")
		for _, r := range rows {
			date := r.Started
			if len(date) >= 10 {
				date = date[:10]
			}
			fmt.Fprintf(&buf, "| [%s](%s) | %s | %s | %s |\n", cell(r.ID), inscribe.CatalogLink(r.ID), cell(document.EscapeInline(r.Title)), cell(date), cell(document.SummaryLine(r.Summary)))
		}
	}
	return buf.Bytes(), newest, nil
}

// summaryLine is the first line of a summary, for a table cell.
// cell makes text safe in a markdown table cell. Summaries are markdown
// already and keep their formatting; only what would break the row is
// changed.
// A "|" that markdown escaping already turned into "\|" stays as it is.
func cell(s string) string {
	if !strings.ContainsAny(s, "\r\n|") {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' || c == '\n':
			b.WriteByte(' ')
		case c == '|' && slashes%2 == 0:
			b.WriteString("\\|")
		default:
			b.WriteByte(c)
		}
		if c == '\\' {
			slashes++
		} else {
			slashes = 0
		}
	}
	return strings.TrimSpace(b.String())
}

func (s *Views) writeTopIndex(agents []string) error {
	return s.WriteCatalog("", s.topIndex(agents))
}

// topIndex is what the top index holds, from the agents' indexes.
func (s *Views) topIndex(agents []string) []byte {
	var buf bytes.Buffer
	buf.WriteString("# Sessions\n\n")
	if len(agents) == 0 {
		buf.WriteString("No sessions yet.\n")
	} else {
		buf.WriteString("| agent | role | sessions | first | last |\n| --- | --- | --- | --- | --- |\n")
	}
	for _, a := range agents {
		data, err := s.Catalog(a)
		if err != nil {
			continue
		}
		var sum agentSummary
		if kind, js, ok := document.ParseMarker(firstLine(data)); ok && kind == "index" {
			json.Unmarshal(js, &sum)
		}
		// A role's name is text, escaped as the agent's own index escapes
		// it: roles.yaml may hold anything.
		role := "—"
		if sum.Role != "" {
			role = document.EscapeInline(sum.Role)
		}
		fmt.Fprintf(&buf, "| [%s](%s) | %s | %d | %s | %s |\n", cell(a), inscribe.TopLink(a), cell(role), sum.Sessions, day(sum.First), day(sum.Last))
	}
	return buf.Bytes()
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

func day(ts string) string {
	if len(ts) >= 10 {
		return ts[:10]
	}
	if ts == "" {
		return "—"
	}
	return ts
}

// The catalogs' stamps (inscribe.Store.CatalogStamps) record, per agent,
// the newest document modification time the agent's index files reflect.
// They are local bookkeeping (not published, not deterministic) and let an
// update tell cheaply whether a run that was stopped left index files
// behind their documents.

// indexStale reports whether an agent's index files may not reflect a
// document: the document changed after they were last written. A sidechain
// (a document inside its session's folder) is not in the catalog.
func (s *Views) indexStale(d *inscribe.Doc) bool {
	if !d.InAgentFolder() {
		return false
	}
	s.stampOnce.Do(func() { s.stamps = s.CatalogStamps() })
	stamp, ok := s.stamps[d.Agent()]
	if !ok {
		return true
	}
	t, _, err := d.Changed()
	return err == nil && t.UnixNano() > stamp
}
