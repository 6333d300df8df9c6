package views_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/session/source"
)

// dumps returns the dumps of a store's indexes: sessions.db, and every
// document's session.db.
func dumps(t *testing.T, s *views.Views) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := s.CloseIndex(); err != nil {
		t.Fatal(err)
	}
	docs, err := s.Docs()
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{s.IndexPath()}
	for _, d := range docs {
		paths = append(paths, d.IndexPath())
		subs, _ := d.Sidechains()
		for _, sc := range subs {
			paths = append(paths, sc.IndexPath())
		}
	}
	for _, p := range paths {
		db, err := index.Open(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		d, err := db.Dump(context.Background())
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(s.Root, p)
		out[rel] = d
	}
	return out
}

func sameDumps(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if got[p] != w {
			gl, wl := strings.Split(got[p], "\n"), strings.Split(w, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Errorf("%s: %s differs at line %d:\n got %s\nwant %s", what, p, i+1, gl[i], wl[i])
					break
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d indexes, want %d", what, len(got), len(want))
	}
}

// TestReindexEqualsIncremental: the indexes an inscription keeps up to
// date, append by append, equal the ones reindex builds from the round
// files.
func TestReindexEqualsIncremental(t *testing.T) {
	l := newLive(t)
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	other, orel := sample(t, "-home-dev-src-tools-thinking", "11111111-1111-4111-8111-111111111111")
	for _, n := range []int{5, 12, 30, 40} {
		l.put(rel, prefixLines(whole, n))
		l.put(orel, prefixLines(other, n))
		l.update(false)
	}
	l.put(rel, whole)
	l.put(orel, other)
	l.update(false)
	s := l.store()
	if _, err := s.Tag(storetest.Doc(t, filepath.Join(s.SessionsDir(), "claude", "22222222-2222-4222-8222-222222222222.md")), []int{2, 3}, "console-work"); err != nil {
		t.Fatal(err)
	}
	incremental := dumps(t, s)
	storeRel, _ := filepath.Rel(s.Root, s.IndexPath())
	if !strings.Contains(incremental[storeRel], `"console-work"`) {
		t.Fatal("the tag is not in the index")
	}
	if _, err := s.Reindex(); err != nil {
		t.Fatal(err)
	}
	sameDumps(t, "after reindex", dumps(t, s), incremental)
}

// TestChunkedIndexing: indexes written two rounds at a time (as a long
// session's are, a thousand at a time: rowsChunk), by an inscription, by
// appends and by a reindex, are those written at once, and so are the
// tables of rounds; check --store's verification of the views, which
// reads them a chunk at a time too, finds them sound.
func TestChunkedIndexing(t *testing.T) {
	build := func(chunk int) (map[string]string, map[string]string) {
		defer views.SetRowsChunk(chunk)()
		l := newLive(t)
		whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
		other, orel := sample(t, "-home-dev-src-tools-thinking", "11111111-1111-4111-8111-111111111111")
		for _, n := range []int{12, 40} {
			l.put(rel, prefixLines(whole, n))
			l.update(false)
		}
		l.put(rel, whole)
		l.put(orel, other)
		l.update(false)
		s := l.store()
		tables := map[string]string{}
		docs, err := s.Docs()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if errs := s.VerifyDoc(d); len(errs) > 0 {
				t.Errorf("rows of %d rounds at a time: %s: %v", chunk, d.Path(), errs)
			}
			b, err := d.ReadRoundsTable()
			if err != nil {
				t.Fatal(err)
			}
			tables[filepath.Base(d.Path())] = string(b)
		}
		incremental := dumps(t, s)
		if _, err := s.Reindex(); err != nil {
			t.Fatal(err)
		}
		sameDumps(t, fmt.Sprintf("rows of %d rounds at a time, after reindex", chunk), dumps(t, s), incremental)
		return incremental, tables
	}
	wantDumps, wantTables := build(1024)
	gotDumps, gotTables := build(2)
	sameDumps(t, "rows of 2 rounds at a time", gotDumps, wantDumps)
	if !maps.Equal(gotTables, wantTables) || len(wantTables) != 2 || !strings.Contains(wantTables["22222222-2222-4222-8222-222222222222.md"], "| [4](") {
		t.Errorf("tables of rounds, rows of 2 rounds at a time:\n%v\nwant (of at least 4 rounds):\n%v", gotTables, wantTables)
	}
}

