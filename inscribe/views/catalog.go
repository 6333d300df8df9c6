package views

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
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

// PatchAfter brings the catalogs up to date after an append, from the
// documents the results name alone (issue 33: an append to one session of
// ten thousand must not look at the other 9,999): the row of each such
// session is replaced in its agent's kept rows, unless the kept one is
// still its document's (the same modification time and size: a run
// stopped before its catalogs were written left it behind), and the
// agent's catalog is written again from the kept rows, with the store's.
// The rows of the other documents are trusted as kept: a document changed
// or removed by another hand since is seen by the next full refresh
// (inscribe, reindex, repair; RefreshAfter), which the catalogs' stamps,
// left as they were, ask for. An agent whose kept rows are missing or do
// not all read, or whose catalog is not the one they were kept with (a
// git pull merged a teammate's rows into it, a person edited it), is
// refreshed in full, as RefreshAfter does.
func (s *Views) PatchAfter(results []inscribe.Result) error {
	touched := map[string]map[string]*inscribe.Doc{} // agent, session id: the session's document
	for _, r := range results {
		if r.Doc == "" || r.Outcome == inscribe.Failed {
			continue
		}
		d, err := s.Doc(r.Doc)
		if err != nil {
			continue
		}
		if p := d.Parent(); p != nil {
			d = p // a sidechain's or a continuation's session
		}
		if !d.InAgentFolder() {
			continue
		}
		if touched[d.Agent()] == nil {
			touched[d.Agent()] = map[string]*inscribe.Doc{}
		}
		touched[d.Agent()][d.SessionID()] = d
	}
	if len(touched) == 0 {
		return nil
	}
	unlock, err := s.LockCatalogs(s.wait())
	if err != nil {
		return err
	}
	defer unlock()
	s.RemoveStaleTemps() // the store's folder and its own: not the agents'
	var full []string
	wrote := false
	for _, agent := range slices.Sorted(maps.Keys(touched)) {
		changed, ok, err := s.patchAgentIndex(agent, touched[agent])
		if err != nil {
			return err
		}
		if !ok {
			full = append(full, agent)
		}
		wrote = wrote || changed
	}
	if len(full) > 0 {
		_, err := s.writeIndexes(full)
		return err
	}
	if !wrote {
		return nil
	}
	all, err := s.Agents()
	if err != nil {
		return err
	}
	_, err = s.WriteCatalog("", s.topIndex(all))
	return err
}

// patchAgentIndex is PatchAfter for one agent and its documents docs, by
// session id. changed says whether a document of the agent changed (the
// store's catalog is then written again, if it differs); ok is false when
// the agent needs a full refresh instead.
//
// A session whose row is kept and whose start did not change keeps its
// place in the catalog (rows are in order of start): its line there and in
// the kept rows is replaced where it is, and the catalog's summary line
// (the sessions' first and last times) is moved forward, without reading
// the other rows. A new session that starts after every other (the first
// hook of a session just begun) is added at the end of the catalog, and
// in its place among the kept rows. A new session that starts before
// another, a start that changed, or a last time that went back writes the
// catalog again from every kept row.
//
// Neither file is read whole: the kept rows are in order of session id,
// the catalog's rows in order of start, and each row sought is found by a
// search (keptRowOf, catalogRowOf) that reads a few dozen lines of ten
// thousand. What a search cannot read, or a row not where its order puts
// it, asks for the full refresh, which writes both files again.
func (s *Views) patchAgentIndex(agent string, docs map[string]*inscribe.Doc) (changed, ok bool, err error) {
	// Both files are read, and closed, before either is written (Windows
	// renames over no open file).
	p, next := s.planPatch(agent, docs)
	switch next {
	case patchNothing:
		return false, true, nil
	case patchFull:
		return false, false, nil
	case patchAllRows:
		return s.patchAllRows(agent, docs)
	}
	now := p.catalog
	if p.catEdits != nil {
		now, err = s.SpliceCatalog(agent, p.catalog, p.catEdits)
		if errors.Is(err, inscribe.ErrMoved) {
			return false, false, nil
		} else if err != nil {
			return false, false, err
		}
	}
	// A document changed: the store's catalog is compared with what it
	// should say (and mended, if a run stopped before it wrote it), even
	// when this one's rows came out the same.
	changed = true
	// The kept rows' first line is their stamp: the catalog's version.
	edits := append(p.keptEdits, inscribe.Splice{At: 0, End: p.keptHead, With: keptHead(now)})
	if err := s.SpliceCatalogRows(agent, p.kept, edits); errors.Is(err, inscribe.ErrMoved) {
		return changed, false, nil
	} else if err != nil {
		return changed, false, err
	}
	return changed, true, nil
}

