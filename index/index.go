// Package index is scribe's SQLite index of rounds: Method 53's Layer 2.
// Each session has one (session.db in its folder) and the store has one
// for all sessions (sessions.db); both have the same schema (schema.sql):
// the rounds table and its rounds_fts full-text table exactly as the method
// specifies, plus the prompt, reply and tools columns and a text_fts table
// for searching what was said and done, and a sessions table for what
// search shows and filters on.
//
// An index is derived data: the round files are the authority, and an
// index can always be rebuilt from them. Engagement tags are the exception
// (mutable, kept in the index), so the store keeps them durably as well.
//
// This is the only package that imports modernc.org/sqlite.
package index

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed schema.sql
var schema string

// Version is the schema version (PRAGMA user_version). A database of
// another version is rebuilt, never migrated.
const Version = 5

// DB is an open index.
type DB struct {
	db     *sql.DB
	path   string
	shared bool
	wait   time.Duration // SQLite's busy timeout

	// sessionSeen is SessionSeen's query, prepared once: an update of
	// each document asks it, and over an unchanged tree parsing it was
	// most of the answer's cost.
	sessionSeenMu sync.Mutex
	sessionSeen   *sql.Stmt

	// writer is the connection every Batch writes through, held by one
	// Batch at a time (writerMu), and stmts its statements, prepared once:
	// the statements of a Put, with the triggers they fire, cost more to
	// parse than a short session's rows cost to write, and the store's
	// index takes one Put per document, one at a time.
	writerMu sync.Mutex
	writer   *sql.Conn
	stmts    map[string]*sql.Stmt

	// inMemory says the index is built in memory (CreateScratch), to be
	// written to path by Close once a batch has committed (committed).
	inMemory  bool
	committed bool

	// replaces is where an index built beside it (ReplaceScratch) goes
	// once a batch has committed to it: Close renames it there.
	replaces string

	// wrote says this handle wrote to the index: only then does Close
	// fold the write-ahead log into the file.
	wrote atomic.Bool
}

// StaleError is an index that cannot be used as it is: missing tables, an
// unknown version, or a damaged file. The caller rebuilds it.
type StaleError struct {
	Path string
	Why  string
	// Damaged says the file is damaged (SQLite found its pages malformed,
	// or it is not a database at all), rather than of another version or
	// shape: it may be worth keeping aside for a look.
	Damaged bool

	db *DB // the database that found it damaged, when open (From)
}

func (e *StaleError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Why) }

// DefaultWait is how long an index waits for another process that holds
// the lock it needs (SQLite's busy timeout) before it gives up with a
// *BusyError.
const DefaultWait = 30 * time.Second

// Open opens the index at path, creating it if it does not exist. An index
// that exists but cannot be used is a *StaleError.
func Open(path string) (*DB, error) { return OpenWait(path, DefaultWait) }

// OpenWait is Open, waiting at most wait for another process's lock.
func OpenWait(path string, wait time.Duration) (*DB, error) { return open(path, true, wait, 0) }

// OpenBrief is OpenWait for a process that reads the index for one
// command and exits (scribe search): its connections keep a page cache of
// briefCache rather than SQLite's 2 MB.
func OpenBrief(path string, wait time.Duration) (*DB, error) {
	return open(path, true, wait, briefCache)
}

// briefCache is the page cache of a connection of OpenBrief, in KiB (as a
// writer's, writerCache). SQLite's 2 MB pays off in a process that
// searches again and again (serve, mcp): the pages one search read are
// there for the next. A process that searches once reads most pages once,
// and every page a cache takes is memory the process touches for the
// first time: two page faults a page (the allocator rounds a page and its
// header up to 8 KiB), which cost as much as reading it. At 200,000
// rounds they were 800 of a search's 2,800 page faults and a tenth of its
// CPU; a small cache reuses its pages' memory (bench/README.md).
const briefCache = 256

// OpenScratch opens a small index that is cheap to rebuild and written by
// one process at a time (a document's own): no write-ahead log, and no
// flush to disk at each commit. A crash can leave it damaged; Open then
// reports it stale, and it is rebuilt from the round files.
func OpenScratch(path string) (*DB, error) { return OpenScratchWait(path, DefaultWait) }

// OpenScratchWait is OpenScratch, waiting at most wait for another
// process's lock.
func OpenScratchWait(path string, wait time.Duration) (*DB, error) { return open(path, false, wait, 0) }

// open opens an index; cache is its connections' page cache in KiB (zero:
// SQLite's).
func open(path string, shared bool, wait time.Duration, cache int) (*DB, error) {
	// Transactions take the write lock when they begin (those that only
	// read are begun read-only): one that read first could not wait for
	// it, as writing then would change what it read (the triggers read
	// the full-text tables' configuration before they write).
	busy := fmt.Sprintf("busy_timeout(%d)", max(wait.Milliseconds(), 1))
	dsn := "file:" + path + "?_pragma=" + busy + "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	if !shared {
		dsn = "file:" + path + "?_pragma=" + busy + "&_pragma=journal_mode(DELETE)&_pragma=synchronous(OFF)&_txlock=immediate"
	}
	if cache > 0 {
		dsn += fmt.Sprintf("&_pragma=cache_size(-%d)", cache)
	}
	db, err := sql.Open("sqlite", dsn) // opens the file on first use
	if err != nil {
		return nil, err
	}
	x := &DB{db: db, path: path, shared: shared, wait: wait}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// A new index starts as a copy of an empty one: parsing the schema
		// costs more than everything else the index of a short session
		// does.
		err := createFromTemplate(path, shared)
		var le *os.LinkError
		switch {
		case err == nil:
			return x, nil
		case errors.Is(err, fs.ErrExist):
			// Another process created it first: check it as any other.
		case errors.As(err, &le):
			// The file system cannot link: create the schema in place.
			if err := x.create(); err != nil {
				db.Close()
				return nil, err
			}
			return x, nil
		default:
			db.Close()
			return nil, err
		}
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		return nil, unreadable(path, err, true, wait)
	}
	if v != Version {
		db.Close()
		return nil, &StaleError{Path: path, Why: fmt.Sprintf("written by another version of scribe (schema %d, this one uses %d)", v, Version)}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name IN ('rounds','rounds_fts','text_fts','pairs_fts','folders_stamp','sessions')").Scan(&n); err != nil {
		db.Close()
		return nil, unreadable(path, err, IsDamaged(err), wait)
	} else if n != 6 {
		db.Close()
		return nil, &StaleError{Path: path, Why: "tables are missing"}
	}
	return x, nil
}

