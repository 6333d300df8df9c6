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