// What patchAgentIndex does after planPatch.
const (
	patchNothing = iota // every kept row is its document's
	patchFull           // the agent's full refresh
	patchAllRows        // the catalog written again from every kept row
	patchSplice         // the edits planned
)

// A patch is what planPatch found to write: the edits of the catalog
// (none if it comes out the same) and of the kept rows, on the versions
// read, and the length of the kept rows' first line.
type patch struct {
	catalog, kept       inscribe.FileStamp
	catEdits, keptEdits []inscribe.Splice
	keptHead            int64
}

// planPatch reads what patchAgentIndex writes, and says what it does.
func (s *Views) planPatch(agent string, docs map[string]*inscribe.Doc) (p patch, next int) {
	kept, err := s.OpenCatalogRows(agent)
	if err != nil {
		return p, patchFull
	}
	defer kept.Close()
	head, err := kept.Line(0)
	if err != nil {
		return p, patchFull
	}
	p.kept, p.keptHead = kept.Stamp, int64(len(head))
	stamp, stamped := keptStamp(head)
	// Each document's version and kept row, and whether a kept row is
	// behind it: its time or size differ, or it has none (or none that
	// reads).
	type docKept struct {
		v inscribe.FileStamp
		l keptLine
	}
	rows := make(map[string]docKept, len(docs))
	behind, fresh := false, false // a kept row is behind; a session has none
	for id, d := range docs {
		t, size, err := d.Changed()
		if err != nil {
			return p, patchFull // gone: the full refresh says what is there
		}
		v := inscribe.FileStamp{Size: size, Mtime: t.UnixNano()}
		l, err := keptRowOf(kept, p.keptHead, id)
		if err != nil {
			return p, patchFull
		}
		rows[id] = docKept{v, l}
		fresh = fresh || !l.found
		behind = behind || !l.found || !l.ok || l.k.mtime != v.Mtime || l.k.size != v.Size
	}
	if !behind {
		// Nothing to write: a catalog is written when a document changed
		// (damage to it is left for check --store to name).
		return p, patchNothing
	}
	catalog, err := s.OpenCatalog(agent)
	if err != nil {
		return p, patchFull
	}
	defer catalog.Close()
	p.catalog = catalog.Stamp
	if !stamped || catalog.Stamp != stamp {
		return p, patchFull
	}
	top, rowsAt, err := catalogTop(catalog)
	if err != nil {
		return p, patchFull
	}
	sum, sumOK := catalogSummary(top)
	if r := s.Role(agent); !sumOK || (r == nil) != (sum.Role == "") || (r != nil && r.Name != sum.Role) {
		return p, patchAllRows
	}
	// The place of the catalog's last row, which a new session must follow
	// (none if the catalog does not end in a row).
	var last rowKey
	lastOK := false
	if fresh && rowsAt >= 0 {
		if last, lastOK, err = lastRow(catalog, kept, p.keptHead); err != nil {
			return p, patchFull
		}
	}
	// The rows replaced, in the catalog and in the kept rows.
	same := true // the catalog's rows come out as they are
	var added []keptRow
	addAt := map[int64][]namedLine{} // new kept rows, by where they go
	for id, d := range docs {
		v, l := rows[id].v, rows[id].l
		if !l.found {
			// A new session: added at the end if it starts after every
			// kept row.
			row, err := docRow(d)
			if err != nil {
				return p, patchFull
			}
			if row.Started == "" || !lastOK || compareKeys(last, keyOf(row)) >= 0 {
				return p, patchAllRows
			}
			k := keptRow{v.Mtime, v.Size, row, appendKeptRow(nil, id, v.Mtime, v.Size, row)}
			added = append(added, k)
			addAt[l.at] = append(addAt[l.at], namedLine{id, k.line})
			continue
		}
		if !l.ok || rowsAt < 0 {
			return p, patchFull
		}
		if l.k.mtime == v.Mtime && l.k.size == v.Size {
			continue
		}
		row, err := docRow(d)
		if err != nil {
			return p, patchFull
		}
		if keyOf(row) != keyOf(l.k.row) || lastTime(row) < lastTime(l.k.row) && lastTime(l.k.row) == sum.Last {
			return p, patchAllRows
		}
		old := rowLine(nil, l.k.row)
		at, err := catalogRowOf(catalog, rowsAt, old)
		if err != nil {
			return p, patchFull
		}
		line := rowLine(nil, row)
		same = same && bytes.Equal(line, old)
		p.catEdits = append(p.catEdits, inscribe.Splice{At: at, End: at + int64(len(old)), With: line})
		p.keptEdits = append(p.keptEdits, inscribe.Splice{At: l.at, End: l.at + int64(len(l.k.line)), With: appendKeptRow(nil, id, v.Mtime, v.Size, row)})
		sum.Last = max(sum.Last, lastTime(row))
	}
	if len(added) > 0 {
		// The catalog's new rows go at its end, in order of start; each
		// kept row where its name goes, several there in order of name.
		slices.SortFunc(added, func(a, b keptRow) int { return compareKeys(keyOf(a.row), keyOf(b.row)) })
		var rows []byte
		for _, k := range added {
			rows = rowLine(rows, k.row)
			sum.Sessions++
			if sum.First == "" || k.row.Started < sum.First {
				sum.First = k.row.Started
			}
			sum.Last = max(sum.Last, lastTime(k.row))
		}
		same = false
		p.catEdits = append(p.catEdits, inscribe.Splice{At: catalog.Stamp.Size, End: catalog.Stamp.Size, With: rows})
		for at, ks := range addAt {
			p.keptEdits = append(p.keptEdits, inscribe.Splice{At: at, End: at, With: joinByName(ks)})
		}
	}
	if len(p.keptEdits) == 0 {
		return p, patchNothing
	}
	// A row was found after a line end: the catalog's first line ends.
	var newTop bytes.Buffer
	document.WriteMarker(&newTop, "index", sum)
	newTop.WriteByte('\n')
	if same && bytes.Equal(newTop.Bytes(), top) {
		p.catEdits = nil // the catalog comes out as it is
	} else {
		p.catEdits = append(p.catEdits, inscribe.Splice{At: 0, End: int64(len(top)), With: newTop.Bytes()})
	}
	return p, patchSplice
}

