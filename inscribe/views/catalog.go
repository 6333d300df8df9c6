package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
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
	_, err := s.refreshIndexes(agents)
	return err
}

// MendIndexes rewrites every catalog, as RefreshIndexes does, and names
// those it mended: the ones that held a git merge's conflict markers.
func (s *Views) MendIndexes() (mended []string, err error) {
	return s.refreshIndexes(nil)
}

func (s *Views) refreshIndexes(agents []string) (mended []string, err error) {
	unlock, err := s.LockCatalogs(s.wait())
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, err := s.Agents()
	if err != nil {
		return nil, err
	}
	if len(agents) == 0 {
		agents = all
	}
	s.RemoveStaleTemps(agents...)
	stamps := s.CatalogStamps()
	for _, a := range agents {
		newest, m, err := s.writeAgentIndex(a)
		if err != nil {
			return mended, err
		}
		if m {
			mended = append(mended, s.CatalogName(a))
		}
		stamps[a] = newest
	}
	if m, err := s.WriteCatalog("", s.topIndex(all)); err != nil {
		return mended, err
	} else if m {
		mended = append(mended, s.CatalogName(""))
	}
	return mended, s.SetCatalogStamps(stamps)
}

// Rows returns the sessions filed under an agent, oldest first.
func (s *Views) Rows(agent string) ([]IndexRow, error) {
	rows, _, _, err := s.rows(agent, false)
	return rows, err
}

// rows also returns the newest modification time among the documents, and
// the rows to keep for the next time (keptHeader). With useKept, the rows
// kept the last time stand for the documents that did not change since.
func (s *Views) rows(agent string, useKept bool) ([]IndexRow, int64, []byte, error) {
	docs, err := s.AgentDocs(agent)
	if err != nil {
		return nil, 0, nil, err
	}
	var kept map[string]keptRow
	if useKept {
		kept = readKeptRows(s.CatalogRows(agent))
	}
	keep := []byte(keptHeader)
	var rows []IndexRow
	var newest int64
	for _, d := range docs {
		t, size, err := d.Changed()
		if err == nil && t.UnixNano() > newest {
			newest = t.UnixNano()
		}
		k, ok := kept[d.SessionID()]
		if ok && err == nil && k.mtime == t.UnixNano() && k.size == size {
			rows = append(rows, k.row)
			keep = append(keep, k.line...)
			continue
		}
		od, herr := d.Head()
		if herr != nil {
			continue // not a document (or a broken one: check reports it)
		}
		m := od.Meta
		row := IndexRow{ID: m.SessionID, Title: document.DisplayTitle(m, od.Summary), Started: strOr(m.Started, ""), Ended: strOr(m.Ended, ""), Summary: od.Summary}
		rows = append(rows, row)
		if err == nil {
			keep = appendKeptRow(keep, d.SessionID(), t.UnixNano(), size, row)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Started != rows[j].Started {
			return rows[i].Started < rows[j].Started
		}
		return rows[i].ID < rows[j].ID
	})
	return rows, newest, keep, nil
}

// The rows of an agent's catalog are kept when it is written (the store's
// CatalogRows, per machine), each with its document's modification time
// and size: the next time, a document with the same two gives its row
// without its head being read and parsed, so that an append to one
// session of ten thousand rewrites their catalog from one head (issue 33).
// A document written since (an update, a tag, a pull) has another time,
// and is read. The catalog comes out byte for byte as from every head.
//
// One line per document: its file's name, the time (ns), the size, and
// the row's id, title, start, end and summary, each quoted as Go quotes
// strings (no tab nor line end inside), separated by tabs. keptHeader
// heads them: rows kept under another header (a scribe that made rows
// otherwise) are not used.
const keptHeader = "scribe catalog rows 1\n"

type keptRow struct {
	mtime, size int64
	row         IndexRow
	line        []byte // as kept, line end included
}

func appendKeptRow(b []byte, name string, mtime, size int64, r IndexRow) []byte {
	b = strconv.AppendQuote(b, name)
	b = append(b, '\t')
	b = strconv.AppendInt(b, mtime, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, size, 10)
	for _, f := range []string{r.ID, r.Title, r.Started, r.Ended, r.Summary} {
		b = append(b, '\t')
		b = strconv.AppendQuote(b, f)
	}
	return append(b, '\n')
}

// readKeptRows reads the rows appendKeptRow wrote, by file name. A line
// that does not read is left out (its document is read).
func readKeptRows(data []byte) map[string]keptRow {
	rest, ok := bytes.CutPrefix(data, []byte(keptHeader))
	if !ok {
		return nil
	}
	out := map[string]keptRow{}
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
			continue // cut short
		}
		f := strings.Split(string(line[:len(line)-1]), "\t")
		if len(f) != 8 {
			continue
		}
		var q [6]string
		ok := true
		for i, j := range []int{0, 3, 4, 5, 6, 7} {
			var err error
			if q[i], err = strconv.Unquote(f[j]); err != nil {
				ok = false
			}
		}
		mtime, err1 := strconv.ParseInt(f[1], 10, 64)
		size, err2 := strconv.ParseInt(f[2], 10, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		out[q[0]] = keptRow{mtime, size, IndexRow{ID: q[1], Title: q[2], Started: q[3], Ended: q[4], Summary: q[5]}, line}
	}
	return out
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// writeAgentIndex writes an agent's index and returns the newest document
// modification time it reflects, and whether the index it replaced held a
// git merge's conflict markers.
func (s *Views) writeAgentIndex(agent string) (newest int64, mended bool, err error) {
	data, newest, keep, err := s.agentIndex(agent, true)
	if err != nil {
		return 0, false, err
	}
	if mended, err = s.WriteCatalog(agent, data); err != nil {
		return 0, false, err
	}
	return newest, mended, s.SetCatalogRows(agent, keep)
}

// agentIndex is what an agent's index holds, the newest document
// modification time it reflects, and its rows to keep (rows, which says
// what useKept is).
func (s *Views) agentIndex(agent string, useKept bool) ([]byte, int64, []byte, error) {
	rows, newest, keep, err := s.rows(agent, useKept)
	if err != nil {
		return nil, 0, nil, err
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
	return buf.Bytes(), newest, keep, nil
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