// unreadable is the *StaleError of an index SQLite could not read at path;
// damaged ones say so as damage found in use does (x.damaged). One that
// another process held locked for longer than wait (a writer of a
// document's index locks readers out) is in use, not damaged: a
// *BusyError.
func unreadable(path string, err error, damaged bool, wait time.Duration) error {
	if IsBusy(err) {
		return &BusyError{Path: path, Wait: wait}
	}
	why := "not a readable SQLite database (" + err.Error() + ")"
	if IsDamaged(err) {
		why = fmt.Sprintf("damaged (%v)", err)
	}
	return &StaleError{Path: path, Why: why, Damaged: damaged}
}

// CreateScratch starts a new document index (see OpenScratch) in memory,
// from the bytes of an empty one: Close writes it to path whole, if a
// batch committed to it. For a document indexed whole at once (its first
// inscription): the index of a short session costs more in file I/O
// (its empty tables copied, every page read, journaled and written back
// through system calls) than in rows. It holds about 8 KB a round in
// memory, so it is for documents of a bounded number of rounds. Only
// the document's writer, who holds its lock, may call it: Close replaces
// whatever is at path.
func CreateScratch(path string) (*DB, error) {
	data, err := scratchTemplate()
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	// An in-memory database is its connection's: there must be one, for
	// good.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(context.Background())
	if err == nil {
		err = conn.Raw(func(dc any) error { return dc.(serializer).Deserialize(data) })
		if cerr := conn.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &DB{db: db, path: path, inMemory: true}, nil
}

// ReplaceScratch starts a new document index (see OpenScratch) in a
// temporary file beside path, for an index rebuilt whole (a reindex): Close
// renames it over whatever is at path once a batch has committed to it,
// else removes it. Until then, the index at path stays as it was, so a
// rebuild killed halfway leaves the old index, never an empty one. Only
// the document's writer, who holds its lock, may call it.
func ReplaceScratch(path string, wait time.Duration) (*DB, error) {
	data, err := scratchTemplate()
	if err != nil {
		return nil, err
	}
	tmp, err := writeBeside(path, data)
	if err != nil {
		return nil, err
	}
	x, err := open(tmp, false, wait, 0)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	x.replaces = path
	return x, nil
}

// serializer is what modernc's connections offer to copy a database to and
// from memory (sqlite3_serialize, sqlite3_deserialize).
type serializer interface {
	Serialize() ([]byte, error)
	Deserialize([]byte) error
}

// writeOut writes an index built in memory to its path, through a
// temporary file and a rename: a reader finds the old file or the whole
// new one. It is not flushed to disk, as a document's index is not
// (synchronous=OFF): a crash that damages it only causes a rebuild.
func (x *DB) writeOut() error {
	conn, err := x.db.Conn(context.Background())
	if err != nil {
		return err
	}
	var data []byte
	err = conn.Raw(func(dc any) (err error) {
		data, err = dc.(serializer).Serialize()
		return err
	})
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", x.path, err)
	}
	tmp, err := writeBeside(x.path, data)
	if err != nil {
		return err
	}
	if err := replace(tmp, x.path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// replace renames a new database over the one at path. The old one's
// rollback journal goes first: one a kill left (hot) would otherwise be
// played back into the new database when it is next opened.
func replace(tmp, path string) error {
	if err := os.Remove(path + "-journal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(tmp, path)
}

// writeBeside writes data to a new temporary file beside path (not
// flushed) and returns its name.
func writeBeside(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// The bytes of an empty index, scratch and shared, made once per process.
var (
	scratchTemplate = sync.OnceValues(func() ([]byte, error) { return makeTemplate(false) })
	sharedTemplate  = sync.OnceValues(func() ([]byte, error) { return makeTemplate(true) })
)

func makeTemplate(shared bool) ([]byte, error) {
	dir, err := os.MkdirTemp("", "scribe-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "empty.db")
	mode := "DELETE"
	if shared {
		mode = "WAL"
	}
	db, err := sql.Open("sqlite", "file:"+p+"?_pragma=journal_mode("+mode+")")
	if err != nil {
		return nil, err
	}
	err = (&DB{db: db, path: p}).create()
	if err == nil && shared {
		_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// createFromTemplate creates the index at path as a copy of an empty one,
// put in place with link(2): of two processes creating it at once, one
// creates it and the other gets an error that is fs.ErrExist (also when its
// temporary file was removed as a leftover once the index was there). A
// file system that cannot link gives an *os.LinkError.
func createFromTemplate(path string, shared bool) error {
	template := scratchTemplate
	if shared {
		template = sharedTemplate
	}
	data, err := template()
	if err != nil {
		return err
	}
	tmp, err := writeBeside(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// The temporary file was taken for a leftover by a scribe that
		// found the index already in place (inscribe's
		// RemoveStaleTemps): another process created it first.
		if _, serr := os.Lstat(path); serr == nil {
			return &fs.PathError{Op: "link", Path: path, Err: fs.ErrExist}
		}
	}
	return err
}

func (x *DB) create() error {
	tx, err := x.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
		return fmt.Errorf("%s: create the index: %w", x.path, err)
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", Version)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the index, folding its write-ahead log into the file if it
// wrote to it (without waiting: checkpointWait), or writing it out if it
// was built in memory (CreateScratch). An index only read is closed as it
// is: folding the log waits for every writer, and a search that did would
// wait for a reindex, which writes the whole index in one transaction, to
// end.
func (x *DB) Close() (err error) {
	x.sessionSeenMu.Lock()
	if x.sessionSeen != nil {
		x.sessionSeen.Close()
		x.sessionSeen = nil
	}
	x.sessionSeenMu.Unlock()
	x.writerMu.Lock()
	x.closeWriter()
	x.writerMu.Unlock()
	if x.shared && x.wrote.Load() {
		x.checkpoint()
	}
	if x.inMemory && x.committed {
		err = x.writeOut()
	}
	if cerr := x.db.Close(); err == nil {
		err = cerr
	}
	if x.replaces != "" {
		if err == nil && x.committed {
			if err = replace(x.path, x.replaces); err == nil {
				return nil
			}
		}
		os.Remove(x.path)
	}
	return err
}

// checkpointWait is how long Close waits for the other readers and
// writers of the index to fold its write-ahead log into the file and empty
// it: when they take longer, the log is folded as far as they let it
// (SQLite's PASSIVE checkpoint), and the next writer to close empties it.
const checkpointWait = 100 * time.Millisecond

// checkpoint folds the write-ahead log into the file and empties it,
// waiting at most checkpointWait.
func (x *DB) checkpoint() {
	conn, err := x.db.Conn(context.Background())
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointWait.Milliseconds())); err == nil {
		conn.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)")
	}
}

// Path is where the index lives.
func (x *DB) Path() string { return x.path }

// Compact rewrites the database into as few pages as it needs (VACUUM):
// no page it freed keeps what was deleted from it (a text scribe forget
// removed). It takes the write lock, waiting as the database does.
func (x *DB) Compact(ctx context.Context) error {
	_, err := x.db.ExecContext(ctx, "VACUUM")
	return err
}

// Row is one round.
type Row struct {
	SessionID     string  `json:"session_id"`
	Round         int     `json:"round"`
	Started       string  `json:"started"`
	EngagementID  *string `json:"engagement_id"`
	UserPreview   string  `json:"user_preview"`
	AgentPreview  string  `json:"agent_preview"`
	ToolCount     int     `json:"tool_count"`
	ThinkingCount int     `json:"thinking_count"`
	ThinkingChars int     `json:"thinking_chars"`
	TokenCount    int64   `json:"token_count"`
	RoundFile     string  `json:"round_file"`
	// The text search finds the round by: the person's prompt, the
	// agent's replies and thinking, and its tool calls' inputs and results
	// (each as text, not JSON).
	Prompt string `json:"-"`
	Reply  string `json:"-"`
	Tools  string `json:"-"`
}

// textSize is how many bytes of text search indexes of r.
func (r *Row) textSize() int { return len(r.Prompt) + len(r.Reply) + len(r.Tools) }

// Session is what the index knows of a document.
type Session struct {
	SessionID string
	AgentID   string
	Title     string
	Project   string
	Started   string
	Ended     string
	Doc       string
	Seen      int64
	// Tokens is the sum of the token counts of the session's rounds
	// (List and Neighbours fill it; Put ignores it).
	Tokens int64
}

// Put writes a session and some of its rounds, in one transaction. Rounds
// already in the index are replaced (the rows carry their engagement tags).
func (x *DB) Put(ctx context.Context, s Session, rows []Row) (err error) {
	defer x.damaged(&err)
	b, err := x.Begin(ctx)
	if err != nil {
		return err
	}
	defer b.Rollback()
	if err := b.Put(ctx, s, rows); err != nil {
		return err
	}
	return b.Commit()
}

// A Batch is one write transaction on an index. Readers of the store's
// index (write-ahead log) see none of it until Commit, and never wait for
// it: a rebuild in a batch is how the index is replaced under a search.
type Batch struct {
	x    *DB
	conn *sql.Conn
	done bool
	// staged counts the new rounds in round_stage, inserted into rounds
	// together when there are stageMax of them, their bodies reach
	// stageBytes, or the batch commits (insertStaged): FTS5 flushes its
	// pending terms at the start of every statement that writes it, so the
	// rounds of several Puts inserted by one statement are flushed once.
	staged      int
	stagedBytes int // of their bodies
	// lookups counts the rowid allocator's queries (a test's measure).
	lookups int
}

// stageMax is how many rounds a batch stages at most before it inserts
// them: a rebuild of a large store's index stages them all.
const stageMax = 10000

// stageBytes is how much body text a batch stages at most before it
// inserts it: the terms FTS5 holds until it flushes (of three tables, the
// prefixes included) are several times the text, and the memory they
// take is what the command's peak is made of while it indexes a long
// session (issue 18: about 3 MB of RSS for the long-sample session of
// bench/README.md at 256 KiB rather than all its rounds at once). A flush
// per 256 KiB of text writes the same terms, in more segments, which
// FTS5 merges as it goes.
const stageBytes = 256 << 10

// writerCache is the page caches of a writing connection: 256 KiB each
// for the database and its temporary tables (round_stage) rather than
// SQLite's 2 MB. The allocator rounds each cached page (4 KiB and its
// header) up to 8 KiB, so the default caches cost up to 8 MB of RSS while
// a document is indexed, and a write reads and writes few pages again
// (new rounds go at the end of the tables). Reading connections keep the
// default, unless the process is brief (OpenBrief): searches read the same
// pages again and again.
const writerCache = "PRAGMA cache_size = -256; PRAGMA temp.cache_size = -256"

// Begin starts a batch. It takes the write lock at once (BEGIN
// IMMEDIATE), waiting for another writer as long as the busy timeout
// says: a transaction that read first and wrote later could find its
// snapshot stale under a concurrent writer and fail (SQLITE_BUSY_SNAPSHOT).
//
// Batches of one DB take turns on its one writing connection: a second
// Begin in the process waits for the first batch to end, and so does
// Close (defer Rollback).
func (x *DB) Begin(ctx context.Context) (_ *Batch, err error) {
	defer x.damaged(&err)
	x.writerMu.Lock()
	if x.writer == nil {
		if x.writer, err = x.db.Conn(ctx); err == nil {
			_, err = x.writer.ExecContext(ctx, writerCache)
		}
		if err != nil {
			x.closeWriter()
			x.writerMu.Unlock()
			return nil, fmt.Errorf("%s: %w", x.path, err)
		}
	}
	if _, err := x.writer.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		x.closeWriter() // the next batch starts on a fresh connection
		x.writerMu.Unlock()
		return nil, fmt.Errorf("%s: %w", x.path, err)
	}
	return &Batch{x: x, conn: x.writer}, nil
}

// closeWriter closes the writing connection's statements and gives it
// back to the pool; x.writerMu is held.
func (x *DB) closeWriter() {
	for _, st := range x.stmts {
		st.Close()
	}
	x.stmts = nil
	if x.writer != nil {
		x.writer.Close()
		x.writer = nil
	}
}

// stmt is query prepared on the batch's connection, once per connection.
func (b *Batch) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	x := b.x
	if st := x.stmts[query]; st != nil {
		return st, nil
	}
	st, err := b.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if x.stmts == nil {
		x.stmts = map[string]*sql.Stmt{}
	}
	x.stmts[query] = st
	return st, nil
}

// exec runs query, prepared once (stmt), with args.
func (b *Batch) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := b.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// Commit makes the batch's writes visible; Rollback drops them (a no-op
// after Commit).
func (b *Batch) Commit() (err error) {
	defer b.x.damaged(&err)
	if b.done {
		return nil
	}
	b.done = true
	defer b.end()
	if err := b.insertStaged(context.Background()); err != nil {
		b.conn.ExecContext(context.Background(), "ROLLBACK")
		b.x.closeWriter()
		return fmt.Errorf("%s: %w", b.x.path, err)
	}
	if _, err := b.conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		b.conn.ExecContext(context.Background(), "ROLLBACK")
		b.x.closeWriter()
		return fmt.Errorf("%s: %w", b.x.path, err)
	}
	b.x.committed = true
	b.x.wrote.Store(true)
	return nil
}

// end hands the writing connection to the next batch. A document's index
// (not shared) takes one batch in its life: its connection goes back to
// the pool, where its queries find it with the schema already read.
func (b *Batch) end() {
	if !b.x.shared {
		b.x.closeWriter()
	}
	b.x.writerMu.Unlock()
}

func (b *Batch) Rollback() {
	if b.done {
		return
	}
	b.done = true
	defer b.end()
	if _, err := b.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		b.x.closeWriter()
	}
}

// Clear deletes every session and round.
func (b *Batch) Clear(ctx context.Context) (err error) {
	defer b.x.damaged(&err)
	for _, q := range []string{`DELETE FROM rounds`, `DELETE FROM sessions`} {
		if _, err := b.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", b.x.path, err)
		}
	}
	return nil
}

