package views

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/index"
)

// Documents that queue for the store index's writer are written together,
// by the first of them to take it, and the index holds what writing them
// one by one gives.
func TestPutStoreWritesTheQueueTogether(t *testing.T) {
	ctx := context.Background()
	const docs = 6
	session := func(i int) (index.Session, []index.Row) {
		id := fmt.Sprintf("s%d", i)
		s := index.Session{SessionID: id, AgentID: "claude", Title: "title " + id, Doc: "claude/" + id + ".md", Seen: int64(i)}
		var rows []index.Row
		for r := 1; r <= 3; r++ {
			rows = append(rows, index.Row{SessionID: id, Round: r, Started: "2026-01-02T03:04:05Z", // one second for all: their rowids share a slot
				UserPreview: "prompt", Reply: fmt.Sprintf("words of round %d of %s", r, id), RoundFile: fmt.Sprintf("claude/%s/rounds/%03d.json", id, r)})
		}
		return s, rows
	}
	dump := func(sdb *index.DB) string {
		d, err := sdb.Dump(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	one, err := index.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for i := 0; i < docs; i++ {
		s, rows := session(i)
		if err := one.Put(ctx, s, rows); err != nil {
			t.Fatal(err)
		}
	}

	v := &Views{}
	sdb, err := index.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	v.putMu.Lock() // the writer is busy: every document queues
	var wg sync.WaitGroup
	errs := make([]error, docs)
	for i := 0; i < docs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, rows := session(i)
			errs[i] = v.putStore(ctx, sdb, s, rows)
		}()
	}
	for queued := 0; queued < docs; {
		time.Sleep(time.Millisecond)
		v.queueMu.Lock()
		queued = len(v.queue)
		v.queueMu.Unlock()
	}
	v.putMu.Unlock()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("document %d: %v", i, err)
		}
	}
	if len(v.queue) != 0 {
		t.Errorf("%d documents left in the queue", len(v.queue))
	}
	if got, want := dump(sdb), dump(one); got != want {
		t.Errorf("written together:\n%s\none by one:\n%s", got, want)
	}
}