// A rowKey is a row's place in its catalog: rows are in order of start,
// then id.
type rowKey struct{ started, id string }

func keyOf(r IndexRow) rowKey { return rowKey{r.Started, r.ID} }

func compareKeys(a, b rowKey) int {
	if c := strings.Compare(a.started, b.started); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// errOutOfOrder says a catalog's or kept rows' line is not one its order
// can place: the agent gets a full refresh.
var errOutOfOrder = errors.New("a row out of its order")

// A keptLine is a session's kept row, or where one would go: found says
// there is one, ok that it reads (k), at where it starts (or where the
// session's would be put).
type keptLine struct {
	at        int64
	found, ok bool
	k         keptRow
}

// keptRowOf finds the kept row of session id among the rows after the
// kept rows' first line (from): they are in order of id (appendKeptRow's
// name), each id once.
func keptRowOf(kept *inscribe.CatalogLines, from int64, id string) (keptLine, error) {
	bad := false
	at, err := kept.Search(from, kept.Size(), func(line []byte) bool {
		name, ok := keptName(line)
		bad = bad || !ok
		return ok && name < id
	})
	if err != nil || bad {
		return keptLine{}, cmp.Or(err, errOutOfOrder)
	}
	l := keptLine{at: at}
	line, err := kept.Line(at)
	if err != nil {
		return keptLine{}, err
	}
	if name, ok := keptName(line); !ok || name != id {
		return l, nil // none: at is where it would go
	}
	l.found = true
	if line[len(line)-1] == '\n' {
		_, l.k, l.ok = parseKeptRow(line)
		l.k.line = bytes.Clone(line) // line is the reader's buffer
	}
	// A second row of the session would be next: none is written.
	if next, err := kept.Line(at + int64(len(line))); err != nil {
		return keptLine{}, err
	} else if name, _ := keptName(next); name == id {
		return keptLine{}, errOutOfOrder
	}
	return l, nil
}

// keptName is the name a kept row begins with (appendKeptRow's), unquoted.
func keptName(line []byte) (string, bool) {
	q, _, ok := bytes.Cut(line, []byte("\t"))
	if !ok || len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1]), true
	}
	name, err := strconv.Unquote(string(q))
	return name, err == nil
}