// TestSeedQuery: Method 53's example query runs on the store's index.
func TestSeedQuery(t *testing.T) {
	s, _ := sampleStore(t)
	md := filepath.Join(s.SessionsDir(), "claude", "22222222-2222-4222-8222-222222222222.md")
	if _, err := s.Tag(storetest.Doc(t, md), []int{4, 2}, "console-work"); err != nil {
		t.Fatal(err)
	}
	s.CloseIndex()
	db, err := sql.Open("sqlite", s.IndexPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT * FROM rounds WHERE engagement_id = 'console-work' ORDER BY started`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rows.Scan(ptrs...)
		got = append(got, int(vals[1].(int64)))
	}
	if len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Errorf("rounds %v, want [2 4]", got)
	}
	// The document follows: its frontmatter lists the engagement, its
	// table of rounds shows the tags, its tags file keeps them.
	doc, _ := os.ReadFile(md)
	if !strings.Contains(string(doc), "engagements:\n  - id: console-work\n") {
		t.Error("the frontmatter does not list the engagement")
	}
	table, _ := os.ReadFile(filepath.Join(folderOf(md), "index.md"))
	if strings.Count(string(table), "| console-work |") != 2 {
		t.Errorf("index.md does not show the tags:\n%s", table)
	}
	tags, _ := os.ReadFile(filepath.Join(folderOf(md), "tags.tsv"))
	if !strings.Contains(string(tags), "2\tconsole-work\n4\tconsole-work\n") {
		t.Errorf("tags.tsv: %q", tags)
	}
	// Untagging removes what scribe added.
	if _, err := s.Tag(storetest.Doc(t, md), []int{2, 4}, ""); err != nil {
		t.Fatal(err)
	}
	doc, _ = os.ReadFile(md)
	if !strings.Contains(string(doc), "engagements: []\n") {
		t.Error("untag left the engagement in the frontmatter")
	}
	if _, err := os.Stat(filepath.Join(folderOf(md), "tags.tsv")); !errors.Is(err, os.ErrNotExist) {
		t.Error("untag left the tags file")
	}
}

// TestIndexLossAndDamage: tags survive the loss of every database; a
// missing or damaged database is rebuilt with a message, and a search
// never comes back silently empty.
func TestIndexLossAndDamage(t *testing.T) {
	s, _ := sampleStore(t)
	md := filepath.Join(s.SessionsDir(), "claude", "22222222-2222-4222-8222-222222222222.md")
	if _, err := s.Tag(storetest.Doc(t, md), []int{1}, "console-work"); err != nil {
		t.Fatal(err)
	}
	want := dumps(t, s)
	before, err := s.Search(index.Query{Text: "question"})
	if err != nil || len(before) == 0 {
		t.Fatalf("search: %v %v", before, err)
	}
	s.CloseIndex()

	// Lost: every database deleted. A search brings the index back, tags
	// included.
	for p := range want {
		os.Remove(filepath.Join(s.Root, p))
	}
	s2, _ := reopen(s.Root)
	if _, err := s2.EnsureIndex(); err != nil {
		t.Fatal(err)
	}
	after, err := s2.Search(index.Query{Text: "question"})
	if err != nil || len(after) != len(before) {
		t.Fatalf("after loss: %d hits (%v), want %d", len(after), err, len(before))
	}
	tagged, err := s2.Search(index.Query{Text: "question", Engagement: "console-work"})
	if err != nil || len(tagged) != 1 {
		t.Errorf("the tag did not survive the loss: %v %v", tagged, err)
	}
	sameDumps(t, "after loss", dumps(t, s2), want)

	// Damaged: garbage in the store's index, an old version in a
	// document's. Both are rebuilt, with a warning.
	os.WriteFile(s.IndexPath(), []byte("this is not a database"), 0o644)
	old, _ := sql.Open("sqlite", storetest.Doc(t, md).IndexPath())
	old.Exec("PRAGMA user_version = 0")
	old.Close()
	s3, _ := reopen(s.Root)
	warnings, err := s3.EnsureIndex()
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) == 0 || !strings.Contains(warnings[0].Error(), "rebuilding every index from the round files") {
		t.Errorf("no warning about the rebuild: %v", warnings)
	}
	sameDumps(t, "after damage", dumps(t, s3), want)

	// A document's index damaged alone is rebuilt when next used.
	os.WriteFile(storetest.Doc(t, md).IndexPath(), []byte("garbage"), 0o644)
	s4, _ := reopen(s.Root)
	if _, err := s4.Tag(storetest.Doc(t, md), []int{1}, "console-work"); err != nil {
		t.Fatal(err)
	}
	sameDumps(t, "after a document's index was damaged", dumps(t, s4), want)
}

// TestSearch: ranking, filters, snippets, and a clear error for a query the
// full-text engine cannot read.
func TestSearch(t *testing.T) {
	s, _ := sampleStore(t)
	defer s.CloseIndex()
	hits, err := s.Search(index.Query{Text: "find python files"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("%v %v", hits, err)
	}
	h := hits[0]
	if !strings.HasPrefix(h.SessionID, "33333333") || h.Round != 1 || !strings.HasSuffix(h.Path, "#round-1") || h.In != "prompts" ||
		!strings.Contains(h.Snippet, index.HighlightStart+"find python files"+index.HighlightEnd) || h.Title != "find python files using a subagent" {
		t.Errorf("first hit %+v", h)
	}
	for _, c := range []struct {
		q    index.Query
		want int
	}{
		// Claude Code's multiturn sample asks five questions, Codex's
		// four, Gemini CLI's five (the first in the round its session
		// context opens, which is that round's prompt).
		{index.Query{Text: "question"}, 14},
		{index.Query{Text: "question", Agent: "claude"}, 5},
		{index.Query{Text: "question", Agent: "codex"}, 4},
		{index.Query{Text: "question", Agent: "gemini"}, 5},
		{index.Query{Text: "question", Project: "multiturn", Agent: "claude"}, 5},
		{index.Query{Text: "question", Project: "subagent"}, 0},
		{index.Query{Text: "question", Agent: "claude", Since: time.Date(2026, 11, 22, 9, 26, 21, 0, time.UTC)}, 3},
		{index.Query{Text: "question", Until: time.Date(2026, 11, 22, 9, 26, 21, 0, time.UTC)}, 2},
		{index.Query{Text: "question", Limit: 2}, 2},
		{index.Query{Text: `"fourth question" OR "fifth question"`, Raw: true, Agent: "claude"}, 2},
		{index.Query{Text: `"fourth question" OR "fifth question"`, Raw: true}, 4},
		// What a Gemini session's history no longer holds is still
		// found: the tail a /rewind dropped, the turns a compression
		// summarised.
		{index.Query{Text: `"Branch reply three (old)"`, Raw: true, Agent: "gemini"}, 1},
		{index.Query{Text: `"Sentence 1.0 about topic 1"`, Raw: true, Agent: "gemini", Project: "compress"}, 1},
	} {
		hits, err := s.Search(c.q)
		if err != nil || len(hits) != c.want {
			t.Errorf("%+v: %d hits (%v), want %d", c.q, len(hits), err, c.want)
		}
	}
	for _, bad := range []string{`foo-bar`, `"unclosed`, `AND`, `nope:x`} {
		_, err := s.Search(index.Query{Text: bad, Raw: true})
		var qe *index.QueryError
		if !errors.As(err, &qe) {
			t.Errorf("%q: %v, want a QueryError", bad, err)
		}
	}
}

