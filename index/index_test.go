package index

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Processes that create the same index at once all open it: one puts it in
// place, the others find it and check it.
func TestOpenConcurrently(t *testing.T) {
	for _, shared := range []bool{true, false} {
		for round := 0; round < 10; round++ {
			p := filepath.Join(t.TempDir(), "sessions.db")
			var wg sync.WaitGroup
			errs := make([]error, 8)
			dbs := make([]*DB, 8)
			for i := range dbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dbs[i], errs[i] = open(p, shared, DefaultWait, 0)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("shared=%v: opener %d: %v", shared, i, err)
				}
			}
			ctx := context.Background()
			row := Row{SessionID: "s", Round: 1, Reply: "hello", RoundFile: "r"}
			if err := dbs[0].Put(ctx, Session{SessionID: "s", Doc: "d"}, []Row{row}); err != nil {
				t.Fatal(err)
			}
			if n, err := dbs[len(dbs)-1].MaxRound(ctx, "s"); err != nil || n != 1 {
				t.Fatalf("shared=%v: another opener sees round %d (%v), want 1", shared, n, err)
			}
			for _, db := range dbs {
				db.Close()
			}
		}
	}
}

// An index built in memory is written to its path by Close once a batch
// has committed to it, as a database that opens and checks clean, and not
// at all otherwise.
func TestCreateScratch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sess := Session{SessionID: "s", AgentID: "claude", Doc: "claude/s.md"}
	rows := []Row{{SessionID: "s", Round: 1, Started: "2026-01-02T03:04:05.000Z", UserPreview: "hello there", RoundFile: "claude/s/rounds/001.json"}}

	unused := filepath.Join(dir, "unused.db")
	x, err := CreateScratch(unused)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unused); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an index nothing was committed to was written: %v", err)
	}

	p := filepath.Join(dir, "session.db")
	x, err = CreateScratch(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Put(ctx, sess, rows); err != nil {
		t.Fatal(err)
	}
	want, err := x.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("written before Close: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dumpChecked(t, p); got != want || !strings.Contains(got, "hello there") {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
}

// dumpChecked opens a document's index, checks that it reads whole and
// returns its dump.
func dumpChecked(t *testing.T, p string) string {
	t.Helper()
	y, err := OpenScratch(p)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := y.QuickCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := y.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// An index rebuilt beside the old one (ReplaceScratch) takes its place
// only when Close follows a committed batch: until then, and when nothing
// was committed, the old index is there as it was, and no temporary file
// is left. The old index's rollback journal, which a kill mid-transaction
// leaves hot, goes with it, so it is never played back into the new one.
func TestReplaceScratch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "session.db")
	put := func(x *DB, preview string) {
		t.Helper()
		sess := Session{SessionID: "s", AgentID: "claude", Doc: "claude/s.md"}
		rows := []Row{{SessionID: "s", Round: 1, Started: "2026-01-02T03:04:05.000Z", UserPreview: preview, RoundFile: "claude/s/rounds/001.json"}}
		if err := x.Put(ctx, sess, rows); err != nil {
			t.Fatal(err)
		}
	}
	dump := func() string { return dumpChecked(t, p) }
	old, err := OpenScratch(p)
	if err != nil {
		t.Fatal(err)
	}
	put(old, "the old index")
	old.Close()

	x, err := ReplaceScratch(p, DefaultWait)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dump(); !strings.Contains(got, "the old index") {
		t.Errorf("a rebuild nothing was committed to replaced the index:\n%s", got)
	}

	// A hot journal of the old index, as a kill leaves it.
	os.WriteFile(p+"-journal", []byte("a journal of the old index"), 0o600)
	x, err = ReplaceScratch(p, DefaultWait)
	if err != nil {
		t.Fatal(err)
	}
	put(x, "the new index")
	if got := dump(); !strings.Contains(got, "the old index") {
		t.Errorf("replaced before Close:\n%s", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + "-journal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old index's journal is still there: %v", err)
	}
	if got := dump(); !strings.Contains(got, "the new index") || strings.Contains(got, "the old index") {
		t.Errorf("after Close:\n%s", got)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "session.db" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestSessionSeen: what an update asks of every document is answered from
// the sessions table, and a document the index lacks is not known.
func TestSessionSeen(t *testing.T) {
	ctx := context.Background()
	x, err := OpenScratch(filepath.Join(t.TempDir(), "session.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, _, ok, err := x.SessionSeen(ctx, "s"); ok || err != nil {
		t.Errorf("an empty index knows s: %v, %v", ok, err)
	}
	for _, seen := range []int64{120, 4096} {
		if err := x.Put(ctx, Session{SessionID: "s", AgentID: "claude", Title: "t", Doc: "claude/s.md", Seen: seen}, nil); err != nil {
			t.Fatal(err)
		}
		doc, got, ok, err := x.SessionSeen(ctx, "s")
		if doc != "claude/s.md" || got != seen || !ok || err != nil {
			t.Errorf("after a Put of seen %d: %q, %d, %v, %v", seen, doc, got, ok, err)
		}
	}
	if _, _, ok, _ := x.SessionSeen(ctx, "other"); ok {
		t.Error("an index of s knows other")
	}
	// SessionMarks answers for every document at once, as SessionSeen does
	// for each; EstimateSessions is at least their number.
	if err := x.Put(ctx, Session{SessionID: "s/agent-a", AgentID: "claude", Title: "t", Doc: "claude/s/agent-a.md", Seen: 7}, nil); err != nil {
		t.Fatal(err)
	}
	marks, err := x.SessionMarks(ctx)
	want := map[string]Mark{"s": {"claude/s.md", 4096}, "s/agent-a": {"claude/s/agent-a.md", 7}}
	if err != nil || !maps.Equal(marks, want) {
		t.Errorf("SessionMarks: %v, %v; want %v", marks, err, want)
	}
	if n, err := x.EstimateSessions(ctx); n < 2 || err != nil {
		t.Errorf("EstimateSessions: %d, %v; want at least 2", n, err)
	}
}

// A brief process's index (OpenBrief) keeps a small page cache, and
// searches it as any other: the same hits, though its cache holds a
// fraction of the pages a search reads.
func TestOpenBrief(t *testing.T) {
	words := strings.Fields("the error file test data config function deploy index search go run")
	var bodies []string
	for i := range 3000 {
		var b strings.Builder
		for j := range 60 {
			b.WriteString(words[(i*7+j*j)%len(words)] + " ")
		}
		bodies = append(bodies, b.String())
	}
	db := testIndex(t, bodies, nil)
	brief, err := OpenBrief(db.path, DefaultWait)
	if err != nil {
		t.Fatal(err)
	}
	defer brief.Close()
	for _, c := range []struct {
		x    *DB
		want int
	}{{db, -2000}, {brief, -briefCache}} {
		var n int
		if err := c.x.db.QueryRow("PRAGMA cache_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("cache_size %d, want %d", n, c.want)
		}
	}
	ctx := context.Background()
	for _, q := range []Query{{Text: "the error"}, {Text: "deploy-index"}, {Text: "fun*", Limit: 300}, {Text: "NEAR(error file, 5)", Raw: true}} {
		want, err := db.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := brief.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: brief found %d hits, the default %d (or they differ)", q.Text, len(got), len(want))
		}
	}
}
