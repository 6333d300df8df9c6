package index

import (
	"context"
	"fmt"
	"path/filepath"
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
			rows = append(rows, Row{SessionID: id, Round: r, Started: "2026-01-02T03:04:05Z", Body: body})
		}
		rows = append(rows, Row{SessionID: id, Round: 4, Started: "not a time", Body: "when?"})
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