// Put records a session and some of its rounds.
func (b *Batch) Put(ctx context.Context, s Session, rows []Row) (err error) {
	x := b.x
	defer x.damaged(&err)
	// A session already indexed under the same agent and project, as at
	// every update but its first, has its other columns updated: that
	// UPDATE names neither column sessions_au watches, so SQLite compiles
	// no trigger for it, where the upsert compiles both of the table's.
	// Their programs were the costliest statement a hook's append prepared
	// (in each of the two indexes it writes).
	res, err := b.exec(ctx, `UPDATE sessions SET title = ?, started = ?, ended = ?, doc = ?, seen = ?
		WHERE session_id = ? AND agent_id IS ? AND project IS ?`,
		s.Title, s.Started, s.Ended, s.Doc, s.Seen, s.SessionID, s.AgentID, s.Project)
	if err != nil {
		return fmt.Errorf("%s: %w", x.path, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return b.PutRounds(ctx, rows)
	}
	if _, err := b.exec(ctx, `INSERT INTO sessions(session_id, agent_id, title, project, started, ended, doc, seen)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(session_id) DO UPDATE SET agent_id=excluded.agent_id, title=excluded.title, project=excluded.project,
			started=excluded.started, ended=excluded.ended, doc=excluded.doc, seen=excluded.seen`,
		s.SessionID, s.AgentID, s.Title, s.Project, s.Started, s.Ended, s.Doc, s.Seen); err != nil {
		return fmt.Errorf("%s: %w", x.path, err)
	}
	return b.PutRounds(ctx, rows)
}

// PutRounds records rounds of a session that a Put of the batch records,
// without writing the session's row again: every statement that writes
// the sessions table flushes the full-text tables' pending terms to disk
// (as every statement that writes them does, stage), so a session of many
// rounds put a thousand at a time, its row each time, took twice the page
// reads of the same rounds put at once (100,000 tiny lines: 200,000 and
// 90,000).
func (b *Batch) PutRounds(ctx context.Context, rows []Row) (err error) {
	x := b.x
	defer x.damaged(&err)
	if len(rows) == 0 {
		return nil
	}
	have, err := b.rowids(ctx, rows)
	if err != nil {
		return err
	}
	keys, err := newRowidAllocator(ctx, b)
	if err != nil {
		return err
	}
	const cols = `session_id=?, round=?, started=?, engagement_id=?, user_preview=?, agent_preview=?,
			tool_count=?, thinking_count=?, thinking_chars=?, token_count=?, round_file=?, prompt=?, reply=?, tools=?`
	const upd, del = `UPDATE rounds SET ` + cols + ` WHERE rowid = ?`, `DELETE FROM rounds WHERE rowid = ?`
	// New rounds are inserted together, in rowid order, by one statement
	// (stage, insertStaged): FTS5 flushes its pending terms to disk at the
	// start of every statement that writes it (its savepoint), so one
	// INSERT a round would flush once a round.
	for _, r := range rows {
		vals := []any{r.SessionID, r.Round, r.Started, r.EngagementID, r.UserPreview, r.AgentPreview,
			r.ToolCount, r.ThinkingCount, r.ThinkingChars, r.TokenCount, r.RoundFile, r.Prompt, r.Reply, r.Tools}
		ms, known, err := keys.millis(ctx, r.Started)
		if err != nil {
			return fmt.Errorf("%s: round %d of %s: %w", x.path, r.Round, r.SessionID, err)
		}
		old, ok := have[roundKey{r.SessionID, r.Round}]
		if ok && sameTime(old, ms, known) {
			// A round indexed as it is now, as the last round of the
			// previous update usually is, is left alone: its UPDATE would
			// compile rounds_au and write its texts to the full-text
			// tables again.
			var same bool
			if same, err = b.unchanged(ctx, old, vals); err == nil && !same {
				_, err = b.exec(ctx, upd, append(vals, old)...)
			}
		} else {
			if ok {
				if _, err := b.exec(ctx, del, old); err != nil {
					return fmt.Errorf("%s: round %d of %s: %w", x.path, r.Round, r.SessionID, err)
				}
			}
			var id int64
			if id, err = keys.next(ctx, ms, known); err == nil {
				err = b.stage(ctx, id, vals, r.textSize())
			}
		}
		if err != nil {
			return fmt.Errorf("%s: round %d of %s: %w", x.path, r.Round, r.SessionID, err)
		}
	}
	return nil
}

// unchanged reports whether the round of rowid id has the values vals
// (PutRounds's, in its order), compared as its UPDATE would store them.
func (b *Batch) unchanged(ctx context.Context, id int64, vals []any) (bool, error) {
	st, err := b.stmt(ctx, `SELECT count(*) FROM rounds WHERE rowid = ?15 AND session_id IS ?1 AND round IS ?2
		AND started IS ?3 AND engagement_id IS ?4 AND user_preview IS ?5 AND agent_preview IS ?6 AND tool_count IS ?7
		AND thinking_count IS ?8 AND thinking_chars IS ?9 AND token_count IS ?10 AND round_file IS ?11
		AND prompt IS ?12 AND reply IS ?13 AND tools IS ?14`)
	if err != nil {
		return false, err
	}
	var n int
	err = st.QueryRowContext(ctx, append(vals, id)...).Scan(&n)
	return n == 1, err
}

// stageTable is the temporary table (no trigger, no full-text table) that
// holds a batch's new rounds until insertStaged copies them into rounds.
const stageTable = `CREATE TEMP TABLE IF NOT EXISTS round_stage(id INTEGER PRIMARY KEY, session_id, round, started,
	engagement_id, user_preview, agent_preview, tool_count, thinking_count, thinking_chars, token_count, round_file, prompt, reply, tools)`

// stage puts a new round, its rowid given, in round_stage, from which
// insertStaged copies the staged rounds into rounds by one statement, in
// rowid order, when the batch commits or holds stageMax rounds or
// stageBytes of text. A staged round's rowid is not free
// (rowidAllocator).
func (b *Batch) stage(ctx context.Context, id int64, vals []any, size int) error {
	if _, err := b.exec(ctx, `INSERT INTO round_stage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append([]any{id}, vals...)...); err != nil {
		return err
	}
	b.staged++
	b.stagedBytes += size
	if b.staged >= stageMax || b.stagedBytes >= stageBytes {
		return b.insertStaged(ctx)
	}
	return nil
}

// insertStaged inserts the staged rounds into rounds, in rowid order.
func (b *Batch) insertStaged(ctx context.Context) error {
	if b.staged == 0 {
		return nil
	}
	if _, err := b.exec(ctx, `INSERT INTO rounds(rowid, session_id, round, started, engagement_id, user_preview, agent_preview,
			tool_count, thinking_count, thinking_chars, token_count, round_file, prompt, reply, tools)
		SELECT * FROM round_stage ORDER BY id`); err != nil {
		return err
	}
	if _, err := b.exec(ctx, `DELETE FROM round_stage`); err != nil {
		return err
	}
	b.staged, b.stagedBytes = 0, 0
	return nil
}

// roundKey names a round in the index.
type roundKey struct {
	session string
	round   int
}

// rowids returns the rowids of the rounds of rows already in the index.
func (b *Batch) rowids(ctx context.Context, rows []Row) (map[roundKey]int64, error) {
	type span struct{ lo, hi int }
	spans := map[string]span{}
	for _, r := range rows {
		sp, ok := spans[r.SessionID]
		if !ok {
			sp = span{r.Round, r.Round}
		}
		spans[r.SessionID] = span{min(sp.lo, r.Round), max(sp.hi, r.Round)}
	}
	have := map[roundKey]int64{}
	for id, sp := range spans {
		st, err := b.stmt(ctx, `SELECT round, rowid FROM rounds WHERE session_id = ? AND round BETWEEN ? AND ?`)
		if err != nil {
			return nil, err
		}
		q, err := st.QueryContext(ctx, id, sp.lo, sp.hi)
		if err != nil {
			return nil, err
		}
		for q.Next() {
			var round int
			var rowid int64
			if err := q.Scan(&round, &rowid); err != nil {
				q.Close()
				return nil, err
			}
			have[roundKey{id, round}] = rowid
		}
		err = q.Err()
		q.Close()
		if err != nil {
			return nil, err
		}
	}
	return have, nil
}

// A round's rowid is its time key: the second it starts in (Unix time)
// times 2^seqBits, plus a sequence number among the rounds of that second.
// A round whose second is full takes a free rowid after it, at most
// spillMax seconds later (rowidAllocator). A round whose start SQLite
// cannot read as a time, that is before 1970, or that found no free rowid,
// has a negative rowid, in the order the rounds were indexed.
//
// Seconds, not milliseconds, and few sequence bits: FTS5 stores the
// difference between the rowids of a word's successive rounds as a varint,
// and milliseconds times 2^20 made the full-text tables twice as large.
// So a rowid bounds a round's start to within spillMax seconds, and
// search checks the start of the rounds a time bound selects.
const (
	seqBits  = 2
	spillMax = 1023
	maxSec   = math.MaxInt64>>seqBits - spillMax - 1
)

// sinceKey returns the smallest rowid of a round that starts at or after
// t: 0 before 1970 (unknown starts are outside every bound).
func sinceKey(t time.Time) int64 {
	ms := t.UnixMilli()
	switch {
	case ms <= 0:
		return 0
	case ms/1000 > maxSec:
		return math.MaxInt64
	}
	return ms / 1000 << seqBits
}

// untilKey returns a rowid above that of every round that starts before
// t.
func untilKey(t time.Time) int64 {
	ms := t.UnixMilli()
	switch {
	case ms <= 0:
		return 0
	case (ms-1)/1000 > maxSec:
		return math.MaxInt64
	}
	return ((ms-1)/1000 + spillMax + 1) << seqBits
}

// slot returns the rowids a round that starts at ms (known) may have:
// [lo, hi).
func slot(ms int64) (lo, hi int64) {
	lo = ms / 1000 << seqBits
	return lo, lo + (spillMax+1)<<seqBits
}

// sameTime reports whether rowid id suits a round that starts at ms
// (known) or at an unknown time.
func sameTime(id, ms int64, known bool) bool {
	if !known {
		return id < 0
	}
	lo, hi := slot(ms)
	return lo <= id && id < hi
}

// rowidAllocator gives rounds their rowids: those of the index's rounds,
// and of the batch's staged rounds (round_stage, not inserted yet), are
// not free. A round takes the first free rowid of its slot among the
// first nearIDs, else the one after the highest taken in its slot, else
// (its slot full up to the top) a negative one: a few lookups of the
// rowid B-trees a round, however many rounds share its second. (A
// search for the first free rowid of the whole slot made rounds that
// share a second cost time quadratic in their number: issue 34.)
type rowidAllocator struct {
	millis1, near, top, bottom *sql.Stmt
	b                          *Batch
}

// nearIDs is how many rowids from the start of a round's slot the
// allocator looks at one by one for a free one: the rounds that start in
// the same four seconds, a burst of rounds at one time that does not fill
// them keeps their order, and one indexed after the rounds of a later
// second keeps its place before them.
const nearIDs = 16

// Its statements are the batch's (Batch.stmt): they stay open with it.
func newRowidAllocator(ctx context.Context, b *Batch) (*rowidAllocator, error) {
	a := &rowidAllocator{b: b}
	if _, err := b.exec(ctx, stageTable); err != nil {
		return nil, err
	}
	var err error
	if a.millis1, err = b.stmt(ctx, `SELECT `+startMillis("?")); err != nil {
		return nil, err
	}
	// The rowids taken in [?1, ?2).
	if a.near, err = b.stmt(ctx, `SELECT rowid FROM rounds WHERE rowid >= ?1 AND rowid < ?2
		UNION ALL SELECT id FROM round_stage WHERE id >= ?1 AND id < ?2`); err != nil {
		return nil, err
	}
	// The highest rowid taken in [?1, ?2), or ?1 - 1.
	if a.top, err = b.stmt(ctx, `SELECT max(
		coalesce((SELECT rowid FROM rounds WHERE rowid >= ?1 AND rowid < ?2 ORDER BY rowid DESC LIMIT 1), ?1 - 1),
		coalesce((SELECT id FROM round_stage WHERE id >= ?1 AND id < ?2 ORDER BY id DESC LIMIT 1), ?1 - 1))`); err != nil {
		return nil, err
	}
	// The lowest rowid taken, if below 0, else 0.
	if a.bottom, err = b.stmt(ctx, `SELECT min(0,
		coalesce((SELECT rowid FROM rounds ORDER BY rowid LIMIT 1), 0),
		coalesce((SELECT id FROM round_stage ORDER BY id LIMIT 1), 0))`); err != nil {
		return nil, err
	}
	return a, nil
}

// startMillis is the SQL for the Unix milliseconds of a round's start
// (expression x), as SQLite reads the stamp (any offset, none for UTC; what
// strftime's %f shows): NULL when it is not a time.
func startMillis(x string) string {
	return `CAST(round(unixepoch(` + x + `, 'subsec') * 1000) AS INTEGER)`
}

// millis returns the Unix milliseconds of a round's start, if it has a
// time key.
func (a *rowidAllocator) millis(ctx context.Context, started string) (int64, bool, error) {
	var ms sql.NullInt64
	if err := a.millis1.QueryRowContext(ctx, started).Scan(&ms); err != nil {
		return 0, false, err
	}
	if !ms.Valid || ms.Int64 < 0 || ms.Int64/1000 > maxSec {
		return 0, false, nil
	}
	return ms.Int64, true, nil
}

// next returns a free rowid for a round that starts at ms (known) or at an
// unknown time.
func (a *rowidAllocator) next(ctx context.Context, ms int64, known bool) (int64, error) {
	if known {
		lo, hi := slot(ms)
		if id, ok, err := a.nearFree(ctx, lo, min(lo+nearIDs, hi)); err != nil || ok {
			return id, err
		}
		var top int64
		a.b.lookups++
		if err := a.top.QueryRowContext(ctx, lo, hi).Scan(&top); err != nil {
			return 0, err
		}
		if top+1 < hi {
			return top + 1, nil
		}
	}
	var low int64
	a.b.lookups++
	if err := a.bottom.QueryRowContext(ctx).Scan(&low); err != nil {
		return 0, err
	}
	return low - 1, nil
}

// nearFree returns the first free rowid in [lo, hi), if there is one.
func (a *rowidAllocator) nearFree(ctx context.Context, lo, hi int64) (int64, bool, error) {
	a.b.lookups++
	rows, err := a.near.QueryContext(ctx, lo, hi)
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	var taken [nearIDs]bool
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, false, err
		}
		taken[id-lo] = true
	}
	if err := rows.Err(); err != nil {
		return 0, false, err
	}
	for id := lo; id < hi; id++ {
		if !taken[id-lo] {
			return id, true, nil
		}
	}
	return 0, false, nil
}

// SessionSeen returns where the index has a document (its path in the
// sessions folder) and how far its source was read when it was indexed
// (Session.Seen); ok is false when the index does not hold it. It is the
// question an update asks of every document, unchanged ones too, so it
// reads those two columns only.
func (x *DB) SessionSeen(ctx context.Context, id string) (doc string, seen int64, ok bool, err error) {
	defer x.damaged(&err)
	x.sessionSeenMu.Lock()
	if x.sessionSeen == nil {
		x.sessionSeen, err = x.db.PrepareContext(ctx, `SELECT doc, seen FROM sessions WHERE session_id = ?`)
	}
	stmt := x.sessionSeen
	x.sessionSeenMu.Unlock()
	if err != nil {
		return "", 0, false, err
	}
	err = stmt.QueryRowContext(ctx, id).Scan(&doc, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	return doc, seen, err == nil, err
}

// Mark is where the index has a document (its path in the sessions
// folder) and how far its source was read when it was indexed: what
// SessionSeen answers of one document.
type Mark struct {
	Doc  string
	Seen int64
}

// SessionMarks returns the Mark of every document the index holds, keyed
// by session id, in one read: an update of many documents asks it once
// rather than SessionSeen of each. Its cost grows with the index, so it
// is for updates of a good part of the store (EstimateSessions).
func (x *DB) SessionMarks(ctx context.Context) (_ map[string]Mark, err error) {
	defer x.damaged(&err)
	rows, err := x.db.QueryContext(ctx, `SELECT session_id, doc, seen FROM sessions`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	marks := make(map[string]Mark)
	for rows.Next() {
		var id string
		var doc sql.NullString
		var seen sql.NullInt64
		if err := rows.Scan(&id, &doc, &seen); err != nil {
			return nil, err
		}
		if doc.Valid && seen.Valid { // else left out: SessionSeen says what is wrong
			marks[id] = Mark{Doc: doc.String, Seen: seen.Int64}
		}
	}
	return marks, rows.Err()
}

// EstimateSessions returns at least how many documents the index holds,
// without counting them (a count reads every row): the largest row id of
// the sessions table, which a document removed does not lower.
func (x *DB) EstimateSessions(ctx context.Context) (_ int64, err error) {
	defer x.damaged(&err)
	var n sql.NullInt64
	err = x.db.QueryRowContext(ctx, `SELECT max(rowid) FROM sessions`).Scan(&n)
	return n.Int64, err
}

// Sessions returns how many documents the index holds.
func (x *DB) Sessions(ctx context.Context) (_ int, err error) {
	defer x.damaged(&err)
	var n int
	err = x.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n)
	return n, err
}

// MaxRound returns the highest round of a document in the index (0: none).
func (x *DB) MaxRound(ctx context.Context, id string) (_ int, err error) {
	defer x.damaged(&err)
	var n sql.NullInt64
	err = x.db.QueryRowContext(ctx, `SELECT max(round) FROM rounds WHERE session_id = ?`, id).Scan(&n)
	return int(n.Int64), err
}

// RoundTotals returns how many rounds the index holds of a document, the
// highest, and the sum of their tokens, without reading them one by one
// into memory (a session of a million lines has half a million).
func (x *DB) RoundTotals(ctx context.Context, id string) (rounds, last int, tokens int64, err error) {
	defer x.damaged(&err)
	var l, t sql.NullInt64
	err = x.db.QueryRowContext(ctx, `SELECT count(*), max(round), sum(token_count) FROM rounds WHERE session_id = ?`, id).Scan(&rounds, &l, &t)
	return rounds, int(l.Int64), t.Int64, err
}

// Rounds returns a document's rounds from round `from` on, in order.
func (x *DB) Rounds(ctx context.Context, id string, from int) ([]Row, error) {
	return x.RoundsBetween(ctx, id, from, math.MaxInt64)
}

// RoundsBetween returns a document's rounds from round `from` to round
// `to`, both included, in order.
func (x *DB) RoundsBetween(ctx context.Context, id string, from, to int) (_ []Row, err error) {
	defer x.damaged(&err)
	rows, err := x.db.QueryContext(ctx, `SELECT session_id, round, started, engagement_id, user_preview, agent_preview,
		tool_count, thinking_count, thinking_chars, token_count, round_file FROM rounds WHERE session_id = ? AND round >= ? AND round <= ? ORDER BY round`, id, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var tag sql.NullString
		if err := rows.Scan(&r.SessionID, &r.Round, &r.Started, &tag, &r.UserPreview, &r.AgentPreview,
			&r.ToolCount, &r.ThinkingCount, &r.ThinkingChars, &r.TokenCount, &r.RoundFile); err != nil {
			return nil, err
		}
		if tag.Valid {
			r.EngagementID = &tag.String
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RoundTags returns the engagement each tagged round of a document is
// tagged with, reading only those rows' round and tag: a repair recovering
// lost tags read every row, previews and all (18 MB of a session of
// 100,000 tiny lines, twice).
func (x *DB) RoundTags(ctx context.Context, id string) (_ map[int]string, err error) {
	defer x.damaged(&err)
	rows, err := x.db.QueryContext(ctx, `SELECT round, engagement_id FROM rounds WHERE session_id = ? AND engagement_id IS NOT NULL`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var r int
		var tag string
		if err := rows.Scan(&r, &tag); err != nil {
			return nil, err
		}
		out[r] = tag
	}
	return out, rows.Err()
}

// SetEngagement tags (or, with a nil engagement, untags) rounds of a
// document. It returns how many rows it changed.
func (x *DB) SetEngagement(ctx context.Context, id string, rounds []int, engagement *string) (_ int, err error) {
	defer x.damaged(&err)
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	for _, r := range rounds {
		res, err := tx.ExecContext(ctx, `UPDATE rounds SET engagement_id = ? WHERE session_id = ? AND round = ? AND engagement_id IS NOT ?`, engagement, id, r, engagement)
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	x.wrote.Store(true)
	return n, tx.Commit()
}

// Query is a search.
type Query struct {
	// Text is what to look for. Each of its words (what lies between
	// spaces) must be in the round, its letters and digits in the same
	// order with nothing but spaces and punctuation between them, in any
	// case: hello.py finds "hello.py" and "Hello py", foo-bar finds
	// "foo_bar". A word that ends in * finds the words that start with it:
	// hel* finds "hello". Punctuation on its own separates words, and
	// nothing else: a query of punctuation alone is a *QueryError.
	Text string
	// Raw says Text is an FTS5 query, with its operators, phrases, column
	// filters and parentheses (https://sqlite.org/fts5.html#full_text_query_syntax);
	// one SQLite cannot read is a *QueryError.
	Raw        bool
	Agent      string
	Project    string // a substring of the project directory
	Engagement string
	// Since and Until bound the round's start: Since inclusive, Until
	// exclusive; a zero time does not bound it. They are compared as
	// instants, whatever offset the round's stamp was written with (a
	// stamp without one is UTC), to the millisecond.
	Since, Until time.Time
	Limit        int // at most this many hits; 0 or less: 20
	// In says which texts of a round to search: its prompt, its
	// replies (and thinking), its tools (calls and results); 0 is all.
	In Texts
}

// Texts is a set of the texts of a round that search looks in.
type Texts uint8

const (
	Prompts Texts = 1 << iota // the person's prompt
	Replies                   // the agent's replies and thinking
	Tools                     // the tool calls' inputs and results
)

// The texts of a round, in their order in text_fts.
const (
	colPrompt = iota
	colReply
	colTools
	nCols
)

// columnNames are the texts' columns in rounds and text_fts; textNames
// what a person calls them (ParseTexts, Hit.In).
var (
	columnNames = [nCols]string{"prompt", "reply", "tools"}
	textNames   = [nCols]string{"prompts", "replies", "tools"}
)

// ParseTexts reads a comma list of "prompts", "replies" and "tools" (or
// their singulars).
func ParseTexts(s string) (Texts, error) {
	var t Texts
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case "prompts", "prompt":
			t |= Prompts
		case "replies", "reply":
			t |= Replies
		case "tools", "tool":
			t |= Tools
		default:
			return 0, fmt.Errorf("%q is not a text of a round: say prompts, replies or tools (or several, with commas)", f)
		}
	}
	return t, nil
}

// String is the comma list ParseTexts reads.
func (t Texts) String() string {
	var names []string
	for col := 0; col < nCols; col++ {
		if t.has(col) {
			names = append(names, textNames[col])
		}
	}
	return strings.Join(names, ",")
}

func (t Texts) orAll() Texts {
	if t &= Prompts | Replies | Tools; t == 0 {
		return Prompts | Replies | Tools
	}
	return t
}

func (t Texts) has(col int) bool { return t&(1<<col) != 0 }

// first is the first of t's texts.
func (t Texts) first() int {
	for col := 0; col < nCols; col++ {
		if t.has(col) {
			return col
		}
	}
	return 0
}

// columns is the FTS5 column filter of t's texts.
func (t Texts) columns() string {
	var names []string
	for col := 0; col < nCols; col++ {
		if t.has(col) {
			names = append(names, columnNames[col])
		}
	}
	return "{" + strings.Join(names, " ") + "}"
}

// Hit is one round a search found.
type Hit struct {
	SessionID    string  `json:"session_id"`
	AgentID      string  `json:"agent_id"`
	Title        string  `json:"title"`
	Project      string  `json:"project"`
	Round        int     `json:"round"`
	Started      string  `json:"started"`
	EngagementID *string `json:"engagement_id"`
	Snippet      string  `json:"snippet"`
	In           string  `json:"in"` // the text the snippet is of: prompts, replies or tools
	Doc          string  `json:"doc"`
	Rank         float64 `json:"rank"`
}

// FilterError is a search whose filter names what the index has never
// seen: an agent or an engagement no round has, or a project no session's
// directory contains. The search found nothing.
type FilterError struct {
	Filter string   // "agent", "project" or "engagement"
	Value  string   // as given
	Known  []string // what the index has, sorted
}

func (e *FilterError) Error() string {
	known := strings.Join(e.Known, ", ")
	if known == "" {
		known = "none"
	}
	return fmt.Sprintf("no %s %q in the index (it has %s)", e.Filter, e.Value, known)
}

// Highlight marks the matched words in a hit's snippet.
const (
	HighlightStart = "\x02"
	HighlightEnd   = "\x03"
)

// stampLayout is how a time is written in messages: as a round's start,
// to the millisecond.
const stampLayout = "2006-01-02T15:04:05.000Z"

// unknownFilter returns a *FilterError for the first filter of q that
// names what the index does not have, else nil.
func unknownFilter(ctx context.Context, tx *sql.Tx, q Query) error {
	for _, f := range []struct {
		name, value, exists, known string
	}{
		{"agent", q.Agent, `SELECT 1 FROM sessions WHERE agent_id = ?`, agentsSQL},
		{"project", q.Project, `SELECT 1 FROM sessions WHERE instr(project, ?) > 0`, projectsSQL},
		{"engagement", q.Engagement, `SELECT 1 FROM rounds WHERE engagement_id = ?`, engagementsSQL},
	} {
		if f.value == "" {
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, f.exists+` LIMIT 1`, f.value).Scan(&one)
		if err == nil {
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		known, err := column[string](ctx, tx, f.known)
		if err != nil {
			return err
		}
		return &FilterError{Filter: f.name, Value: f.value, Known: known}
	}
	return nil
}

const (
	agentsSQL      = `SELECT DISTINCT agent_id FROM sessions WHERE agent_id != '' ORDER BY 1`
	projectsSQL    = `SELECT DISTINCT project FROM sessions WHERE project != '' ORDER BY 1`
	engagementsSQL = `SELECT DISTINCT engagement_id FROM rounds WHERE engagement_id IS NOT NULL ORDER BY 1`
)

// Agents returns the agent ids of the index's sessions, sorted.
func (x *DB) Agents(ctx context.Context) ([]string, error) {
	return column[string](ctx, x.db, agentsSQL)
}

// Projects returns the project directories of the index's sessions, sorted.
func (x *DB) Projects(ctx context.Context) ([]string, error) {
	return column[string](ctx, x.db, projectsSQL)
}

// Engagements returns the engagements the index's rounds are tagged with,
// sorted.
func (x *DB) Engagements(ctx context.Context) ([]string, error) {
	return column[string](ctx, x.db, engagementsSQL)
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// column returns the values a query of one column gives.
func column[T any](ctx context.Context, db querier, query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Dump returns every row of the index in a canonical text form, and checks
// that the full-text tables agree with the rounds table. Two indexes with
// the same dump hold the same data.
func (x *DB) Dump(ctx context.Context) (_ string, err error) {
	defer x.damaged(&err)
	var sb strings.Builder
	for _, t := range []string{"rounds_fts", "text_fts", "pairs_fts"} {
		if _, err := x.db.ExecContext(ctx, `INSERT INTO `+t+`(`+t+`) VALUES('integrity-check')`); err != nil {
			return "", fmt.Errorf("%s: %s is out of step with rounds: %w", x.path, t, err)
		}
	}
	for _, q := range []string{
		`SELECT session_id, agent_id, title, project, started, ended, doc, seen FROM sessions ORDER BY session_id`,
		`SELECT session_id, round, started, engagement_id, user_preview, agent_preview, tool_count, thinking_count,
			thinking_chars, token_count, round_file, prompt, reply, tools FROM rounds ORDER BY session_id, round`,
	} {
		rows, err := x.db.QueryContext(ctx, q)
		if err != nil {
			return "", err
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			for i, v := range vals {
				if i > 0 {
					sb.WriteByte('\t')
				}
				fmt.Fprintf(&sb, "%q", fmt.Sprint(v))
			}
			sb.WriteByte('\n')
		}
		rows.Close()
	}
	return sb.String(), nil
}
