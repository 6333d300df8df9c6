package views

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/scribe-archive/scribe/index"
)

// Damaged indexes. The databases are derived from the round files, so a
// damaged one (SQLite finds its pages malformed: a disk error, a copy made
// while it was written, a stray write) costs nothing but its rebuild: it is
// set aside as <name>.damaged-<time>, for whoever wants to look at it, and
// a new one is built from the round files, with a warning, and the command
// goes on. Damage is found where SQLite reports it, whatever the command
// (index.IsDamaged), and by check --store and repair, which run SQLite's
// quick check over every page (too slow for every append: a quarter of a
// second for the 7 MB index of 200 sessions).

// damagedSuffix is what a damaged database is renamed with, before its time.
const damagedSuffix = ".damaged-"

// setAside renames a damaged database (and its write-ahead log) out of the
// way, and returns its new name.
func setAside(p string) (string, error) {
	to := p + damagedSuffix + time.Now().UTC().Format("20060102T150405.000Z")
	if err := os.Rename(p, to); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil // set aside already, or gone
		}
		return "", err
	}
	os.Rename(p+"-wal", to+"-wal")
	os.Remove(p + "-shm")
	return to, nil
}

// recoverIndex is what an index operation that failed with err does next:
// when SQLite found a database damaged, it is set aside (once: another user
// of the store's index may have done it already), with a warning, and retry
// says to run the operation again, indexing every round.
func (s *Views) recoverIndex(err error) (warnings []error, retry bool) {
	var se *index.StaleError
	if !errors.As(err, &se) || !se.Damaged {
		return nil, false
	}
	if se.Path != s.IndexPath() {
		// A document's own index: its writer holds the document's lock.
		to, err := setAside(se.Path)
		if err != nil {
			return []error{fmt.Errorf("%v; setting it aside: %w", se, err)}, false
		}
		return []error{damageWarning(se, to)}, true
	}
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if s.idx != nil && !se.From(s.idx) {
		return nil, true // replaced already
	}
	// Other goroutines may be using the handle: it is closed with the
	// index (CloseIndex), not now. The file is renamed under it.
	if s.idx != nil {
		s.damaged = append(s.damaged, s.idx)
		s.idx = nil
	}
	to, rerr := setAside(se.Path)
	if rerr != nil {
		return []error{fmt.Errorf("%v; setting it aside: %w", se, rerr)}, false
	}
	return []error{damageWarning(se, to)}, true
}

func damageWarning(se *index.StaleError, to string) error {
	if to == "" {
		return fmt.Errorf("%v: rebuilding it from the round files", se)
	}
	return fmt.Errorf("%v: set aside as %s; rebuilding it from the round files", se, filepath.Base(to))
}
