package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FoldersStamp returns the stamp SetFoldersStamp last recorded ("" if
// none).
func (x *DB) FoldersStamp(ctx context.Context) (_ string, err error) {
	defer x.damaged(&err)
	var s string
	err = x.db.QueryRowContext(ctx, `SELECT stamp FROM folders_stamp WHERE id = 1`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return s, err
}

// SetFoldersStamp records how the store's folders of documents look when
// every document is known to be indexed (views.EnsureIndex).
func (x *DB) SetFoldersStamp(ctx context.Context, stamp string) (err error) {
	defer x.damaged(&err)
	x.wrote.Store(true)
	_, err = x.db.ExecContext(ctx, `INSERT OR REPLACE INTO folders_stamp(id, stamp) VALUES (1, ?)`, stamp)
	return err
}

// WriterActive reports whether another connection holds the index's write
// lock (a reindex rebuilding it in one transaction, a bulk inscribe writing
// a batch), without waiting for it: a search that would write (to index a
// document, or record the folders' stamp) reads the index as it is
// instead.
func (x *DB) WriterActive(ctx context.Context) (_ bool, err error) {
	defer x.damaged(&err)
	conn, err := x.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return false, err
	}
	// The connection goes back to the pool with the index's own timeout.
	defer conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", max(x.wait.Milliseconds(), 1)))
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		if IsBusy(err) {
			return true, nil
		}
		return false, err
	}
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	return false, err
}
