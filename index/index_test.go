package index

import (
	"context"
	"path/filepath"
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
					dbs[i], errs[i] = open(p, shared, DefaultWait)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("shared=%v: opener %d: %v", shared, i, err)
				}
			}
			ctx := context.Background()
			row := Row{SessionID: "s", Round: 1, Body: "hello", RoundFile: "r"}
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
