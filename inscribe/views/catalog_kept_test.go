package views

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

// TestCatalogKeptRows: an agent's catalog is written from the rows kept
// the last time for the documents that did not change since (issue 33),
// and comes out as from every document's head: after a title is set, a
// document is removed, and whatever the kept rows hold when they do not
// read. check --store (VerifyStore) reads every head.
func TestCatalogKeptRows(t *testing.T) {
	s := claudeStore(t)
	defer s.CloseIndex()
	const agent = "claude"
	fromHeads := func() []byte { return catalogFromHeads(t, s, agent) }
	same := func(what string) {
		t.Helper()
		if err := s.RefreshIndexes(); err != nil {
			t.Fatal(err)
		}
		got, err := s.Catalog(agent)
		if err != nil {
			t.Fatal(err)
		}
		if want := fromHeads(); !bytes.Equal(got, want) {
			t.Errorf("%s: the catalog is not the one every head gives:\n%s\nwant\n%s", what, got, want)
		}
	}

	docs := agentDocs(t, s, agent)
	kept := readKeptRows(s.CatalogRows(agent)).rows
	if len(kept) != len(docs) {
		t.Fatalf("%d rows kept of %d documents", len(kept), len(docs))
	}

	// The kept rows are what the catalog is written from: a row changed
	// there shows, and check, which reads the heads, says the catalog is
	// not the documents'.
	id := docs[0].SessionID()
	data := s.CatalogRows(agent)
	k := kept[id]
	k.row.Title = "kept, not read"
	var b []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(line, `"`+id+`"`) {
			line = string(appendKeptRow(nil, id, k.mtime, k.size, k.row))
		}
		b = append(b, line...)
	}
	if err := s.SetCatalogRows(agent, b); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Catalog(agent); !bytes.Contains(got, []byte("kept, not read")) {
		t.Errorf("the kept row is not what the catalog shows:\n%s", got)
	}
	if errs := s.VerifyStore(); !strings.Contains(strings.Join(errString(errs), "\n"), s.CatalogName(agent)) {
		t.Errorf("check does not notice the catalog: %v", errs)
	}

	// A document changed since: its row is read again.
	if _, err := s.SetTitle(docs[0].Path(), "A title set since"); err != nil {
		t.Fatal(err)
	}
	same("a title set")
	if got, _ := s.Catalog(agent); !bytes.Contains(got, []byte("A title set since")) {
		t.Errorf("the new title is not in the catalog:\n%s", got)
	}

	// A document removed: no row.
	gone := docs[1].Path()
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(strings.TrimSuffix(gone, ".md")); err != nil {
		t.Fatal(err)
	}
	same("a document removed")
	if got, _ := s.Catalog(agent); bytes.Contains(got, []byte(docs[1].SessionID())) {
		t.Errorf("a removed document is listed")
	}

	// Kept rows that do not read, or of another header, are not used.
	for _, bad := range []string{
		"",
		"scribe catalog rows 0\n" + string(rowsOnly(s.CatalogRows(agent))),
		"scribe catalog rows 2\tnot a time\t1\n" + string(rowsOnly(s.CatalogRows(agent))),
		keptHeaderV1 + "\"x\"\t1\n\"" + docs[2].SessionID() + "\"\tnot a time\t1\t\"\"\t\"\"\t\"\"\t\"\"\t\"\"\n",
		string(s.CatalogRows(agent)[:len(s.CatalogRows(agent))/2]),
	} {
		if err := os.WriteFile(filepath.Join(s.Root, ".scribe", ".catalog-rows-"+agent+".tsv"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		same("kept rows that do not read")
	}
}

// catalogFromHeads is the catalog of an agent every document's head gives.
func catalogFromHeads(t *testing.T, s *Views, agent string) []byte {
	t.Helper()
	want, _, _, err := s.agentIndex(agent, false)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// editInPlace changes the first letters of the title of row r in the
// catalog p to as many others, and puts its time back: a version that
// reads as the one it replaced. It returns the row's line before and
// after.
func editInPlace(t *testing.T, p string, r IndexRow) (was, edited []byte) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	line := rowLine(nil, r)
	i := bytes.Index(data, line)
	if i < 0 {
		t.Fatalf("no row %q in\n%s", line, data)
	}
	edited = slices.Clone(line)
	for k := len(rowPrefix(r.ID)); k < len(rowPrefix(r.ID))+3; k++ {
		edited[k] = 'Z'
	}
	if bytes.Equal(edited, line) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(p, slices.Concat(data[:i], edited, data[i+len(line):]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	return line, edited
}

// agentDocs are an agent's documents, three at least.
func agentDocs(t *testing.T, s *Views, agent string) []*inscribe.Doc {
	t.Helper()
	docs, err := s.AgentDocs(agent)
	if err != nil || len(docs) < 3 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	return docs
}

// keptInOrder says kept rows are in order of name, as keptRowOf seeks them.
func keptInOrder(keep []byte) bool {
	lines := strings.SplitAfter(strings.TrimSuffix(string(rowsOnly(keep)), "\n"), "\n")
	return slices.IsSortedFunc(lines, func(a, b string) int {
		x, _ := keptName([]byte(a))
		y, _ := keptName([]byte(b))
		return strings.Compare(x, y)
	})
}

// rowsOnly is kept rows without their header.
func rowsOnly(data []byte) []byte {
	_, rows, _ := bytes.Cut(data, []byte("\n"))
	return rows
}

func errString(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TestCatalogPatched: an append writes its agent's catalog from the rows
// of the sessions it updated alone (PatchAfter, issue 33), and the result
// is the catalog every head gives; a document changed by another hand is
// not looked at until a full refresh (inscribe: RefreshAfter), which the
// stamps ask for; a catalog another hand changed (a pull), kept rows that
// lack a session (a new one) or do not read are refreshed in full.
func TestCatalogPatched(t *testing.T) {
	s := claudeStore(t)
	defer s.CloseIndex()
	const agent = "claude"
	docs := agentDocs(t, s, agent)
	fromHeads := func() []byte { return catalogFromHeads(t, s, agent) }
	catalog := func() []byte {
		t.Helper()
		got, err := s.Catalog(agent)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	patch := func(what string, d *inscribe.Doc, o inscribe.Outcome) {
		t.Helper()
		if err := s.PatchAfter([]inscribe.Result{{Doc: d.Path(), Outcome: o}}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	same := func(what string) {
		t.Helper()
		if got, want := catalog(), fromHeads(); !bytes.Equal(got, want) {
			t.Errorf("%s: the catalog is not the one every head gives:\n%s\nwant\n%s", what, got, want)
		}
	}
	retitle := func(d *inscribe.Doc, title string) {
		t.Helper()
		if _, err := s.SetTitle(d.Path(), title); err != nil {
			t.Fatal(err)
		}
	}

	// An update of one session: its row is replaced where it is.
	retitle(docs[0], "A title set since")
	patch("a title set", docs[0], inscribe.Appended)
	same("a title set")
	if !bytes.Contains(catalog(), []byte("A title set since")) {
		t.Errorf("the new title is not in the catalog:\n%s", catalog())
	}
	// Nothing new: nothing written.
	before, _ := os.Stat(s.CatalogName(agent))
	patch("nothing new", docs[0], inscribe.Unchanged)
	if after, _ := os.Stat(s.CatalogName(agent)); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a patch with nothing new wrote the catalog")
	}

	// A document written again with the same row (its time changed): the
	// catalog is left as it is, and its kept row takes the new time.
	later := before.ModTime().Add(time.Hour)
	if err := os.Chtimes(docs[0].Path(), later, later); err != nil {
		t.Fatal(err)
	}
	patch("the same row", docs[0], inscribe.Appended)
	if after, _ := os.Stat(s.CatalogName(agent)); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a patch that left every row as it was wrote the catalog")
	}
	if k := readKeptRows(s.CatalogRows(agent)); k.rows[docs[0].SessionID()].mtime != later.UnixNano() || k.catalog.Mtime != before.ModTime().UnixNano() {
		t.Errorf("kept row's time %d, want %d; catalog's stamp %d, want %d", k.rows[docs[0].SessionID()].mtime, later.UnixNano(), k.catalog.Mtime, before.ModTime().UnixNano())
	}
	same("the same row")

	// Another session, changed by another hand, is not looked at by the
	// patch; a full refresh (what inscribe runs) sees it, asked by the
	// stamps the patch left.
	retitle(docs[1], "Retitled behind the patch's back")
	retitle(docs[0], "A second title")
	patch("another session changed", docs[0], inscribe.Appended)
	if got := catalog(); bytes.Contains(got, []byte("Retitled behind")) || !bytes.Contains(got, []byte("A second title")) {
		t.Errorf("the patch read another session, or not its own:\n%s", got)
	}
	if err := s.RefreshAfter([]inscribe.Result{{Doc: docs[0].Path(), Outcome: inscribe.Unchanged}}); err != nil {
		t.Fatal(err)
	}
	same("a full refresh after a patch")

	// A catalog another hand changed (a pull merged a teammate's rows):
	// written again from every document.
	if err := os.WriteFile(s.CatalogName(agent), append(catalog(), "| [x](x.md) | a teammate's | 2026-01-01 | x |\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	retitle(docs[0], "A third title")
	patch("a pulled catalog", docs[0], inscribe.Appended)
	same("a pulled catalog")

	// A session the kept rows lack (a new one): every kept row is used.
	keep := s.CatalogRows(agent)
	i := bytes.Index(keep, []byte("\n\""+docs[2].SessionID()+"\""))
	j := i + 1 + bytes.IndexByte(keep[i+1:], '\n')
	if err := s.SetCatalogRows(agent, slices.Concat(keep[:i+1], keep[j+1:])); err != nil {
		t.Fatal(err)
	}
	patch("a new session", docs[2], inscribe.Inscribed)
	same("a new session")
	if n := len(readKeptRows(s.CatalogRows(agent)).rows); n != len(docs) {
		t.Errorf("%d rows kept of %d documents", n, len(docs))
	}

	// A new session that starts after every other (a session's first
	// hook): its row is added at the end of the catalog, and among the
	// kept rows where its id goes, the others left as they are. A row of
	// another session edited in the catalog in place (the same length,
	// the catalog's time put back: its stamp unchanged) stays as edited,
	// which a catalog written again from the kept rows would undo.
	rows := readKeptRows(s.CatalogRows(agent)).rows
	var lastID string
	for id, k := range rows {
		if lastID == "" || compareKeys(keyOf(rows[lastID].row), keyOf(k.row)) < 0 {
			lastID = id
		}
	}
	var others []IndexRow
	var keepOthers []byte
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		if id != lastID {
			others = append(others, rows[id].row)
			keepOthers = append(keepOthers, rows[id].line...)
		}
	}
	sortRows(others)
	if _, err := s.writeAgentRows(agent, others, keepOthers); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(catalog(), []byte(rowPrefix(lastID))) {
		t.Fatalf("the catalog still has the row of %s", lastID)
	}
	was, edited := editInPlace(t, s.CatalogName(agent), others[0])
	asEdited := func() []byte { return bytes.Replace(fromHeads(), was, edited, 1) }
	var newest *inscribe.Doc
	for _, d := range docs {
		if d.SessionID() == lastID {
			newest = d
		}
	}
	patch("a new session after the others", newest, inscribe.Inscribed)
	if got, want := catalog(), asEdited(); !bytes.Equal(got, want) || !bytes.HasSuffix(got, rowLine(nil, rows[lastID].row)) {
		t.Errorf("a new session after the others:\n%s\nwant the catalog as edited, then its row:\n%s", got, want)
	}
	var want []byte
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		want = append(want, rows[id].line...)
	}
	if got := rowsOnly(s.CatalogRows(agent)); !bytes.Equal(got, want) {
		t.Errorf("kept rows:\n%s\nwant every row in order of id:\n%s", got, want)
	}
	// The same for an update of a row: the edited row stays.
	retitle(newest, "Retitled after it was added")
	patch("an update after an edit in place", newest, inscribe.Appended)
	if got, want := catalog(), asEdited(); !bytes.Equal(got, want) || !bytes.Contains(got, []byte("Retitled after it was added")) {
		t.Errorf("an update after an edit in place:\n%s\nwant\n%s", got, want)
	}
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	same("a full refresh after an edit in place")

	// Kept rows of header 2 (rows in no set order, from before they were
	// sought): a full refresh, which keeps them in order under header 3.
	keep = s.CatalogRows(agent)
	lines := strings.SplitAfter(string(rowsOnly(keep)), "\n")
	slices.Reverse(lines)
	old := keptHeaderV2 + strings.TrimPrefix(string(keep[:bytes.IndexByte(keep, '\n')+1]), keptHeader) + strings.Join(lines, "")
	if err := os.WriteFile(filepath.Join(s.Root, ".scribe", ".catalog-rows-"+agent+".tsv"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	retitle(docs[2], "A title under header 2")
	patch("kept rows of header 2", docs[2], inscribe.Appended)
	same("kept rows of header 2")
	if keep := s.CatalogRows(agent); !bytes.HasPrefix(keep, []byte(keptHeader)) || !keptInOrder(keep) {
		t.Errorf("kept rows after a refresh:\n%s", keep)
	}

	// Kept rows out of their order: a full refresh all the same.
	keep = s.CatalogRows(agent)
	lines = strings.SplitAfter(string(rowsOnly(keep)), "\n")
	slices.Reverse(lines)
	if err := s.SetCatalogRows(agent, keep[:bytes.IndexByte(keep, '\n')+1], []byte(strings.Join(lines, ""))); err != nil {
		t.Fatal(err)
	}
	retitle(docs[2], "A title once the rows were out of order")
	patch("kept rows out of order", docs[2], inscribe.Appended)
	same("kept rows out of order")

	// Kept rows that do not read: a full refresh.
	if err := s.SetCatalogRows(agent, append(s.CatalogRows(agent), "not a row\n"...)); err != nil {
		t.Fatal(err)
	}
	retitle(docs[2], "A title once the rows broke")
	patch("kept rows that do not read", docs[2], inscribe.Appended)
	same("kept rows that do not read")
}

// TestCatalogPatchedOddDocs: documents a full refresh lists as they are
// but whose rows a patch could take for others': two documents of one
// session with one title (two rows the same), a session id changed in a
// document's head (its row's place changes though its start does not),
// and new documents whose file names are not their ids, added by one
// patch where their kept rows go side by side. After each patch the
// catalog is the one every head gives, and the kept rows are in order of
// name.
func TestCatalogPatchedOddDocs(t *testing.T) {
	s := claudeStore(t)
	defer s.CloseIndex()
	const agent = "claude"
	docs := agentDocs(t, s, agent)
	dir := filepath.Dir(docs[0].Path())
	byID := map[string]*inscribe.Doc{}
	for _, d := range docs {
		byID[d.SessionID()] = d
	}
	check := func(what string, changed ...*inscribe.Doc) {
		t.Helper()
		var results []inscribe.Result
		for _, d := range changed {
			results = append(results, inscribe.Result{Doc: d.Path(), Outcome: inscribe.Appended})
		}
		if err := s.PatchAfter(results); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got, err := s.Catalog(agent)
		if err != nil {
			t.Fatal(err)
		}
		if want := catalogFromHeads(t, s, agent); !bytes.Equal(got, want) {
			t.Errorf("%s: the catalog is not the one every head gives:\n%s\nwant\n%s", what, got, want)
		}
		if !keptInOrder(s.CatalogRows(agent)) {
			t.Errorf("%s: kept rows out of order:\n%s", what, s.CatalogRows(agent))
		}
	}
	copyDoc := func(from *inscribe.Doc, name string, edit func(*session.Meta)) *inscribe.Doc {
		t.Helper()
		data, err := os.ReadFile(from.Path())
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".md")
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := s.Doc(p)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			if _, err := d.RewriteHead(edit); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	str := func(v string) *string { return &v }

	// Two documents of one session, one title: two rows the same.
	twin := copyDoc(docs[0], docs[0].SessionID()+"-copy", nil)
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	if _, err := twin.RewriteHead(func(m *session.Meta) { m.Title = str("the copy's title") }); err != nil {
		t.Fatal(err)
	}
	check("two rows the same", twin)

	// Two rows the same that another's row parts (one session's two
	// documents an hour apart, on one date).
	at := func(id, started string) func(*session.Meta) {
		return func(m *session.Meta) { m.SessionID, m.Started, m.Title = id, str(started), str("one title") }
	}
	copyDoc(docs[1], "rx", at("same-id", "2030-01-01T01:00:00Z"))
	copyDoc(docs[1], "ry", at("other-id", "2030-01-01T02:00:00Z"))
	rz := copyDoc(docs[1], "rz", at("same-id", "2030-01-01T03:00:00Z"))
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	if _, err := rz.RewriteHead(func(m *session.Meta) { m.Title = str("the later one's title") }); err != nil {
		t.Fatal(err)
	}
	check("two rows the same, apart", rz)

	// A session id changed in a head: its row moves among the rows of
	// its start.
	a, b := byID["66666666-6666-4666-8666-666666666666"], byID["68ed1ab1-987e-4afe-abe3-794515d62774"]
	if a == nil || b == nil {
		t.Fatal("the testdata's two sessions of one start are not in the store")
	}
	if _, err := a.RewriteHead(func(m *session.Meta) { m.SessionID = "70000000" }); err != nil {
		t.Fatal(err)
	}
	check("a session id changed", a)

	// New documents whose names are not their ids, their kept rows side
	// by side: in order of name, whatever their ids.
	f1 := copyDoc(docs[1], "ff1", func(m *session.Meta) { m.SessionID, m.Started = "zz2", str("2027-01-01T00:00:00Z") })
	f2 := copyDoc(docs[1], "ff2", func(m *session.Meta) { m.SessionID, m.Started = "zz1", str("2027-01-02T00:00:00Z") })
	check("new documents named otherwise", f1, f2)
	if _, err := f1.RewriteHead(func(m *session.Meta) { m.Started = str("2027-01-04T00:00:00Z") }); err != nil {
		t.Fatal(err)
	}
	check("a start changed after", f1)
}
