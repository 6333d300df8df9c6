// Package views keeps a store's derived views: what scribe builds from the
// documents and round files so that people and programs can find things.
//
//   - the indexes: each document's session.db and the store's sessions.db
//     (package index: SQLite FTS5), rebuilt from the round files whenever
//     they are missing, stale or damaged;
//   - the tables of rounds (index.md in a document's folder) and the
//     catalogs (sessions/index.md, sessions/<agent>/index.md);
//   - engagement tags (tags.tsv, the durable record of `scribe tag`) and the
//     engagements they add to a document's frontmatter;
//   - the context view (`scribe context`) and search.
//
// The store (package inscribe) knows none of this: it hands each update to
// a [Views] through its inscribe.Indexer, with the round headers it has
// already built, so an append indexes what is new without reading it back.
// Every view can be rebuilt from the round files ([Views.Reindex]); only
// tags.tsv is kept for its own sake. See docs/FORMAT.md §10.
package views

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
)

// Views is a store seen through its derived views. Open one per process
// and store, and Close it when done.
type Views struct {
	*inscribe.Store

	// Wait is how long a writer of an index or a catalog waits for
	// another process that holds it (zero: index.DefaultWait). A document
	// whose indexes could not be written in that time is still updated:
	// its indexes catch up at its next update (Indexed).
	Wait time.Duration
	// Brief says the process reads the store's index for one command and
	// exits (scribe search): the index is opened with index.OpenBrief.
	Brief bool

	stampOnce sync.Once
	stamps    map[string]int64

	idxMu sync.Mutex
	idx   *index.DB // the store's sessions.db, opened on first use
	// putMu queues this process's writers of sessions.db: SQLite makes a
	// writer that finds the write lock taken sleep and retry (1 to 100 ms),
	// where a mutex hands the lock over at once.
	putMu sync.Mutex
	// serial is how long writers held putMu: the part of an update that
	// cannot run in parallel (SerialTime).
	serial time.Duration
	// queue holds the documents waiting for putMu, written together by
	// the first of them to take it (putStore).
	queueMu sync.Mutex
	queue   []*storePut
	// damaged are handles of a sessions.db found damaged and set aside,
	// closed with the index (another goroutine may still be using one).
	damaged []*index.DB

	// marksMu guards the store index's marks, read at once from the index
	// marksFrom when many updates are planned (Plan, markedCurrent).
	marksMu   sync.Mutex
	planned   int
	marks     map[string]index.Mark
	marksFrom *index.DB
}

// Open returns the views of s and makes them s's indexer, so that every
// update of a document keeps them current.
func Open(s *inscribe.Store) *Views {
	v := &Views{Store: s}
	s.Indexer = v
	return v
}

// Indexed brings the views of one updated document up to date
// (inscribe.Indexer).
//
// An index another process keeps locked for longer than s.Wait is left as
// it is, with a warning: the document is written, and its next update
// indexes what this one did not (an index knows how far into the source it
// is current), as reindex does.
func (s *Views) Indexed(u inscribe.Update) ([]error, error) {
	if u.Repair {
		return s.reindexDoc(u)
	}
	ws, err := s.indexDoc(u.Doc, u.Key, u.Seen, false, u.Rounds)
	if index.IsBusy(err) {
		return append(ws, fmt.Errorf("%w; its indexes are left for its next append (until then search may miss what this one added)", err)), nil
	}
	return ws, err
}

// Plan says how many documents the updates to come will index. When they
// are a good part of the store, the views read what the store's index
// holds of every document at once, rather than ask it of each: over an
// unchanged tree, asking was a tenth of an update's cost.
func (s *Views) Plan(docs int) {
	s.marksMu.Lock()
	s.planned = docs
	s.marksFrom, s.marks = nil, nil // read again for these updates
	s.marksMu.Unlock()
}

// markedCurrent reports whether the store's index sdb, as read at once for
// the updates Plan announced, holds the document key at mark. A false
// answer says nothing: the caller asks the index itself (SessionSeen). A
// true one holds, though the marks may have been read before another
// process indexed the document: an index moves a document's mark only
// forward, to its read note's, and the note is read under the document's
// lock.
func (s *Views) markedCurrent(ctx context.Context, sdb *index.DB, key string, mark index.Mark) bool {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.marksFrom != sdb {
		s.marksFrom, s.marks = sdb, nil
		if s.planned >= marksMinPlanned {
			// A store much larger than the run is cheaper asked of
			// document by document.
			if n, err := sdb.EstimateSessions(ctx); err == nil && int64(s.planned)*marksRatio >= n {
				s.marks, _ = sdb.SessionMarks(ctx) // an error: asked of each, which reports it
			}
		}
	}
	m, ok := s.marks[key]
	return ok && m == mark
}

// The marks of the store's index are read at once when at least
// marksMinPlanned documents are planned, and at least one in marksRatio
// of those the index holds: reading one mark among many costs about a
// tenth of asking for it alone.
const (
	marksMinPlanned = 32
	marksRatio      = 8
)

// SerialTime is how long this process's updates spent writing the store's
// sessions.db, one at a time: the part of inscribing that more cores do
// not shorten (benchmarks report it next to the CPU time).
func (s *Views) SerialTime() time.Duration {
	s.putMu.Lock()
	defer s.putMu.Unlock()
	return s.serial
}

// wait is s.Wait, or the index's default.
func (s *Views) wait() time.Duration {
	if s.Wait > 0 {
		return s.Wait
	}
	return index.DefaultWait
}
