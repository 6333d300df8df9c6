package views

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// claudeStore inscribes the bundled Claude Code samples into a fresh store
// with its views (the tests of the package's internals cannot use
// internal/testkit/storetest, which imports this package).
func claudeStore(t *testing.T) *Views {
	t.Helper()
	s, err := inscribe.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	v := Open(s)
	ss, err := claude.New().Discover(testenv.Projects(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, sess := range ss {
		for _, r := range s.Update(sess, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Source, r.Err)
			}
		}
	}
	if err := v.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIndexStale: a main document newer than its agent's catalog makes the
// catalog stale; a sidechain, which the catalog does not list, does not.
func TestIndexStale(t *testing.T) {
	s := claudeStore(t)
	defer s.CloseIndex()
	main, ok := s.Find("33333333-3333-4333-8333-333333333333")
	if !ok {
		t.Fatal("the sample session is not in the store")
	}
	subs, _ := main.Sidechains()
	if len(subs) == 0 {
		t.Fatal("the sample session has no sidechain")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(subs[0].Path(), later, later); err != nil {
		t.Fatal(err)
	}
	if s.indexStale(subs[0]) {
		t.Errorf("a newer sidechain makes the catalog stale")
	}
	if err := os.Chtimes(main.Path(), later, later); err != nil {
		t.Fatal(err)
	}
	if !s.indexStale(main) {
		t.Errorf("a newer document does not make the catalog stale")
	}
}

// TestIndexedTextCapped: search indexes the first indexedPartMax bytes of
// each text of a round and the first indexedRoundMax of the round, cut
// between words, so a huge pasted prompt neither costs FTS5 gigabytes nor
// hides the replies after it.
func TestIndexedTextCapped(t *testing.T) {
	words := strings.Repeat("alpha beta gamma ", (3<<20)/17) // 3 MiB of words
	rf := &inscribe.RoundFile{Round: 1, User: &inscribe.RoundBlock{Type: "text", Text: words + "promptend"}}
	rf.Agent = append(rf.Agent, inscribe.RoundBlock{Type: "text", Text: "the reply says needle"})
	for range 6 {
		rf.Agent = append(rf.Agent, inscribe.RoundBlock{Type: "thinking", Text: words})
	}
	rf.Agent = append(rf.Agent, inscribe.RoundBlock{Type: "text", Text: "lastword"})
	row := roundRow("s", rf)
	body := row.Prompt + "\n" + row.Reply
	if len(body) > indexedRoundMax {
		t.Fatalf("body of %d bytes, over the round's cap %d", len(body), indexedRoundMax)
	}
	prompt, rest, _ := strings.Cut(body, "\n")
	if len(prompt) > indexedPartMax || len(prompt) < indexedPartMax-64 || strings.Contains(prompt, "promptend") {
		t.Errorf("the prompt's part is %d bytes, want its first %d cut between words", len(prompt), indexedPartMax)
	}
	for i, part := range strings.Split(body, "\n") {
		if part != "" && !strings.HasSuffix(part, "alpha") && !strings.HasSuffix(part, "beta") &&
			!strings.HasSuffix(part, "gamma") && part != "the reply says needle" {
			t.Errorf("part %d ends %q: a word was cut", i, part[max(0, len(part)-10):])
		}
	}
	if !strings.HasPrefix(rest, "the reply says needle\n") {
		t.Errorf("the reply after a huge prompt is not indexed: %q", rest[:min(len(rest), 40)])
	}
	if strings.Contains(body, "lastword") {
		t.Error("a text past the round's cap is indexed")
	}
	// A short round is indexed whole.
	small := &inscribe.RoundFile{Round: 1, User: &inscribe.RoundBlock{Type: "text", Text: "hello there"},
		Agent: []inscribe.RoundBlock{{Type: "text", Text: "hi"}}}
	if got := roundRow("s", small); got.Prompt != "hello there" || got.Reply != "hi" || got.Tools != "" {
		t.Errorf("small round's texts %q, %q, %q", got.Prompt, got.Reply, got.Tools)
	}
}

// TestCutText: a cut never splits a word, nor a character in a run with no
// space.
func TestCutText(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello world again", 11, "hello world"},
		{"hello world again", 12, "hello world"},
		{"hello world again", 9, "hello"},
		{"hello world again", 3, ""},
		{strings.Repeat("é", 100), 151, strings.Repeat("é", 75)},
		{strings.Repeat("日", 100), 100, strings.Repeat("日", 33)},
	} {
		if got := inscribe.CutText(c.s, c.n); got != c.want {
			t.Errorf("cutText(%.20q…, %d) = %.20q… (%d bytes), want %d bytes", c.s, c.n, got, len(got), len(c.want))
		}
	}
}

// TestNewIndexInMemory: a new document index built in memory and written
// out whole (index.CreateScratch) holds what one built in its file does,
// and the table of rounds made from it is the same.
func TestNewIndexInMemory(t *testing.T) {
	dumps := func(s *Views) map[string]string {
		t.Helper()
		defer s.CloseIndex()
		docs, err := s.allDocs()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, doc := range docs {
			db, err := index.OpenScratch(doc.IndexPath())
			if err != nil {
				t.Fatal(err)
			}
			d, err := db.Dump(context.Background())
			db.Close()
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			table, err := doc.ReadRoundsTable()
			if err != nil {
				t.Fatal(err)
			}
			out[doc.Rel()] = d + "\n" + string(table)
		}
		return out
	}
	inMemory := dumps(claudeStore(t))
	defer func(n int) { inMemoryRounds = n }(inMemoryRounds)
	inMemoryRounds = -1
	inFile := dumps(claudeStore(t))
	if len(inFile) == 0 || len(inMemory) != len(inFile) {
		t.Fatalf("%d documents indexed in memory, %d in their files", len(inMemory), len(inFile))
	}
	for doc, want := range inFile {
		if got := inMemory[doc]; got != want {
			t.Errorf("%s: built in memory:\n%s\nin its file:\n%s", doc, got, want)
		}
	}
}

// TestPlannedUpdates: updates of many documents read the store index's
// marks at once, and a document the index holds stale or not at all is
// still indexed again; updates of a few ask of each.
func TestPlannedUpdates(t *testing.T) {
	v := claudeStore(t)
	docs, err := v.allDocs()
	if err != nil {
		t.Fatal(err)
	}
	marks := func(t *testing.T) map[string]index.Mark {
		t.Helper()
		sdb, _, err := v.storeIndex()
		if err != nil {
			t.Fatal(err)
		}
		m, err := sdb.SessionMarks(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	want := marks(t)
	if len(want) != len(docs) {
		t.Fatalf("the index marks %d documents, the store holds %d", len(want), len(docs))
	}
	// One document's mark behind its note, another's row gone.
	var stale, gone string
	for key := range want {
		if stale == "" {
			stale = key
		} else if gone == "" {
			gone = key
		}
	}
	spoil := func() {
		t.Helper()
		v.CloseIndex()
		db, err := sql.Open("sqlite", v.IndexPath())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`UPDATE sessions SET seen = 1 WHERE session_id = ?`, stale); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`DELETE FROM sessions WHERE session_id = ?`, gone); err != nil {
			t.Fatal(err)
		}
	}

	for _, planned := range []int{1, 1000} {
		t.Run(fmt.Sprint(planned), func(t *testing.T) {
			spoil()
			v.Plan(planned)
			for _, md := range docs {
				if _, err := v.IndexDoc(md, false); err != nil {
					t.Fatal(err)
				}
			}
			if got := marks(t); !maps.Equal(got, want) {
				t.Errorf("marks after the updates: %v, want %v", got, want)
			}
			if read := v.marks != nil; read != (planned > marksMinPlanned) {
				t.Errorf("%d documents planned: marks read at once %v", planned, read)
			}
		})
	}
}

// TestToolText: a tool's input is indexed as its values, one a line, and
// its result by its start and end: what a person reads, without JSON's
// keys and escapes.
func TestToolText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"command":"npm install\n\"x\"","description":"Install"}`, "npm install\n\"x\"\nInstall"},
		{`{"a":{"b":[1,"two",{"c":"three"}],"d":true},"e":"four"}`, "1\ntwo\nthree\nfour"},
		{`["x",{"k":"v"}]`, "x\nv"},
		{`not json`, "not json"},
		{``, ""},
	} {
		if got := jsonText(json.RawMessage(c.in)); got != c.want {
			t.Errorf("jsonText(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	out := "START " + strings.Repeat("line of output\n", 10000) + "FAILED: 3 tests"
	rf := &inscribe.RoundFile{Round: 1, Agent: []inscribe.RoundBlock{{Type: "tool_use", Name: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`),
		Result: &inscribe.RoundResult{IsError: true, Content: []inscribe.RoundBlock{{Type: "text", Text: out}}}}}}
	row := roundRow("s", rf)
	if !strings.HasPrefix(row.Tools, "Bash\ngo test ./...\nSTART line of output") || !strings.HasSuffix(row.Tools, "line of output\nFAILED: 3 tests") ||
		len(row.Tools) > inscribe.ResultHead+inscribe.ResultTail+100 || !strings.Contains(row.Tools, "\n…\n") {
		t.Errorf("tools' text of %d bytes: %q…%q", len(row.Tools), row.Tools[:40], row.Tools[len(row.Tools)-40:])
	}
	if row.Prompt != "" || row.Reply != "" || row.ToolCount != 1 {
		t.Errorf("row %+v", row)
	}
}