// catalogTop reads the first lines of an agent's catalog (renderAgentIndex's):
// the summary line, and where its rows start after the table's head; -1
// when it has none.
func catalogTop(catalog *inscribe.CatalogLines) (top []byte, rowsAt int64, err error) {
	line, err := catalog.Line(0)
	if err != nil || line == nil {
		return nil, 0, cmp.Or(err, errOutOfOrder)
	}
	top = bytes.Clone(line)
	at := int64(len(line))
	for range 12 { // the title, the link up, the table's head, blank lines between
		line, err := catalog.Line(at)
		if err != nil || line == nil {
			return top, -1, err
		}
		at += int64(len(line))
		if string(line) == catalogTableRule {
			return top, at, nil
		}
	}
	return top, -1, nil
}

// catalogTableRule ends the head of a catalog's table: its rows follow.
const catalogTableRule = "| --- | --- | --- | --- |\n"

// catalogRowOf finds the line want (rowLine's) among a catalog's rows,
// which start at from and are in order of start: searches for the rows of
// its date, then the line itself among them (Find: a day of thousands of
// sessions is read as fast as it is compared, not a line at a time). A
// second line the same among them (two documents of one session, one
// title) is the full refresh's to place.
func catalogRowOf(catalog *inscribe.CatalogLines, from int64, want []byte) (int64, error) {
	date, ok := rowDate(want)
	if !ok {
		return 0, errOutOfOrder
	}
	bad := false
	before := func(later bool) func(line []byte) bool {
		return func(line []byte) bool {
			d, ok := rowDate(line)
			bad = bad || !ok
			c := bytes.Compare(d, date)
			return ok && (c < 0 || later && c == 0)
		}
	}
	at, err := catalog.Search(from, catalog.Size(), before(false))
	if err != nil || bad {
		return 0, cmp.Or(err, errOutOfOrder)
	}
	end, err := catalog.Search(at, catalog.Size(), before(true))
	if err != nil || bad {
		return 0, cmp.Or(err, errOutOfOrder)
	}
	at, err = catalog.Find(at, end, want)
	if err != nil || at < 0 {
		return 0, cmp.Or(err, errOutOfOrder)
	}
	if twin, err := catalog.Find(at+int64(len(want)), end, want); err != nil || twin >= 0 {
		return 0, cmp.Or(err, errOutOfOrder)
	}
	return at, nil
}

// rowDate is the date cell of a catalog's row (rowLine's): the cell after
// the title's, which holds no " | " (a bar in a cell is escaped).
func rowDate(line []byte) ([]byte, bool) {
	prefix := rowPrefixOf(line)
	if prefix == nil {
		return nil, false
	}
	_, rest, ok := bytes.Cut(line[len(prefix):], []byte(" | "))
	if !ok {
		return nil, false
	}
	date, _, ok := bytes.Cut(rest, []byte(" | "))
	return date, ok
}

// lastRow is the place of the catalog's last row, which its kept row
// gives: a row of a greater key follows every other. ok is false unless
// the catalog ends in a row, line end included, and the kept rows in a
// line end, so that lines added to both follow the others.
func lastRow(catalog, kept *inscribe.CatalogLines, keptFrom int64) (key rowKey, ok bool, err error) {
	_, last, err := catalog.Last()
	if err != nil {
		return key, false, err
	}
	prefix := rowPrefixOf(last)
	if prefix == nil || last[len(last)-1] != '\n' {
		return key, false, nil
	}
	if _, line, err := kept.Last(); err != nil || len(line) == 0 || line[len(line)-1] != '\n' {
		return key, false, err
	}
	id, ok := rowIDOf(prefix)
	if !ok {
		return key, false, nil
	}
	l, err := keptRowOf(kept, keptFrom, id)
	if err != nil || !l.found || !l.ok || !bytes.Equal(rowLine(nil, l.k.row), last) {
		return key, false, cmp.Or(err, errOutOfOrder)
	}
	return keyOf(l.k.row), true, nil
}

