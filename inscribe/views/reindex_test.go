package views_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/index"
)

// TestSearchDuringReindex: a search while the store's index is rebuilt
// reads the index as it was, whole, and does not wait for the rebuild.
func TestSearchDuringReindex(t *testing.T) {
	s, _ := sampleStore(t)
	q := index.Query{Text: "question"}
	before, err := s.Search(q)
	if err != nil || len(before) == 0 {
		t.Fatalf("search: %d hits, %v", len(before), err)
	}
	s.CloseIndex()

	// Another process rebuilds: its transaction has cleared the index and
	// written nothing back yet.
	rebuilder, err := index.Open(s.IndexPath())
	if err != nil {
		t.Fatal(err)
	}
	defer rebuilder.Close()
	ctx := context.Background()
	batch, err := rebuilder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Rollback()
	if err := batch.Clear(ctx); err != nil {
		t.Fatal(err)
	}

	reader, err := reopen(s.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.CloseIndex()
	var during []any
	var serr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		hits, err := reader.Search(q)
		for _, h := range hits {
			during = append(during, h)
		}
		serr = err
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second): // the busy timeout is 30 s: a search that waits would show here
		t.Fatal("the search waits for the rebuild")
	}
	if serr != nil || len(during) != len(before) {
		t.Errorf("search during a rebuild: %d hits (%v), want the %d of before", len(during), serr, len(before))
	}

	// Reindex itself, while searches run as processes of their own (open,
	// search): every search sees a whole index, the old or the new.
	batch.Rollback()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := reopen(s.Root)
			if err != nil {
				t.Error(err)
				return
			}
			hits, err := r.Search(q)
			r.CloseIndex()
			if err != nil || len(hits) != len(before) {
				t.Errorf("search during reindex: %d hits (%v), want %d", len(hits), err, len(before))
				return
			}
		}
	}()
	if _, err := s.Reindex(); err != nil {
		t.Error(err)
	}
	close(stop)
	wg.Wait()
}
