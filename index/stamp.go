package index

import (
	"context"
	"database/sql"
	"errors"
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
	_, err = x.db.ExecContext(ctx, `INSERT OR REPLACE INTO folders_stamp(id, stamp) VALUES (1, ?)`, stamp)
	return err
}