// rowIDOf is the session id a catalog row's prefix (rowPrefixOf's) links
// to.
func rowIDOf(prefix []byte) (string, bool) {
	link := prefix[:len(prefix)-len(rowLinkEnd)]
	i := bytes.LastIndex(link, []byte("]("))
	if i < 0 {
		return "", false
	}
	id := string(link[i+2:])
	return id, rowPrefix(id) == string(prefix)
}

// patchAllRows is patchAgentIndex when the catalog is written again from
// every kept row, and the rows of docs read again.
func (s *Views) patchAllRows(agent string, docs map[string]*inscribe.Doc) (changed, ok bool, err error) {
	kept := readKeptRows(s.CatalogRows(agent))
	if kept.bad > 0 {
		return false, false, nil
	}
	for id, d := range docs {
		t, size, err := d.Changed()
		if err != nil {
			return false, false, nil
		}
		k, ok := kept.rows[id]
		if ok && k.mtime == t.UnixNano() && k.size == size {
			continue
		}
		row, err := docRow(d)
		if err != nil {
			return false, false, nil
		}
		kept.rows[id] = keptRow{t.UnixNano(), size, row, appendKeptRow(nil, id, t.UnixNano(), size, row)}
		changed = true
	}
	if !changed {
		return false, true, nil
	}
	rows := make([]IndexRow, 0, len(kept.rows))
	var keep []byte
	for _, name := range slices.Sorted(maps.Keys(kept.rows)) {
		k := kept.rows[name]
		rows = append(rows, k.row)
		keep = append(keep, k.line...)
	}
	sortRows(rows)
	if _, err := s.writeAgentRows(agent, rows, keep); err != nil {
		return false, false, err
	}
	return true, true, nil
}

// catalogSummary reads the summary an agent's catalog begins with.
func catalogSummary(catalog []byte) (agentSummary, bool) {
	var sum agentSummary
	kind, js, ok := document.ParseMarker(firstLine(catalog))
	if !ok || kind != "index" || json.Unmarshal(js, &sum) != nil {
		return sum, false
	}
	return sum, true
}

// lastTime is a row's part in its catalog's last time.
func lastTime(r IndexRow) string {
	if r.Ended == "" {
		return r.Started
	}
	return r.Ended
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
	return s.writeIndexes(agents)
}

