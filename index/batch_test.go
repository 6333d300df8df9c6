package index

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rounds of several sessions put in one batch are inserted together
// when it commits, or as their text reaches stageBytes (in the middle of a
// Put, with more of its rounds given rowids and not yet staged): rounds
// that start in the same second get rowids of their own, and the index
// holds what one batch a session gives.
func TestBatchOfSessionsInOneSecond(t *testing.T) {
	for _, pad := range []int{0, stageBytes / 3} {
		t.Run(fmt.Sprintf("pad=%d", pad), func(t *testing.T) { batchOfSessionsInOneSecond(t, pad) })
	}
}

func batchOfSessionsInOneSecond(t *testing.T, pad int) {
	ctx := context.Background()
	session := func(i int) (Session, []Row) {
		id := fmt.Sprintf("s%d", i)
		var rows []Row
		for r := 1; r <= 3; r++ {
			body := fmt.Sprintf("round %d of %s", r, id) + strings.Repeat(" word", pad/5)
			rows = append(rows, Row{SessionID: id, Round: r, Started: "2026-01-02T03:04:05Z", Reply: body})
		}
		rows = append(rows, Row{SessionID: id, Round: 4, Started: "not a time", Reply: "when?"})
		return Session{SessionID: id, AgentID: "claude", Doc: id + ".md"}, rows
	}
	open := func() *DB {
		x, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		return x
	}
	one, together := open(), open()
	b, err := together.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Rollback()
	for i := 0; i < 4; i++ {
		s, rows := session(i)
		if err := one.Put(ctx, s, rows); err != nil {
			t.Fatal(err)
		}
		if err := b.Put(ctx, s, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	want, err := one.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := together.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("one batch:\n%s\none batch a session:\n%s", got, want)
	}
}

// TestRowidsOneTime: rounds that share a start cost the rowid allocator a
// few lookups each however many there are, put at once or appended one
// at a time (issue 34: it looked at every taken rowid of their slot, one
// query each); they take their slot's rowids in order, the rest a
// negative one each, as rounds of no known start do.
func TestRowidsOneTime(t *testing.T) {
	const n = 4200 // past the 4,096 rowids of a slot
	ctx := context.Background()
	for _, at := range []string{"2026-01-02T03:04:05.678Z", ""} {
		{
			x, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			s := Session{SessionID: "s", AgentID: "claude", Doc: "s.md"}
			var rows []Row
			for r := 1; r <= n; r++ {
				rows = append(rows, Row{SessionID: "s", Round: r, Started: at, Reply: fmt.Sprintf("round %d", r)})
			}
			// All but the last 50 at once, then one a batch, as appends.
			put := func(rows []Row) int {
				b, err := x.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Rollback()
				if err := b.Put(ctx, s, rows); err != nil {
					t.Fatal(err)
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				return b.lookups
			}
			if got := put(rows[:n-50]); got > 3*(n-50) {
				t.Errorf("start %q: %d lookups for %d rounds, want at most 3 a round", at, got, n-50)
			}
			for _, r := range rows[n-50:] {
				if got := put([]Row{r}); got > 3 {
					t.Errorf("start %q: %d lookups to append round %d, want at most 3", at, got, r.Round)
					break
				}
			}
			q, err := x.db.Query(`SELECT round, rowid FROM rounds ORDER BY rowid DESC`)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			var ids []int64
			for q.Next() {
				var r int
				var id int64
				q.Scan(&r, &id)
				got, ids = append(got, r), append(ids, id)
			}
			q.Close()
			var want []int
			pos := 0 // rounds with a rowid of their slot
			if at != "" {
				pos = 4096
			}
			for r := pos; r >= 1; r-- {
				want = append(want, r)
			}
			for r := pos + 1; r <= n; r++ {
				want = append(want, r)
			}
			if !slices.Equal(got, want) {
				t.Errorf("start %q: rounds newest first %v…, want %v…", at, got[:10], want[:10])
			}
			if at != "" && (ids[0]-ids[pos-1] != int64(pos-1) || ids[pos] >= 0) {
				t.Errorf("start %q: rowids %d to %d, then %d", at, ids[pos-1], ids[0], ids[pos])
			}
		}
	}
}

// TestPutUnchanged: a Put of a session's rounds as the index holds them
// (the last round of the previous update, put again) leaves the full-text
// tables as they are, and writes the session's other columns; a round
// that changed, an engagement, and a session's new project are written,
// and search finds them.
func TestPutUnchanged(t *testing.T) {
	ctx := context.Background()
	x, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	s := Session{SessionID: "s1", AgentID: "claude", Title: "first", Project: "/src/alpha", Doc: "claude/s1.md", Seen: 10}
	var rows []Row
	for r := 1; r <= 3; r++ {
		rows = append(rows, Row{SessionID: "s1", Round: r, Started: fmt.Sprintf("2026-01-02T03:04:0%dZ", r),
			UserPreview: "ask", Prompt: fmt.Sprintf("ask %d", r), Reply: fmt.Sprintf("answer %d", r), TokenCount: 7})
	}
	if err := x.Put(ctx, s, rows); err != nil {
		t.Fatal(err)
	}
	// What the full-text tables hold, byte for byte: a round deleted and
	// inserted again changes it even when its text is the same.
	fts := func() string {
		t.Helper()
		var sum string
		err := x.db.QueryRowContext(ctx, `SELECT group_concat(t || id || hex(block)) FROM (
			SELECT 'r' t, id, block FROM rounds_fts_data UNION ALL SELECT 't', id, block FROM text_fts_data
			UNION ALL SELECT 'p', id, block FROM pairs_fts_data ORDER BY 1, 2)`).Scan(&sum)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	find := func(q Query) []int {
		t.Helper()
		hits, err := x.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, h := range hits {
			got = append(got, h.Round)
		}
		slices.Sort(got)
		return got
	}
	dump := func() string {
		t.Helper()
		d, err := x.Dump(ctx) // and runs FTS5's integrity-check
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := fts()

	s.Title, s.Seen = "second", 20
	if err := x.Put(ctx, s, rows[2:]); err != nil {
		t.Fatal(err)
	}
	if got := fts(); got != before {
		t.Errorf("a round put again as it was wrote the full-text tables")
	}
	if d := dump(); !strings.Contains(d, `"s1"	"claude"	"second"	"/src/alpha"	""	""	"claude/s1.md"	"20"`) {
		t.Errorf("the session's row is not the one put last:\n%s", d)
	}

	rows[2].Reply = "answer 3 and a postscript"
	engagement := "e42"
	rows[1].EngagementID = &engagement
	if err := x.Put(ctx, s, rows[1:]); err != nil {
		t.Fatal(err)
	}
	if fts() == before {
		t.Errorf("changed rounds left the full-text tables as they were")
	}
	dump()
	if got := find(Query{Text: "postscript"}); !slices.Equal(got, []int{3}) {
		t.Errorf("search for the changed round's new word: rounds %v, want [3]", got)
	}
	if got := find(Query{Text: "answer", Engagement: "e42"}); !slices.Equal(got, []int{2}) {
		t.Errorf("search of the engagement: rounds %v, want [2]", got)
	}

	s.Project = "/src/beta"
	if err := x.Put(ctx, s, rows[2:]); err != nil {
		t.Fatal(err)
	}
	dump()
	if got := find(Query{Text: "answer", Project: "beta"}); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("search of the session's new project: rounds %v, want [1 2 3]", got)
	}
	if hits, err := x.Search(ctx, Query{Text: "answer", Project: "alpha"}); err == nil || len(hits) != 0 {
		t.Errorf("search of the session's old project: %d hits, error %v; want none, and an error that names no such project", len(hits), err)
	}
}

// TestPutOneColumnChanged: a round put again with any one column changed
// is written: the index then holds what an index that was given the
// changed round alone holds.
func TestPutOneColumnChanged(t *testing.T) {
	ctx := context.Background()
	s := Session{SessionID: "s1", AgentID: "claude", Project: "/src/alpha", Doc: "claude/s1.md", Seen: 10}
	base := Row{SessionID: "s1", Round: 1, Started: "2026-01-02T03:04:05Z", UserPreview: "ask", AgentPreview: "answer",
		ToolCount: 1, ThinkingCount: 1, ThinkingChars: 5, TokenCount: 7, RoundFile: "claude/s1/rounds/001.json",
		Prompt: "ask one", Reply: "answer one", Tools: "Bash\nls"}
	engagement := "e1"
	for name, change := range map[string]func(*Row){
		"started":        func(r *Row) { r.Started = "2026-01-02T03:04:05.500Z" },
		"engagement_id":  func(r *Row) { r.EngagementID = &engagement },
		"user_preview":   func(r *Row) { r.UserPreview = "ask again" },
		"agent_preview":  func(r *Row) { r.AgentPreview = "answer again" },
		"tool_count":     func(r *Row) { r.ToolCount = 2 },
		"thinking_count": func(r *Row) { r.ThinkingCount = 2 },
		"thinking_chars": func(r *Row) { r.ThinkingChars = 6 },
		"token_count":    func(r *Row) { r.TokenCount = 8 },
		"round_file":     func(r *Row) { r.RoundFile = "claude/s1/rounds/002.json" },
		"prompt":         func(r *Row) { r.Prompt = "ask two" },
		"reply":          func(r *Row) { r.Reply = "answer two" },
		"tools":          func(r *Row) { r.Tools = "Bash\npwd" },
	} {
		t.Run(name, func(t *testing.T) {
			changed := base
			change(&changed)
			dump := func(puts ...Row) string {
				t.Helper()
				x, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
				if err != nil {
					t.Fatal(err)
				}
				defer x.Close()
				for _, r := range puts {
					if err := x.Put(ctx, s, []Row{r}); err != nil {
						t.Fatal(err)
					}
				}
				d, err := x.Dump(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			if got, want := dump(base, changed), dump(changed); got != want {
				t.Errorf("the round put again with %s changed:\n%s\nput once as changed:\n%s", name, got, want)
			}
		})
	}
}
