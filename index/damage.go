package index

import (
	"context"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
)

// SQLite's primary result codes for a damaged database: its pages do not
// hold what a database holds (SQLITE_CORRUPT), or the file is not one at
// all (SQLITE_NOTADB). Extended codes keep the primary code in their low
// byte.
const (
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// SQLite's primary result codes for a database another connection holds
// locked for longer than the busy timeout.
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteProtocol = 15 // a race for the write-ahead log's locks that persisted
)

// BusyError is an index another process kept locked for longer than the
// caller would wait: it is in use, not damaged.
type BusyError struct {
	Path string
	Wait time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: another process has held it locked for %v", e.Path, e.Wait)
}

// IsBusy reports whether err is an index's report that another process
// holds it locked (a *BusyError, or SQLite's SQLITE_BUSY, SQLITE_LOCKED or
// SQLITE_PROTOCOL after the busy timeout): worth trying again later, not
// damage.
func IsBusy(err error) bool {
	var be *BusyError
	return errors.As(err, &be) || sqliteBusyCode(err)
}

// sqliteBusyCode reports whether err is SQLite's report of a lock held
// past the busy timeout.
func sqliteBusyCode(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqliteBusy, sqliteLocked, sqliteProtocol:
		return true
	}
	return false
}

// IsDamaged reports whether err is SQLite's report of a damaged database
// file ("database disk image is malformed", "file is not a database").
func IsDamaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqliteCorrupt, sqliteNotADB:
		return true
	}
	return false
}

// damaged turns SQLite's report that x is damaged into a *StaleError that
// says so (Damaged), naming x, and its report that another process kept x
// locked past the busy timeout into a *BusyError; other errors are
// returned as they are.
func (x *DB) damaged(err *error) {
	if *err == nil {
		return
	}
	if sqliteBusyCode(*err) {
		*err = &BusyError{Path: x.path, Wait: x.wait}
		return
	}
	if !IsDamaged(*err) {
		return
	}
	var se *StaleError
	if errors.As(*err, &se) {
		return
	}
	*err = &StaleError{Path: x.path, Why: fmt.Sprintf("damaged (%v)", *err), Damaged: true, db: x}
}

// From reports whether the error came from x (a database the caller has
// open): of two users of one database that both find it damaged, the second
// can tell that the first replaced it already.
func (e *StaleError) From(x *DB) bool { return e.db != nil && e.db == x }

// QuickCheck runs SQLite's quick check of the whole database (PRAGMA
// quick_check): it reads every page, so it costs what the file's size
// does. A damaged database is a *StaleError with Damaged set.
func (x *DB) QuickCheck(ctx context.Context) (err error) {
	defer x.damaged(&err)
	rows, err := x.db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
		}
		return &StaleError{Path: x.path, Why: fmt.Sprintf("damaged (quick_check: %v)", problems), Damaged: true, db: x}
	}
	return nil
}