// writeIndexes is refreshIndexes under the catalogs' lock.
func (s *Views) writeIndexes(agents []string) (mended []string, err error) {
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
// the rows to keep for the next time (keptRows). With useKept, the rows
// kept the last time stand for the documents that did not change since.
func (s *Views) rows(agent string, useKept bool) ([]IndexRow, int64, []byte, error) {
	docs, err := s.AgentDocs(agent)
	if err != nil {
		return nil, 0, nil, err
	}
	// In order of name, as patchAllRows takes them: rows of one place
	// (two documents of one session) keep it.
	slices.SortFunc(docs, func(a, b *inscribe.Doc) int { return strings.Compare(a.SessionID(), b.SessionID()) })
	var kept keptRows
	if useKept {
		kept = readKeptRows(s.CatalogRows(agent))
	}
	var keep []namedLine // put in order of session id, as keptRowOf finds them
	var rows []IndexRow
	var newest int64
	for _, d := range docs {
		t, size, err := d.Changed()
		if err == nil && t.UnixNano() > newest {
			newest = t.UnixNano()
		}
		k, ok := kept.rows[d.SessionID()]
		if ok && err == nil && k.mtime == t.UnixNano() && k.size == size {
			rows = append(rows, k.row)
			keep = append(keep, namedLine{d.SessionID(), k.line})
			continue
		}
		row, herr := docRow(d)
		if herr != nil {
			continue // not a document (or a broken one: check reports it)
		}
		rows = append(rows, row)
		if err == nil {
			keep = append(keep, namedLine{d.SessionID(), appendKeptRow(nil, d.SessionID(), t.UnixNano(), size, row)})
		}
	}
	sortRows(rows)
	return rows, newest, joinByName(keep), nil
}

// A namedLine is a kept row and its name.
type namedLine struct {
	name string
	line []byte
}

// joinByName joins kept rows in order of name, the kept rows' order.
func joinByName(ls []namedLine) []byte {
	slices.SortFunc(ls, func(a, b namedLine) int { return strings.Compare(a.name, b.name) })
	var b []byte
	for _, l := range ls {
		b = append(b, l.line...)
	}
	return b
}

// docRow is a document's row in its agent's catalog, from its head.
func docRow(d *inscribe.Doc) (IndexRow, error) {
	od, err := d.Head()
	if err != nil {
		return IndexRow{}, err
	}
	m := od.Meta
	return IndexRow{ID: m.SessionID, Title: document.DisplayTitle(m, od.Summary), Started: strOr(m.Started, ""), Ended: strOr(m.Ended, ""), Summary: od.Summary}, nil
}

// sortRows puts a catalog's rows in its order: by start, then id.
// Rows of one place (two documents of one session) keep the order they
// were given in: their documents' names'.
func sortRows(rows []IndexRow) {
	slices.SortStableFunc(rows, func(a, b IndexRow) int { return compareKeys(keyOf(a), keyOf(b)) })
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
// strings (no tab nor line end inside), separated by tabs, in order of
// name (the session's id) so that an append finds a row by a search
// (keptRowOf). A header line heads them: "scribe catalog rows 3", a tab,
// and the modification time (ns) and size of the catalog written from
// them, tab-separated. An append trusts the rows for every document it did
// not write when the catalog is still that one (patchAgentIndex); one that
// another hand changed (a git pull that merged a teammate's rows, an edit)
// is written again from every document. Rows kept under header 1 (before
// the catalog's stamp) or 2 (rows in no set order) stand for unchanged
// documents in a full refresh, which writes them again under 3; rows under
// any other header are not used.
const (
	keptHeaderV1 = "scribe catalog rows 1\n"
	keptHeaderV2 = "scribe catalog rows 2\t"
	keptHeader   = "scribe catalog rows 3\t"
)

type keptRow struct {
	mtime, size int64
	row         IndexRow
	line        []byte // as kept, line end included
}

// keptRows are the rows read back, by file name, and the catalog's stamp
// they were kept with.
type keptRows struct {
	rows map[string]keptRow
	// stamped is set under header 3: catalog is the catalog's stamp when
	// the rows were kept.
	stamped bool
	catalog inscribe.FileStamp
	// bad counts the lines that did not read (their documents are read).
	bad int
}

// keptHead is the header of rows kept with a catalog of that stamp.
func keptHead(catalog inscribe.FileStamp) []byte {
	return fmt.Appendf(nil, "%s%d\t%d\n", keptHeader, catalog.Mtime, catalog.Size)
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

// keptStamp reads the catalog's stamp in the header of kept rows.
func keptStamp(data []byte) (inscribe.FileStamp, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(keptHeader))
	if !ok {
		return inscribe.FileStamp{}, false
	}
	line, _, ok := bytes.Cut(rest, []byte("\n"))
	t, size, ok2 := bytes.Cut(line, []byte("\t"))
	var stamp inscribe.FileStamp
	var err1, err2 error
	stamp.Mtime, err1 = strconv.ParseInt(string(t), 10, 64)
	stamp.Size, err2 = strconv.ParseInt(string(size), 10, 64)
	return stamp, ok && ok2 && err1 == nil && err2 == nil
}

// readKeptRows reads the rows appendKeptRow wrote, by file name. A line
// that does not read is left out (and counted).
func readKeptRows(data []byte) keptRows {
	var k keptRows
	rest, ok := bytes.CutPrefix(data, []byte(keptHeaderV1))
	if !ok {
		if !bytes.HasPrefix(data, []byte(keptHeader)) && !bytes.HasPrefix(data, []byte(keptHeaderV2)) {
			return k
		}
		k.catalog, k.stamped = keptStamp(data)
		if _, rest, ok = bytes.Cut(data, []byte("\n")); !ok {
			return k
		}
	}
	k.rows = map[string]keptRow{}
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			k.bad++
			break // cut short
		}
		name, r, ok := parseKeptRow(line)
		if !ok {
			k.bad++
			continue
		}
		k.rows[name] = r
	}
	return k
}