// TestParseRounds: round selections, and clear errors for bad ones.
func TestParseRounds(t *testing.T) {
	for spec, want := range map[string]string{"3": "[3]", "2-4": "[2 3 4]", "all": "[1 2 3 4 5]", "5,1-2": "[1 2 5]"} {
		got, err := views.ParseRounds(spec, 5)
		if err != nil || strings.Trim(strings.Join(strings.Fields(strings.Trim(fmtInts(got), "[]")), " "), " ") != strings.Trim(want, "[]") {
			t.Errorf("%q: %v %v, want %s", spec, got, err, want)
		}
	}
	for _, bad := range []string{"0", "6", "4-2", "x", "3-9", ""} {
		if _, err := views.ParseRounds(bad, 5); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func fmtInts(xs []int) string {
	var sb strings.Builder
	for _, x := range xs {
		sb.WriteString(" ")
		sb.WriteString(string(rune('0' + x)))
	}
	return sb.String()
}

// TestContext: a view with rounds in full, as references and omitted.
func TestContext(t *testing.T) {
	s, _ := sampleStore(t)
	defer s.CloseIndex()
	md := filepath.Join(s.SessionsDir(), "claude", "22222222-2222-4222-8222-222222222222.md")
	if _, err := s.Tag(storetest.Doc(t, md), []int{3}, "console-work"); err != nil {
		t.Fatal(err)
	}
	// A view writes nothing, even where an index is missing.
	if err := os.Remove(storetest.Doc(t, md).IndexPath()); err != nil {
		t.Fatal(err)
	}
	before := stamps(t, s.Root)
	var buf strings.Builder
	if err := s.Context(storetest.Doc(t, md), views.ContextSpec{Engagement: "console-work", Omit: "5", Full: "1"}, &buf); err != nil {
		t.Fatal(err)
	}
	if after := stamps(t, s.Root); !maps.Equal(after, before) {
		t.Error("context changed the store")
	}
	if _, err := os.Stat(storetest.Doc(t, md).IndexPath()); err == nil {
		t.Error("context rebuilt the session's index")
	}
	out := buf.String()
	for _, want := range []string{"## Round 1\n", "## Round 3\n", "\nthird question\n", "- Round 2, ", "- Round 4, ", "Rounds: 2 in full, 2 as references, 1 omitted."} {
		if !strings.Contains(out, want) {
			t.Errorf("the view lacks %q", want)
		}
	}
	for _, not := range []string{"## Round 2\n", "Round 5", "fifth question"} {
		if strings.Contains(out, not) {
			t.Errorf("the view has %q", not)
		}
	}
}

// TestContextDetail: the detail levels of a view, and the identities it
// keeps only when asked.
func TestContextDetail(t *testing.T) {
	s, _ := sampleStore(t)
	defer s.CloseIndex()
	md := filepath.Join(s.SessionsDir(), "claude", "11111111-1111-4111-8111-111111111111.md")
	view := func(spec views.ContextSpec) string {
		var buf strings.Builder
		if err := s.Context(storetest.Doc(t, md), spec, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	full, conv, prompts := view(views.ContextSpec{}), view(views.ContextSpec{Detail: document.DetailConversation}), view(views.ContextSpec{Detail: document.DetailPrompts})
	ids := view(views.ContextSpec{KeepIDs: true})
	for name, v := range map[string]string{"full": full, "conversation": conv, "prompts": prompts} {
		if strings.Contains(v, "<!-- scribe") || strings.Contains(v, `<a id="`) || strings.Contains(v, "scribe:") {
			t.Errorf("the %s view keeps scribe's identities or markers", name)
		}
		if !strings.Contains(v, "\ncreate hello.py please\n") {
			t.Errorf("the %s view lacks the first prompt", name)
		}
	}
	if !strings.Contains(ids, `<!-- scribe {"ids":["05449008-f63d-4907-b42c-169348e1b972"]`) || !strings.Contains(ids, "```bash scribe:field command") {
		t.Error("the view with --keep-ids lacks the identities and markers")
	}
	for _, want := range []string{"- Tool: Bash — List files\n- Tool: Write", "- Tool: Bash — Fail on purpose (exit 3)\n", "\nDone. I created `hello.py`.\n"} {
		if !strings.Contains(conv, want) {
			t.Errorf("the conversation view lacks %q", want)
		}
	}
	for _, not := range []string{"Thinking", "System reminder", "ls -la"} {
		if strings.Contains(conv, not) {
			t.Errorf("the conversation view has %q", not)
		}
	}
	if strings.Contains(prompts, "· assistant") || strings.Contains(prompts, "Done. I created") {
		t.Error("the prompts view has a reply")
	}
	if !(len(prompts) < len(conv) && len(conv) < len(full) && len(full) < len(ids)) {
		t.Errorf("sizes: prompts %d, conversation %d, full %d, with ids %d", len(prompts), len(conv), len(full), len(ids))
	}
}

// TestEnsureIndexStamp: once every document is found indexed, a search
// lists them again only when the names in an agent's folder have changed:
// a document put in the store by a process that did not index it is
// indexed by the next search; while the folders have the same names (an
// update renames a document into place), the index is trusted and nothing
// is listed.
func TestEnsureIndexStamp(t *testing.T) {
	s, _ := sampleStore(t)
	claude := filepath.Join(s.SessionsDir(), "claude")
	age := func() { // every agent's folder, as an hour ago
		past := time.Now().Add(-time.Hour)
		agents, _ := filepath.Glob(filepath.Join(s.SessionsDir(), "*", ""))
		for _, a := range agents {
			os.Chtimes(a, past, past)
		}
	}
	search := func() []views.Hit {
		t.Helper()
		s2, _ := reopen(s.Root)
		defer s2.CloseIndex()
		if _, err := s2.EnsureIndex(); err != nil {
			t.Fatal(err)
		}
		hits, err := s2.Search(index.Query{Text: "question"})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	age()
	want := search()
	if len(want) == 0 {
		t.Fatal("no hits")
	}
	md := filepath.Join(s.SessionsDir(), want[0].Doc)
	lose := func() {
		t.Helper()
		db, err := sql.Open("sqlite", s.IndexPath())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{`DELETE FROM rounds WHERE session_id = ?`, `DELETE FROM sessions WHERE session_id = ?`} {
			if _, err := db.Exec(q, want[0].SessionID); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Lost from the index, the folder as it was, or modified with the
	// same names: the stamp is trusted.
	lose()
	if got := search(); len(got) >= len(want) {
		t.Errorf("the documents were listed again with the folder unchanged: %d hits, want fewer than %d", len(got), len(want))
	}
	now := time.Now()
	os.Chtimes(claude, now, now)
	if got := search(); len(got) >= len(want) {
		t.Errorf("the documents were listed again with the same names: %d hits, want fewer than %d", len(got), len(want))
	}
	// The document taken out and put back, as a copy or a sync would, by
	// a process that does not index: found.
	away := t.TempDir()
	for _, p := range []string{md, folderOf(md)} {
		if err := os.Rename(p, filepath.Join(away, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	age()
	search()
	for _, p := range []string{md, folderOf(md)} {
		if err := os.Rename(filepath.Join(away, filepath.Base(p)), p); err != nil {
			t.Fatal(err)
		}
	}
	if got := search(); len(got) != len(want) {
		t.Errorf("after the document was put back: %d hits, want %d", len(got), len(want))
	}
}

// TestSearchNeverWaits: a search (EnsureSearchable, then Search) reads the
// index as it is while another scribe writes it, where EnsureIndex waits
// for the writer (here, past its wait: a *BusyError), and leaves a
// document another scribe holds to it, until it lets go.
func TestSearchNeverWaits(t *testing.T) {
	s, _ := sampleStore(t)
	root := s.Root
	sdbPath := s.IndexPath()
	s.CloseIndex()
	ctx := context.Background()
	writer, err := index.Open(sdbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	// The folders' stamp is gone: a search lists the documents and records
	// it again, a write (of folders old enough to record).
	if err := writer.SetFoldersStamp(ctx, ""); err != nil {
		t.Fatal(err)
	}
	agents, _ := filepath.Glob(filepath.Join(s.SessionsDir(), "*"))
	for _, a := range agents {
		hour := time.Now().Add(-time.Hour)
		os.Chtimes(a, hour, hour)
	}
	b, err := writer.Begin(ctx) // another scribe's reindex, under way
	if err != nil {
		t.Fatal(err)
	}
	search := func(f func(*views.Views) ([]error, error)) ([]views.Hit, error) {
		v, err := reopen(root)
		if err != nil {
			t.Fatal(err)
		}
		defer v.CloseIndex()
		v.Wait = 100 * time.Millisecond
		if _, err := f(v); err != nil {
			return nil, err
		}
		return v.Search(index.Query{Text: "third question", Agent: "claude"})
	}
	if _, err := search((*views.Views).EnsureIndex); !index.IsBusy(err) {
		t.Errorf("EnsureIndex while another scribe writes the index: %v, want a *BusyError", err)
	}
	if hits, err := search((*views.Views).EnsureSearchable); err != nil || len(hits) == 0 {
		t.Errorf("a search while another scribe writes the index: %d hits, %v", len(hits), err)
	}
	b.Rollback()

	// A document another scribe holds is left to it.
	md := filepath.Join(s.SessionsDir(), "claude", "22222222-2222-4222-8222-222222222222.md")
	writer.Close()
	for _, p := range []string{sdbPath, sdbPath + "-wal", sdbPath + "-shm"} {
		os.Remove(p)
	}
	d, err := s.Doc(md)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.Lock(0)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := search((*views.Views).EnsureSearchable)
	if err != nil || len(hits) != 0 {
		t.Errorf("a document another scribe holds: %d hits (%v), want none yet", len(hits), err)
	}
	unlock()
	hits, err = search((*views.Views).EnsureSearchable)
	if err != nil || len(hits) == 0 || !strings.HasPrefix(hits[0].SessionID, "2222") {
		t.Errorf("once let go: %v (%v), want the multiturn session's round", hits, err)
	}
}

// TestSnippetsAsWritten: every snippet of a search of the bundled samples
// is text of its round as it was written (the prompt, the replies, the
// tool calls' values and their results), on one line: no JSON escape that
// was not in the text (issue 30: tool inputs were searched as JSON, and
// their snippets read "…n```bash\nnpm install\n```…").
func TestSnippetsAsWritten(t *testing.T) {
	s, _ := sampleStore(t)
	defer s.CloseIndex()
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	checked := 0
	for _, q := range []string{"the", "file", "hello", "print", "command", "error", "exit", "json", "path", "total", "question", "run", "red.png", "a", "to"} {
		hits, err := s.Search(index.Query{Text: q, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			d, err := s.Doc(filepath.Join(s.SessionsDir(), filepath.FromSlash(h.Doc)))
			if err != nil {
				t.Fatal(err)
			}
			rf, err := d.RoundHeader(h.Round)
			if err != nil {
				t.Fatal(err)
			}
			// The round's texts, as written: the prompt, the replies and
			// thinking, and every string of the tool calls and their
			// results (in no order: a tool's snippet is checked word by
			// word).
			cols := map[string][]string{}
			if rf.User != nil {
				cols["prompts"] = append(cols["prompts"], rf.User.Text)
			}
			var walk func(v any)
			walk = func(v any) {
				switch v := v.(type) {
				case string:
					cols["tools"] = append(cols["tools"], v)
				case []any:
					for _, x := range v {
						walk(x)
					}
				case map[string]any:
					for _, x := range v {
						walk(x)
					}
				}
			}
			for _, b := range rf.Agent {
				if b.Type != "tool_use" {
					cols["replies"] = append(cols["replies"], b.Text)
					continue
				}
				cols["tools"] = append(cols["tools"], b.Name)
				var in any
				if json.Unmarshal(b.Input, &in) == nil {
					walk(in)
				}
				if b.Result != nil {
					for _, c := range b.Result.Content {
						cols["tools"] = append(cols["tools"], c.Text)
						var raw any
						if json.Unmarshal([]byte(c.Text), &raw) == nil {
							walk(raw)
						}
					}
				}
			}
			text := oneLine(strings.Join(cols[h.In], "\n"))
			plain := strings.NewReplacer(index.HighlightStart, "", index.HighlightEnd, "").Replace(h.Snippet)
			for _, piece := range strings.Split(plain, "…") {
				piece = strings.TrimSpace(piece)
				found := strings.Contains(text, piece)
				if h.In == "tools" {
					found = true
					for _, w := range strings.Fields(piece) {
						found = found && strings.Contains(text, w)
					}
				}
				if !found {
					t.Errorf("%q: %s round %d (%s): snippet %q is not its text as written", q, h.Doc, h.Round, h.In, piece)
				}
				for i := 0; i+1 < len(piece); i++ {
					if esc := piece[i : i+2]; piece[i] == '\\' && !strings.Contains(text, esc) {
						t.Errorf("%q: %s round %d: snippet %q has %q, which its text has not", q, h.Doc, h.Round, piece, esc)
					}
				}
				if strings.ContainsAny(piece, "\n\r\t") {
					t.Errorf("%q: %s round %d: snippet %q is not on one line", q, h.Doc, h.Round, piece)
				}
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("%d snippets checked", checked)
	}
}

// TestRepairKeepsSoundIndexes: a repair that finds a document sound keeps
// its index as it is (rebuilding a sound one was two thirds of a repair's
// time: issue 33); one that mends the document, or finds its index
// damaged or gone, rebuilds it. A table of the test's own in the
// document's index tells whether it was rebuilt.
func TestRepairKeepsSoundIndexes(t *testing.T) {
	s, _ := sampleStore(t)
	md := filepath.Join(s.SessionsDir(), "claude", "22222222-2222-4222-8222-222222222222.md")
	s.Formats = []source.Adapter{storetest.Claude, storetest.Codex, storetest.Gemini}
	d := storetest.Doc(t, md)
	if _, err := s.Tag(d, []int{1}, "console-work"); err != nil {
		t.Fatal(err)
	}
	want := dumps(t, s)
	mark := func() {
		t.Helper()
		db, err := sql.Open("sqlite", d.IndexPath())
		if err == nil {
			_, err = db.Exec("CREATE TABLE IF NOT EXISTS kept (x)")
			db.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	kept := func() bool {
		t.Helper()
		db, err := sql.Open("sqlite", d.IndexPath())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'kept'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	repair := func(what string) {
		t.Helper()
		src, err := s.RepairSource(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Update(src, inscribe.Options{Repair: true, Agent: d.Agent()}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", what, r.Err)
			}
		}
		if err := s.CloseIndex(); err != nil {
			t.Fatal(err)
		}
	}
	without := func(m map[string]string) map[string]string {
		m = maps.Clone(m)
		for k, v := range m {
			m[k] = strings.ReplaceAll(v, "CREATE TABLE kept (x);\n", "")
		}
		return m
	}

	mark()
	repair("a sound document")
	if !kept() {
		t.Error("the repair of a sound document rebuilt its index")
	}
	sameDumps(t, "a sound document repaired", without(dumps(t, s)), want)

	rounds, _ := filepath.Glob(filepath.Join(filepath.Dir(md), "22222222-2222-4222-8222-222222222222", "rounds", "*"))
	if len(rounds) == 0 {
		t.Fatal("no round files")
	}
	os.Remove(rounds[0])
	repair("a round file deleted")
	if kept() {
		t.Error("the repair of a document whose round file was deleted kept its index")
	}
	sameDumps(t, "a round file mended", dumps(t, s), want)

	os.Remove(d.IndexPath())
	repair("the document's index deleted")
	sameDumps(t, "its index deleted", dumps(t, s), want)

	mark()
	os.WriteFile(d.IndexPath(), []byte("garbage"), 0o644)
	repair("the document's index damaged")
	if kept() {
		t.Error("a damaged index was kept")
	}
	sameDumps(t, "its index damaged", dumps(t, s), want)

	// Tags the file holds and the index does not (a tag whose indexing
	// failed): the index is rebuilt with them.
	mark()
	if err := d.SetTags(map[int]string{1: "console-work", 2: "eng-x"}); err != nil {
		t.Fatal(err)
	}
	repair("tags ahead of the index")
	if kept() {
		t.Error("the repair kept an index that lacks a tag of tags.tsv")
	}
	db, err := index.OpenScratch(d.IndexPath())
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.RoundTags(context.Background(), d.SessionID())
	db.Close()
	if err != nil || got[2] != "eng-x" {
		t.Errorf("the index's tags after the repair: %v %v", got, err)
	}

	// A tag the store's index lost (its update failed after the
	// document's own): the indexes are rebuilt with it.
	mark()
	store, err := sql.Open("sqlite", s.IndexPath())
	if err == nil {
		_, err = store.Exec("UPDATE rounds SET engagement_id = NULL WHERE session_id = ? AND round = 2", d.SessionID())
		store.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	repair("a tag the store's index lost")
	if kept() {
		t.Error("the repair kept the indexes where the store's lacks a tag of tags.tsv")
	}
	if hits, err := s.Search(index.Query{Text: "second question", Engagement: "eng-x"}); err != nil || len(hits) != 1 {
		t.Errorf("search of the tag after the repair: %v %v", hits, err)
	}
}