// parseKeptRow reads one line of kept rows, its line end included.
func parseKeptRow(line []byte) (string, keptRow, bool) {
	f := strings.Split(string(line[:len(line)-1]), "\t")
	if len(f) != 8 {
		return "", keptRow{}, false
	}
	var q [6]string
	for i, j := range []int{0, 3, 4, 5, 6, 7} {
		var err error
		if q[i], err = strconv.Unquote(f[j]); err != nil {
			return "", keptRow{}, false
		}
	}
	mtime, err1 := strconv.ParseInt(f[1], 10, 64)
	size, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return "", keptRow{}, false
	}
	return q[0], keptRow{mtime, size, IndexRow{ID: q[1], Title: q[2], Started: q[3], Ended: q[4], Summary: q[5]}, line}, true
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
	rows, newest, keep, err := s.rows(agent, true)
	if err != nil {
		return 0, false, err
	}
	mended, err = s.writeAgentRows(agent, rows, keep)
	return newest, mended, err
}

// writeAgentRows writes an agent's index of rows, and keeps keep (the
// kept rows, without their header) with the catalog's stamp.
func (s *Views) writeAgentRows(agent string, rows []IndexRow, keep []byte) (mended bool, err error) {
	return s.writeAgentCatalog(agent, s.renderAgentIndex(agent, rows), keep)
}

// writeAgentCatalog writes an agent's catalog, and keeps keep with its
// stamp.
func (s *Views) writeAgentCatalog(agent string, catalog, keep []byte) (mended bool, err error) {
	if mended, err = s.WriteCatalog(agent, catalog); err != nil {
		return false, err
	}
	fi, err := os.Stat(s.CatalogName(agent))
	if err != nil {
		return false, err
	}
	return mended, s.SetCatalogRows(agent, keptHead(inscribe.FileStamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}), keep)
}

// agentIndex is what an agent's index holds, the newest document
// modification time it reflects, and its rows to keep (rows, which says
// what useKept is).
func (s *Views) agentIndex(agent string, useKept bool) ([]byte, int64, []byte, error) {
	rows, newest, keep, err := s.rows(agent, useKept)
	if err != nil {
		return nil, 0, nil, err
	}
	return s.renderAgentIndex(agent, rows), newest, keep, nil
}

// renderAgentIndex is an agent's index of rows (in their order).
func (s *Views) renderAgentIndex(agent string, rows []IndexRow) []byte {
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
		buf.WriteString("| session | title | date | summary |\n" + catalogTableRule)
		b := buf.Bytes()
		for _, r := range rows {
			b = rowLine(b, r)
		}
		return b
	}
	return buf.Bytes()
}

// rowPrefix is how a session's line in its agent's catalog begins.
func rowPrefix(id string) string {
	return "| [" + cell(id) + "](" + inscribe.CatalogLink(id) + ") | "
}

// rowPrefixOf is the rowPrefix a line of a catalog begins with, if any.
// A row's link ends so (rowLinkEnd), and its id's cell cannot hold it: a
// bar in a cell is escaped.
func rowPrefixOf(line []byte) []byte {
	if !bytes.HasPrefix(line, []byte("| [")) {
		return nil
	}
	if i := bytes.Index(line, rowLinkEnd); i >= 0 {
		return line[:i+len(rowLinkEnd)]
	}
	return nil
}

// rowLinkEnd ends the link of a row of a catalog (rowPrefix).
var rowLinkEnd = []byte(inscribe.CatalogLink("") + ") | ")

// rowLine appends a row's line of its agent's catalog to b.
func rowLine(b []byte, r IndexRow) []byte {
	date := r.Started
	if len(date) >= 10 {
		date = date[:10]
	}
	b = append(b, rowPrefix(r.ID)...)
	b = append(b, cell(document.EscapeInline(r.Title))...)
	b = append(b, " | "...)
	b = append(b, cell(date)...)
	b = append(b, " | "...)
	b = append(b, cell(document.SummaryLine(r.Summary))...)
	return append(b, " |\n"...)
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
		head, err := s.CatalogHead(a)
		if err != nil {
			continue
		}
		var sum agentSummary
		if kind, js, ok := document.ParseMarker(head); ok && kind == "index" {
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
